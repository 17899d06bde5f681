/*
 * djava: the launching node's side of its program's remote threads. One
 * daemon thread, in the system thread group so that it stays on this node,
 * takes the thread manager's events: console output of remote threads goes
 * to this console, requests for class files and resources are answered from
 * this JVM's class path, System.exit on another node ends this JVM with its
 * status, and a failed program ends it with the reason.
 */
package djava.runtime;

import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

public final class Launcher {
    private Launcher() {}

    /** Called by the VM once it joined the cluster as a program's launcher. */
    static void start() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread pump = new Thread(root, Launcher::pump, "djava events", 0, false);
        pump.setDaemon(true);
        pump.start();
    }

    private static void pump() {
        while (true) {
            Event e = Node.nextEvent(1000);
            if (e == null) {
                continue;  // a timeout, or this VM is leaving the cluster
            }
            switch (e.kind) {
                case Event.CONSOLE:
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

    // The program cannot go on: its heap may have lost data. Say so and end
    // without running its shutdown hooks, which could wait for that data.
    private static void fail(String why) {
        System.out.flush();
        System.err.println("djava: " + why);
        System.err.flush();
        Runtime.getRuntime().halt(1);
    }
}
