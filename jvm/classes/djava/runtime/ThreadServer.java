/*
 * djava: a thread server, the per-workstation daemon (build/bin/thread-server
 * starts it). The VM, started with -XX:+DistributedJava
 * -XX:DjavaThreadServer=N, has registered with the thread manager for N
 * threads; this loop runs the threads the manager assigns, each program in
 * its own class loader, and forgets a program when the manager says it
 * ended. It runs until SIGTERM or until the cluster is gone.
 */
package djava.runtime;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class ThreadServer {
    private ThreadServer() {}

    private static final class Program {
        final long id;
        final ProgramLoader loader;
        // The program's threads started here. Their thread groups are the
        // program's own (shared objects), which list them wherever they run.
        final List<Thread> threads = new ArrayList<>();

        Program(long id) {
            this.id = id;
            this.loader = new ProgramLoader(id);
        }
    }

    private static final Map<Long, Program> programs = new HashMap<>();

    public static void main(String[] args) {
        if (!Node.isMember() || !Node.isThreadServer()) {
            System.err.println("thread-server: start this VM with -XX:+DistributedJava "
                    + "-XX:DjavaCluster=host:port -XX:DjavaThreadServer=N (build/bin/thread-server does)");
            System.exit(2);
        }
        ConsoleRouter.install();
        InputRouter.install();
        StandardStreams.fix();
        startCommonPoolWithoutWorkers();
        ProgramProperties.install();
        System.err.println("thread-server " + Node.nodeName() + ": serving");
        while (true) {
            Event e = Node.nextEvent(1000);
            if (e == null) {
                continue;
            }
            switch (e.kind) {
                case Event.ASSIGN:
                    run(programs.computeIfAbsent(e.program, id -> register(id, e.processors)), e);
                    break;
                case Event.STATISTICS_REQUEST:
                    Node.answerStatistics(e.requestId, e.program);
                    break;
                case Event.UNPARK:
                    Node.unpark(e.thread, e.status != 0);
                    break;
                case Event.STATE_QUERY:
                    Node.answerThreadState(e.requestId, e.replyTo, e.thread, e.status != 0);
                    break;
                case Event.DROP_PROGRAM:
                    drop(e.program);
                    break;
                case Event.DISCONNECTED:
                    System.err.println("thread-server " + Node.nodeName() + ": the cluster is gone: " + e.detail);
                    System.exit(1);
                    return;
                case Event.ERROR:
                    System.err.println("thread-server " + Node.nodeName() + ": " + e.detail);
                    break;
                case Event.STATE:
                    // A thread started here that never ran elsewhere: its
                    // joiners here are woken (the launcher reports it).
                    if (e.state == Event.THREAD_ENDED || e.state == Event.THREAD_ENDED_BY_EXCEPTION) {
                        if (e.detail != null && !e.detail.isEmpty()) {
                            Node.settleEnded(e.thread, e.detail);
                        }
                    }
                    break;
                default:
                    break;
            }
        }
    }

    /**
     * The JDK's statics are this node's, shared by every program it runs, so
     * its ForkJoin common pool is too: a worker of it could not belong to one
     * program, and a program's thread that started one would ship it to
     * another node, away from this pool. So the pool has no workers, as
     * java's has on a uniprocessor: CompletableFuture's default executor then
     * starts a thread per task (placed by the thread manager like any
     * other), and fork/join and parallel-stream tasks run in the threads that
     * join them. A program's common pool with workers is its launcher's
     * (docs/THREAD-MANAGER.md, Sizing).
     */
    private static void startCommonPoolWithoutWorkers() {
        String key = "java.util.concurrent.ForkJoinPool.common.parallelism";
        String given = System.getProperty(key);
        System.setProperty(key, "0");
        try {
            java.util.concurrent.ForkJoinPool.commonPool();
            java.util.concurrent.CompletableFuture.completedFuture(null);
        } finally {
            if (given == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, given);
            }
        }
    }

    private static Program register(long id, int processors) {
        Program p = new Program(id);
        Node.registerProgram(id, p.loader, processors);
        try {
            ModuleOptions.apply(id, p.loader, ProgramProperties.addProgram(id,
                    Node.fetchResource(id, ProgramProperties.RESOURCE, Node.RESOURCE_TIMEOUT_MS)));
        } catch (java.io.IOException e) {
            // The program still runs, with this node's properties; say so.
            System.err.println("thread-server " + Node.nodeName() + ": the system properties of program "
                    + Long.toUnsignedString(id) + ": " + e.getMessage());
            try {
                ProgramProperties.addProgram(id, null);
            } catch (java.io.IOException impossible) {
                throw new AssertionError(impossible);
            }
        }
        return p;
    }

    private static void run(Program p, Event e) {
        try {
            Thread t = (Thread) Node.attach(e.thread);
            Node.startThread(t, p.loader, e.inheritedLocals);
            p.threads.removeIf(old -> old.getState() == Thread.State.TERMINATED);
            p.threads.add(t);
        } catch (Throwable t) {
            String why = "cannot start thread " + Long.toHexString(e.thread) + " of program "
                    + Long.toUnsignedString(p.id) + " on " + Node.nodeName() + ": " + t;
            System.err.println("thread-server: " + why);
            Node.threadFailed(p.id, e.thread, why);
        }
    }

    /** Resource names under which a launcher answers with the id of its common pool, its defaults. */
    static final String COMMON_POOL_RESOURCE = "djava:common-pool";
    static final String DEFAULTS_RESOURCE = "djava:program-defaults";
    static final String DELAYER_RESOURCE = "djava:delayer";

    /**
     * The ForkJoin common pool of a program with threads here: its
     * launcher's, as a shared object. Called by the VM when a thread of the
     * program first asks for it (java.util.concurrent.ProgramCommonPool);
     * the VM keeps the answer until the program ends (dso/dsoProgramValues).
     */
    static java.util.concurrent.ForkJoinPool fetchCommonPool(long program) {
        return (java.util.concurrent.ForkJoinPool) fetchShared(program, COMMON_POOL_RESOURCE, "the common pool");
    }

    /** The same for the program's CompletableFuture delay scheduler. */
    static java.util.concurrent.ScheduledThreadPoolExecutor fetchDelayer(long program) {
        return (java.util.concurrent.ScheduledThreadPoolExecutor) fetchShared(program, DELAYER_RESOURCE,
                "the delay scheduler");
    }

    /** The same for the program's default locales and time zone (java.util.ProgramDefaults). */
    static Object fetchDefaults(long program) {
        return fetchShared(program, DEFAULTS_RESOURCE, "the default locale and time zone");
    }

    private static Object fetchShared(long program, String resource, String what) {
        try {
            byte[] id = Node.fetchResource(program, resource, Node.RESOURCE_TIMEOUT_MS);
            if (id == null || id.length != Long.BYTES) {
                throw new java.io.IOException("the launcher's answer has " + (id == null ? "no" : id.length)
                        + " bytes, not an object's id");
            }
            return Node.attach(java.nio.ByteBuffer.wrap(id).getLong());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("djava: cannot get " + what + " of program "
                    + Long.toUnsignedString(program) + " from its launcher on " + Node.nodeName(), e);
        }
    }

    private static void drop(long id) {
        Program p = programs.remove(id);
        Node.endProgram(id);
        if (p == null) {
            // None of its threads ran here, but its objects may have come all
            // the same (sent along with an object a thread here read, moved
            // with a lock taken here): they go with it.
            System.err.println("thread-server " + Node.nodeName() + ": program " + Long.toUnsignedString(id)
                    + " ended: " + Node.dropProgram(id));
            return;
        }
        // The program ended: its threads here must not go on (a sleeping or
        // parked one wakes up to a ThreadDeath; one blocked in the cluster
        // has its call failed by the services already). Not Thread.stop: it
        // reads the Thread's shared fields, which may have gone with a
        // killed launcher, and asks the program's security manager.
        for (Thread t : p.threads) {
            try {
                Node.stopThread(t);
            } catch (Throwable x) {
                // This server must go on serving the others.
                System.err.println("thread-server " + Node.nodeName() + ": cannot stop a thread of program "
                        + Long.toUnsignedString(id) + ": " + x);
            }
        }
        System.err.println("thread-server " + Node.nodeName() + ": program " + Long.toUnsignedString(id)
                + " ended: " + Node.dropProgram(id));
        ProgramProperties.dropProgram(id);
        ProgramGlobals.programEnded(p.loader, programs.isEmpty());  // never throws
    }
}
