/*
 * djava: a program's classes on a thread server, fetched from the program's
 * launching JVM through the thread manager (no shared file system). Its
 * parent is the platform class loader, so the JDK's classes are this
 * node's own.
 */
package djava.runtime;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

final class ProgramLoader extends ClassLoader {
    static {
        registerAsParallelCapable();
    }

    private final long program;

    ProgramLoader(long program) {
        // Unnamed, so that stack traces print as java prints them for the
        // application class loader ("at Foo.run(Foo.java:12)").
        super(ClassLoader.getPlatformClassLoader());
        this.program = program;
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        byte[] bytes;
        try {
            bytes = Node.fetchResource(program, name.replace('.', '/') + ".class",
                    Node.RESOURCE_TIMEOUT_MS);
        } catch (IOException e) {
            throw new ClassNotFoundException(name, e);
        }
        if (bytes == null) {
            throw new ClassNotFoundException(name);
        }
        return defineClass(name, bytes, 0, bytes.length);
    }

    @Override
    public InputStream getResourceAsStream(String name) {
        InputStream local = getParent().getResourceAsStream(name);
        if (local != null) {
            return local;
        }
        try {
            byte[] bytes = Node.fetchResource(program, name, Node.RESOURCE_TIMEOUT_MS);
            return bytes == null ? null : new ByteArrayInputStream(bytes);
        } catch (IOException e) {
            return null;
        }
    }
}
