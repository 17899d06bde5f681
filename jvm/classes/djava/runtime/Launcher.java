/*
 * djava: the launching node's side of its program's remote threads. One
 * daemon thread, in the system thread group so that it stays on this node,
 * takes the thread manager's events: console output of remote threads goes
 * to this console, requests for class files and resources are answered from
 * this JVM's class path, reads of standard input from the program's threads
 * on other nodes are served from this JVM's System.in (by a thread of their
 * own: a read may wait for input), System.exit on another node ends this JVM
 * with its status, and a failed program ends it with the reason.
 */
package djava.runtime;

import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;

public final class Launcher {
    private Launcher() {}

    /**
     * Writes to this JVM's own stdout and stderr from other nodes, and their requests to hear
     * when those are written, in arrival order (ConsoleRouter).
     */
    private static final LinkedBlockingQueue<Event> standardOutput = new LinkedBlockingQueue<>();

    /** Reads of standard input from other nodes, in arrival order: {request id, bytes wanted}. */
    private static final LinkedBlockingQueue<long[]> inputReads = new LinkedBlockingQueue<>();

    /** Called by the VM once it joined the cluster as a program's launcher. */
    static void start() {
        StandardStreams.fix();
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        // In the system group: these threads stay on this node.
        Thread pump = new Thread(root, Launcher::pump, "djava events", 0, false);
        pump.setDaemon(true);
        pump.start();
        Thread input = new Thread(root, Launcher::serveInput, "djava standard input", 0, false);
        input.setDaemon(true);
        input.start();
        Thread output = new Thread(root, Launcher::serveOutput, "djava standard output", 0, false);
        output.setDaemon(true);
        output.start();
    }

    private static void pump() {
        while (true) {
            Event e = Node.nextEvent(1000);
            if (e == null) {
                continue;  // a timeout, or this VM is leaving the cluster
            }
            switch (e.kind) {
                case Event.CONSOLE:
                    if (Event.isLaunchersOwn(e.stream)) {
                        standardOutput.add(e);
                        break;
                    }
                    // System.out may be the program's own stream now, whose locks a thread
                    // elsewhere may hold: written here, not by the thread that answers the
                    // writes to the launcher's own streams, which must never wait for one.
                    PrintStream out = e.stream == Event.STREAM_ERR ? System.err : System.out;
                    out.write(e.data, 0, e.data.length);
                    out.flush();
                    break;
                case Event.RESOURCE_REQUEST:
                    answer(e);
                    break;
                case Event.UNPARK:
                    Node.unpark(e.thread, e.status != 0);
                    break;
                case Event.STATE_QUERY:
                    Node.answerThreadState(e.requestId, e.replyTo, e.thread, e.status != 0);
                    break;
                case Event.EXIT:
                    System.out.flush();
                    Runtime.getRuntime().exit(e.status);
                    return;
                case Event.PROGRAM_FAILED:
                    fail("the program failed: " + e.detail);
                    return;
                case Event.DISCONNECTED:
                    fail("lost the cluster: " + e.detail);
                    return;
                case Event.ERROR:
                    System.err.println("djava: the thread manager: " + e.detail);
                    break;
                case Event.STATE:
                    // A thread that never ran (its server could not start
                    // it) is made dead here, and its joiners woken.
                    if (e.state == Event.THREAD_ENDED || e.state == Event.THREAD_ENDED_BY_EXCEPTION) {
                        Node.settleEnded(e.thread, e.detail);
                    }
                    break;
                default:
                    break;
            }
        }
    }

    private static void answer(Event e) {
        String name = new String(e.data, StandardCharsets.UTF_8);
        if (name.equals(ConsoleRouter.WRITTEN)) {
            standardOutput.add(e);  // answered once what came before it is written
            return;
        }
        if (name.startsWith(InputRouter.RESOURCE_PREFIX)) {
            int wanted;
            try {
                wanted = Integer.parseInt(name.substring(InputRouter.RESOURCE_PREFIX.length()));
            } catch (NumberFormatException bad) {
                wanted = -1;
            }
            if (wanted < 1 || wanted > InputRouter.MAX_READ) {
                Node.answerResource(e.requestId, null, "a read of standard input of "
                        + name.substring(InputRouter.RESOURCE_PREFIX.length()) + " bytes");
            } else {
                inputReads.add(new long[] {e.requestId, wanted});
            }
            return;
        }
        if (name.startsWith(Node.LEAVE_GROUP_PREFIX)) {
            String thread = name.substring(Node.LEAVE_GROUP_PREFIX.length());
            boolean afterWritten = thread.startsWith(Node.AFTER_WRITTEN);
            boolean left;
            try {
                left = Node.leaveGroup(Long.parseUnsignedLong(
                        afterWritten ? thread.substring(Node.AFTER_WRITTEN.length()) : thread, 16));
            } catch (NumberFormatException bad) {
                left = false;
            }
            if (left && afterWritten) {
                standardOutput.add(e);  // answered once what came before it is written
                return;
            }
            // Not found: the thread's node takes it out of its group itself.
            Node.answerResource(e.requestId, left ? new byte[0] : null, null);
            return;
        }
        if (name.startsWith(ProgramLoader.ALL_RESOURCES_PREFIX)) {
            answerAll(e.requestId, name.substring(ProgramLoader.ALL_RESOURCES_PREFIX.length()));
            return;
        }
        // A program's values a thread server's JDK has one of for every
        // program: the program's are this JVM's (dso/dsoProgramValues).
        if (name.equals(ThreadServer.COMMON_POOL_RESOURCE)) {
            answerShared(e.requestId, "common pool", java.util.concurrent.ForkJoinPool::commonPool);
            return;
        }
        if (name.equals(ThreadServer.DELAYER_RESOURCE)) {
            answerShared(e.requestId, "delay scheduler", Node::programDelayer);
            return;
        }
        if (name.equals(ThreadServer.DEFAULTS_RESOURCE)) {
            answerShared(e.requestId, "default locale and time zone", Node::programDefaults);
            return;
        }
        if (name.equals(ProgramProperties.RESOURCE)) {
            try {
                Node.answerResource(e.requestId, ProgramProperties.launcherProperties(), null);
            } catch (Throwable t) {
                Node.answerResource(e.requestId, null, "the program's system properties: " + t);
            }
            return;
        }
        try (InputStream in = ClassLoader.getSystemClassLoader().getResourceAsStream(name)) {
            Node.answerResource(e.requestId, in == null ? null : in.readAllBytes(), null);
        } catch (Throwable t) {
            Node.answerResource(e.requestId, null, "reading " + name + ": " + t);
        }
    }

    /** Answers with the id of {@code value}, shared from now on. */
    private static void answerShared(long requestId, String what, java.util.function.Supplier<Object> value) {
        try {
            long id = Node.publish(value.get());
            Node.answerResource(requestId, java.nio.ByteBuffer.allocate(Long.BYTES).putLong(id).array(), null);
        } catch (Throwable t) {
            Node.answerResource(requestId, null, "the program's " + what + ": " + t);
        }
    }

    /**
     * Every copy of a resource on this JVM's class path, for a thread server's program loader
     * (ProgramLoader.fetchAll): their count, then each one's URL here and bytes.
     */
    private static void answerAll(long requestId, String name) {
        try {
            java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
            java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
            List<java.net.URL> urls = Collections.list(ClassLoader.getSystemClassLoader().getResources(name));
            out.writeInt(urls.size());
            for (java.net.URL url : urls) {
                try (InputStream in = url.openStream()) {
                    byte[] content = in.readAllBytes();
                    out.writeUTF(url.toString());
                    out.writeInt(content.length);
                    out.write(content);
                }
            }
            out.flush();
            Node.answerResource(requestId, bytes.toByteArray(), null);
        } catch (Throwable t) {
            Node.answerResource(requestId, null, "reading every " + name + ": " + t);
        }
    }

    /**
     * Serves the reads of standard input other nodes make, one at a time, from this JVM's
     * System.in: the bytes one read of it gives (at least one), or the end (an answer of no
     * bytes), or the error it throws.
     */
    private static void serveInput() {
        while (true) {
            long[] read;
            try {
                read = inputReads.take();
            } catch (InterruptedException e) {
                continue;  // only a shutdown interrupts this thread; the VM is ending
            }
            byte[] buffer = new byte[(int) read[1]];
            try {
                int n = System.in.read(buffer, 0, buffer.length);
                Node.answerResource(read[0], n < 0 ? null : Arrays.copyOf(buffer, n), null);
            } catch (Throwable t) {
                Node.answerResource(read[0], null, "reading standard input: " + t);
            }
        }
    }

    /**
     * Writes what other nodes' threads write to this JVM's own stdout and stderr, in order, and
     * answers each request after the writes that came before it. Nothing here waits for the
     * program: those streams are this JVM's file descriptors.
     */
    private static void serveOutput() {
        while (true) {
            Event e;
            try {
                e = standardOutput.take();
            } catch (InterruptedException stop) {
                continue;  // only a shutdown interrupts this thread; the VM is ending
            }
            if (e.kind == Event.CONSOLE) {
                PrintStream out = e.stream == Event.STREAM_STDERR ? StandardStreams.ERR : StandardStreams.OUT;
                out.write(e.data, 0, e.data.length);
                out.flush();
            } else {
                Node.answerResource(e.requestId, new byte[0], null);
            }
        }
    }

    // The program cannot go on: its heap may have lost data. Say so and end
    // without running its shutdown hooks, which could wait for that data.
    private static void fail(String why) {
        System.out.flush();
        System.err.println("djava: " + why);
        System.err.flush();
        Runtime.getRuntime().halt(1);
    }
}
