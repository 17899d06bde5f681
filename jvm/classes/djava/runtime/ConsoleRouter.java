/*
 * djava: System.out and System.err of a thread server. A program's thread
 * writes to its launcher's console, line by line (each line whole, in order
 * per thread); the server's own threads write to the server's streams.
 */
package djava.runtime;

import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;

final class ConsoleRouter extends OutputStream {
    private final int stream;
    private final OutputStream local;
    private final ThreadLocal<ByteArrayOutputStream> pending =
            ThreadLocal.withInitial(ByteArrayOutputStream::new);

    private ConsoleRouter(int stream, OutputStream local) {
        this.stream = stream;
        this.local = local;
    }

    static void install() {
        System.setOut(new PrintStream(
                new ConsoleRouter(Event.STREAM_OUT, new FileOutputStream(FileDescriptor.out)), true));
        System.setErr(new PrintStream(
                new ConsoleRouter(Event.STREAM_ERR, new FileOutputStream(FileDescriptor.err)), true));
    }

    @Override
    public void write(int b) {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) {
        long program = Node.programOf(Thread.currentThread());
        if (program == 0) {
            try {
                local.write(b, off, len);
            } catch (java.io.IOException e) {
                // the server's own console is gone: nothing to tell
            }
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
            } catch (java.io.IOException e) {
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
