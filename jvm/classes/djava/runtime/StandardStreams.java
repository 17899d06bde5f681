/*
 * djava: this node's own standard streams, fixed before any program's code
 * runs here: on a launcher the VM's System.in, out and err; on a thread
 * server the launcher's stdin (InputRouter) and routers to the launcher's
 * own stdout and stderr (ConsoleRouter), which are not the server's
 * System.out and err: those print to whatever the launcher's System.out
 * and err are now.
 *
 * A program may keep one of them in a field of a shared object (a logger's
 * or a test harness's writer, Maven Surefire's event channel) and then
 * replace System.out with System.setOut, so the VM names these streams by
 * these fields, not by what System.out holds now: a node that meets the
 * launcher's stdout gets its own, wherever System.out points by then
 * (DsoNamedValues).
 */
package djava.runtime;

import java.io.FileDescriptor;
import java.io.InputStream;
import java.io.PrintStream;

final class StandardStreams {
    static final InputStream IN = System.in;
    static final PrintStream OUT = Node.isThreadServer()
            ? ConsoleRouter.stream(Event.STREAM_STDOUT, FileDescriptor.out) : System.out;
    static final PrintStream ERR = Node.isThreadServer()
            ? ConsoleRouter.stream(Event.STREAM_STDERR, FileDescriptor.err) : System.err;

    private StandardStreams() {}

    /** Fixes the streams: called once, before a program's code runs on this node. */
    static void fix() {
        // Initializing this class reads them.
    }
}
