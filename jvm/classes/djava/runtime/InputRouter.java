/*
 * djava: System.in of a thread server. A program's thread reads its
 * launcher's standard input, as under java: each read asks the launcher,
 * through the thread manager, for what the launcher's System.in gives (at
 * least one byte, or the end), so reads from every node take their bytes
 * from the one stream in the order they reach it, block while the launcher's
 * input has nothing, and end where it ends. Nothing is read ahead here: a
 * byte this node did not ask for stays for whichever thread of the program
 * asks next, as with java's one System.in. The server's own threads read
 * the server's own standard input.
 */
package djava.runtime;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;

final class InputRouter extends InputStream {
    /** The resource a read asks the launcher for, followed by the most bytes it wants. */
    static final String RESOURCE_PREFIX = "djava:stdin:";
    /** The most bytes one read asks for. */
    static final int MAX_READ = 64 * 1024;

    private final InputStream local;

    private InputRouter(InputStream local) {
        this.local = local;
    }

    static void install() {
        System.setIn(new InputRouter(new FileInputStream(FileDescriptor.in)));
    }

    @Override
    public int read() throws IOException {
        byte[] b = new byte[1];
        int n = read(b, 0, 1);
        return n < 0 ? -1 : b[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        long program = Node.programOf(Thread.currentThread());
        if (program == 0) {
            return local.read(b, off, len);
        }
        if (len == 0) {
            return 0;
        }
        // No time limit: a read of standard input waits for its bytes.
        byte[] got = Node.fetchResource(program, RESOURCE_PREFIX + Math.min(len, MAX_READ), -1);
        if (got == null) {
            return -1;  // the end of the launcher's input
        }
        System.arraycopy(got, 0, b, off, got.length);
        return got.length;
    }

    @Override
    public int available() throws IOException {
        // What the launcher holds cannot be known without asking: none here.
        return Node.programOf(Thread.currentThread()) == 0 ? local.available() : 0;
    }
}
