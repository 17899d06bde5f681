/*
 * @test
 * @summary Class objects and class initialization behave as in java on every node: threads on
 *          the thread servers lock a class literal (synchronized (C.class)) before anything
 *          used the class's statics on their node, and their updates under that lock all
 *          count; a class with no static fields runs its static initializer once cluster-wide;
 *          a class whose static initializer threw on one node is erroneous on every node
 *          (NoClassDefFoundError naming the class and the first failure, JLS 12.4.2), and its
 *          initializer never runs a second time.
 * @library /lib
 * @run main/othervm ClassInitialization
 */
import java.util.concurrent.atomic.AtomicInteger;

public class ClassInitialization {
    static final int THREADS = 4;
    static final int ROUNDS = 200;

    // Locked as a class literal by the threads before any of them reads these.
    static int outerCount;

    static final class Box {
        static int n;
    }

    /** No static field: its initializer's one effect is elsewhere. */
    static final class NoFields {
        static {
            NO_FIELD_INITS.incrementAndGet();
        }

        static void touch() {
        }
    }

    static final AtomicInteger NO_FIELD_INITS = new AtomicInteger();
    static final AtomicInteger BAD_RUNS = new AtomicInteger();

    static final class Bad {
        static final int VALUE;

        static {
            BAD_RUNS.incrementAndGet();
            VALUE = Integer.parseInt("not a number");
        }
    }

    static final long[] pids = new long[2];
    static final Throwable[] thrown = new Throwable[3];

    static Throwable useBad() {
        try {
            return new AssertionError("Bad initialized, VALUE " + Bad.VALUE);
        } catch (Throwable t) {
            return t;
        }
    }

    public static void main(String[] args) throws Exception {
        Checks c = new Checks("ClassInitialization");

        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            threads[t] = new Thread(() -> {
                for (int i = 0; i < ROUNDS; i++) {
                    synchronized (ClassInitialization.class) {
                        outerCount++;
                    }
                    synchronized (Box.class) {
                        Box.n++;
                    }
                    NoFields.touch();
                }
            }, "class-lock-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);
        c.equal("outerCount (incremented under synchronized (ClassInitialization.class))",
                outerCount, THREADS * ROUNDS);
        c.equal("Box.n (incremented under synchronized (Box.class))", Box.n, THREADS * ROUNDS);
        NoFields.touch();
        c.equal("NoFields' static initializer runs", NO_FIELD_INITS.get(), 1);

        // The first use fails on a thread server; main (another node) uses the class next.
        Thread first = new Thread(() -> {
            pids[0] = ProcessHandle.current().pid();
            thrown[0] = useBad();
        }, "bad-first");
        first.start();
        first.join();
        pids[1] = ProcessHandle.current().pid();
        if (Integer.getInteger("djava.test.threadServers", 0) > 0) {
            c.check(pids[0] != pids[1], "the first use (pid " + pids[0] + ") and main's (pid "
                    + pids[1] + ") ran on different nodes");
        }
        thrown[1] = useBad();
        Thread third = new Thread(() -> thrown[2] = useBad(), "bad-third");
        third.start();
        third.join();

        c.check(thrown[0] instanceof ExceptionInInitializerError
                        && thrown[0].getCause() instanceof NumberFormatException,
                "the first use throws ExceptionInInitializerError caused by the "
                        + "NumberFormatException, got " + thrown[0]);
        String name = Bad.class.getName();
        for (int i = 1; i < 3; i++) {
            Throwable t = thrown[i];
            c.check(t instanceof NoClassDefFoundError
                            && ("Could not initialize class " + name).equals(t.getMessage()),
                    "use " + (i + 1) + " throws NoClassDefFoundError: Could not initialize class "
                            + name + ", got " + t);
            Throwable cause = t == null ? null : t.getCause();
            c.check(cause instanceof ExceptionInInitializerError && cause.getMessage() != null
                            && cause.getMessage().contains("java.lang.NumberFormatException")
                            && cause.getMessage().contains("[in thread \"bad-first\"]"),
                    "use " + (i + 1) + "'s cause names the first failure, got " + cause);
        }
        c.equal("Bad's static initializer runs", BAD_RUNS.get(), 1);
        c.done();
    }
}
