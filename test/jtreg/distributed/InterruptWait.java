/*
 * @test
 * @summary interrupt() of a thread (on a thread server) blocked in wait() on a shared object
 *          makes wait throw InterruptedException with the interrupt status cleared, within
 *          bounded time; so does an interrupt of a thread that waits on an object of its own
 *          node, which the interrupt reaches through the thread's shared Thread; a thread
 *          interrupted before it calls wait() gets the exception at once.
 * @library /lib
 * @run main/othervm InterruptWait
 */
public class InterruptWait {
    static final long LIMIT_MS = 20_000;

    static final class Lock {
        boolean released;
    }

    /** Waits on the lock until notified with released set, interrupted, or 30 s pass. */
    static final class Waiter extends Thread {
        final Lock lock;
        final boolean interruptFirst;
        volatile boolean waiting;
        volatile boolean go;
        boolean interruptedBeforeWait;
        String outcome = "none";
        boolean statusAfterCatch = true;
        long caughtAtNanos;
        long garbage;

        /** lock null: the thread waits on a lock it makes, an object of its own node. */
        Waiter(Lock lock, boolean interruptFirst, String name) {
            super(name);
            this.lock = lock;
            this.interruptFirst = interruptFirst;
        }

        @Override
        public void run() {
            garbage += Churn.garbage(20000);
            long deadline = System.nanoTime() + LIMIT_MS * 1_000_000;
            if (interruptFirst) {
                waiting = true;
                while (!go) {
                    if (System.nanoTime() > deadline) {
                        outcome = "never saw go";
                        return;
                    }
                    Thread.onSpinWait();
                }
                interruptedBeforeWait = Thread.currentThread().isInterrupted();
            }
            Lock lock = this.lock != null ? this.lock : new Lock();
            synchronized (lock) {
                waiting = true;
                try {
                    while (!lock.released) {
                        long left = (deadline - System.nanoTime()) / 1_000_000;
                        if (left <= 0) {
                            outcome = "wait was not interrupted within " + LIMIT_MS + " ms";
                            return;
                        }
                        lock.wait(left);
                    }
                    outcome = "released without interrupt";
                } catch (InterruptedException e) {
                    caughtAtNanos = System.nanoTime();
                    statusAfterCatch = Thread.currentThread().isInterrupted();
                    outcome = "interrupted";
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Checks c = new Checks("InterruptWait");

        // Interrupted while blocked in wait().
        Lock lock = new Lock();
        Waiter w = new Waiter(lock, false, "waiter");
        w.start();
        long deadline = System.nanoTime() + LIMIT_MS * 1_000_000;
        while (!w.waiting && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        // The waiter set waiting while holding the lock: once main gets the lock, the waiter
        // is in wait() (or spuriously woken and about to wait again).
        synchronized (lock) {
            c.check(w.waiting, "waiter never reached wait()");
        }
        Thread.sleep(300);
        long interruptedAt = System.nanoTime();
        w.interrupt();
        w.join(LIMIT_MS + 10_000);
        c.check(!w.isAlive(), "waiter still alive " + (LIMIT_MS + 10_000) + " ms after interrupt()");
        c.equal("waiter outcome", w.outcome, "interrupted");
        c.check(!w.statusAfterCatch, "waiter's interrupt status still set after catching InterruptedException");
        if ("interrupted".equals(w.outcome)) {
            long ms = (w.caughtAtNanos - interruptedAt) / 1_000_000;
            System.out.println("wait() ended by interrupt after about " + ms + " ms");
            c.check(ms < LIMIT_MS, "the interrupt took " + ms + " ms to end wait()");
        }

        // Interrupted while waiting on an object only its own node has.
        Waiter local = new Waiter(null, false, "local-waiter");
        local.start();
        deadline = System.nanoTime() + LIMIT_MS * 1_000_000;
        while (!local.waiting && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        Thread.sleep(300);
        local.interrupt();
        local.join(LIMIT_MS + 10_000);
        c.check(!local.isAlive(), "local-waiter still alive " + (LIMIT_MS + 10_000) + " ms later");
        c.equal("local-waiter outcome", local.outcome, "interrupted");
        c.check(!local.statusAfterCatch, "local-waiter's interrupt status still set after the exception");

        // Interrupted before calling wait(): wait() throws at once.
        Lock lock2 = new Lock();
        Waiter early = new Waiter(lock2, true, "early-waiter");
        early.start();
        deadline = System.nanoTime() + LIMIT_MS * 1_000_000;
        while (!early.waiting && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        early.interrupt();
        early.go = true;
        early.join(LIMIT_MS + 10_000);
        c.check(!early.isAlive(), "early-waiter still alive " + (LIMIT_MS + 10_000) + " ms later");
        c.check(early.interruptedBeforeWait, "early-waiter did not see its interrupt status before wait()");
        c.equal("early-waiter outcome", early.outcome, "interrupted");
        c.check(!early.statusAfterCatch, "early-waiter's interrupt status still set after the exception");
        c.done();
    }
}
