import java.util.ArrayList;
import java.util.List;

/**
 * Bounded joins: a thread that never ends fails the test with its name well before jtreg's
 * own timeout, instead of a timeout whose thread dump shows only the launcher's side.
 */
public final class Threads {
    /** How long {@link #joinAll(Thread...)} waits for all the threads together. */
    public static final long JOIN_SECONDS = 60;

    private Threads() {
    }

    /**
     * A thread that stays on this node: under djava, threads of the system thread group are the
     * node's own and are never shipped (plain java: an ordinary thread of that group).
     */
    public static Thread onThisNode(Runnable body, String name) {
        ThreadGroup system = Thread.currentThread().getThreadGroup();
        while (system.getParent() != null) {
            system = system.getParent();
        }
        return new Thread(system, body, name);
    }

    public static void startAll(Thread... threads) {
        for (Thread t : threads) {
            t.start();
        }
    }

    public static void joinAll(Thread... threads) throws InterruptedException {
        joinAll(JOIN_SECONDS, threads);
    }

    /** Joins every thread within {@code seconds} in all; fails naming those still alive. */
    public static void joinAll(long seconds, Thread... threads) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        for (Thread t : threads) {
            long leftMillis = (deadline - System.nanoTime()) / 1_000_000;
            if (leftMillis <= 0) {
                break;
            }
            t.join(leftMillis);
        }
        List<String> alive = new ArrayList<>();
        for (Thread t : threads) {
            if (t.isAlive()) {
                alive.add(t.getName());
            }
        }
        if (!alive.isEmpty()) {
            throw new AssertionError("thread(s) " + alive + " of " + threads.length + " still alive "
                    + seconds + " s after the joins began: they hang, or never ran");
        }
    }
}
