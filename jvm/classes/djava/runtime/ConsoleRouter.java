/*
 * djava: the launcher's console on a thread server. A program's thread
 * writes to its launcher's console, line by line (each line whole, in order
 * per thread); the server's own threads write to the server's streams.
 *
 * Two kinds: System.out and System.err here stand for the program's, so
 * they print to whatever the launcher's System.out and err are now (a
 * program that called System.setOut there captures its threads' output
 * everywhere, as on java). StandardStreams' streams here stand for the
 * launcher's own stdout and stderr, which a program may have kept in a
 * field before replacing System.out (a test harness's event channel): they
 * print there, and a write returns only once the launcher wrote it, so
 * that bytes a thread here writes to a stream it shares with the launcher's
 * threads (under the stream's lock) keep their order with theirs.
 */
package djava.runtime;

import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Arrays;

final class ConsoleRouter extends OutputStream {
    /** The resource whose answer says the launcher wrote what this node sent before asking. */
    static final String WRITTEN = "djava:console-written";

    private final int stream;
    private final OutputStream local;
    private final ThreadLocal<ByteArrayOutputStream> pending =
            ThreadLocal.withInitial(ByteArrayOutputStream::new);

    private ConsoleRouter(int stream, OutputStream local) {
        this.stream = stream;
        this.local = local;
    }

    static void install() {
        System.setOut(stream(Event.STREAM_OUT, FileDescriptor.out));
        System.setErr(stream(Event.STREAM_ERR, FileDescriptor.err));
    }

    /** A stream to the launcher's console: stream is one of Event's STREAM_ kinds. */
    static PrintStream stream(int stream, FileDescriptor local) {
        return new PrintStream(new ConsoleRouter(stream, new FileOutputStream(local)), true);
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        long program = Node.programOf(Thread.currentThread());
        if (program == 0) {
            try {
                local.write(b, off, len);
            } catch (IOException e) {
                // the server's own console is gone: nothing to tell
            }
            return;
        }
        if (Event.isLaunchersOwn(stream)) {
            // Written as it comes, in the order of the stream's writers, and returns once the
            // launcher wrote it: the manager relays one node's console output and requests in
            // the order sent, and the launcher writes the output before it answers what came
            // after. Copied first: b may be a shared array (a BufferedOutputStream's), which
            // only Java code reads coherently.
            byte[] bytes = Arrays.copyOfRange(b, off, off + len);
            Node.console(program, Thread.currentThread().getId(), stream, bytes, 0, len);
            Node.fetchResource(program, WRITTEN, -1);
            return;
        }
        ByteArrayOutputStream line = pending.get();
        for (int i = off; i < off + len; i++) {
            line.write(b[i]);
            if (b[i] == '\n') {
                send(program, line);
            }
        }
    }

    @Override
    public void flush() {
        long program = Node.programOf(Thread.currentThread());
        if (program == 0) {
            try {
                local.flush();
            } catch (IOException e) {
                // as above
            }
            return;
        }
        ByteArrayOutputStream line = pending.get();
        if (line.size() > 0) {
            send(program, line);
        }
    }

    private void send(long program, ByteArrayOutputStream line) {
        byte[] bytes = line.toByteArray();
        line.reset();
        Node.console(program, Thread.currentThread().getId(), stream, bytes, 0, bytes.length);
    }
}
