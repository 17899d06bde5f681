/*
 * djava: a program's classes on a thread server, fetched from the program's
 * launching JVM through the thread manager (no shared file system). Its
 * parent is the platform class loader, so the JDK's classes are this
 * node's own.
 *
 * Resources come from the launcher's class path too, as URLs of the scheme
 * djava-program whose bytes were fetched with them: getResource,
 * getResources (every class path entry's copy, in the launcher's order: what
 * ServiceLoader reads to find a service's providers) and
 * getResourceAsStream answer as the application class loader does there.
 */
package djava.runtime;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLConnection;
import java.net.URLStreamHandler;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

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

    /** Resource requests for every copy of a name: the name follows. */
    static final String ALL_RESOURCES_PREFIX = "djava:resources:";

    @Override
    protected URL findResource(String name) {
        // The first copy only: the bytes getResourceAsStream fetches.
        try {
            byte[] bytes = Node.fetchResource(program, name, Node.RESOURCE_TIMEOUT_MS);
            return bytes == null ? null : url(name, "", bytes);
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    protected Enumeration<URL> findResources(String name) throws IOException {
        return Collections.enumeration(fetchAll(name));
    }

    /** Every copy of resource {@code name} on the launcher's class path, as URLs here. */
    private List<URL> fetchAll(String name) throws IOException {
        byte[] answer = Node.fetchResource(program, ALL_RESOURCES_PREFIX + name,
                Node.RESOURCE_TIMEOUT_MS);
        List<URL> urls = new ArrayList<>();
        if (answer == null) {
            return urls;
        }
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(answer));
        int count = in.readInt();
        for (int i = 0; i < count; i++) {
            String where = in.readUTF();
            byte[] bytes = new byte[in.readInt()];
            in.readFully(bytes);
            urls.add(url(name, where, bytes));
        }
        return urls;
    }

    /**
     * A URL whose connection reads bytes: djava-program:/NAME#WHERE (where: the copy's URL on the
     * launcher, or empty for the first copy).
     */
    private URL url(String name, String where, byte[] bytes) throws MalformedURLException {
        URLStreamHandler handler = new URLStreamHandler() {
            @Override
            protected URLConnection openConnection(URL u) {
                return new URLConnection(u) {
                    @Override
                    public void connect() {
                        connected = true;
                    }

                    @Override
                    public InputStream getInputStream() {
                        return new ByteArrayInputStream(bytes);
                    }

                    @Override
                    public int getContentLength() {
                        return bytes.length;
                    }
                };
            }
        };
        return new URL("djava-program", "", -1, "/" + name + "#" + where, handler);
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
