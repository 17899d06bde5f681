/*
 * @test
 * @summary LockSupport.getBlocker of a thread that runs on another node gives what it parked
 *          on (a program object, a class literal, a ReentrantLock's synchronizer), and null
 *          once it no longer parks; LockSupport.park(blocker) and unpark work across nodes.
 * @library /lib
 * @run main/othervm ParkBlockerAcrossNodes
 */
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

public class ParkBlockerAcrossNodes {
    static final Checks checks = new Checks("ParkBlockerAcrossNodes");

    static final class Gate {
        final String name;

        Gate(String name) {
            this.name = name;
        }
    }

    /** Waits up to 30 s for t to park on blocker, as seen from this node. */
    static boolean seenParkedOn(Thread t, Object blocker) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (LockSupport.getBlocker(t) == blocker) {
                return true;
            }
            Thread.sleep(1);
        }
        return false;
    }

    public static void main(String[] args) throws Exception {
        Gate gate = new Gate("gate");
        AtomicBoolean open = new AtomicBoolean();
        boolean[] clearedAfter = new boolean[1];
        Thread parker = new Thread(() -> {
            while (!open.get()) {
                LockSupport.park(gate);  // may return spuriously: the loop re-checks
            }
            clearedAfter[0] = LockSupport.getBlocker(Thread.currentThread()) == null;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Thread.currentThread().isInterrupted() && System.nanoTime() < until) {
                LockSupport.parkNanos(ParkBlockerAcrossNodes.class, TimeUnit.SECONDS.toNanos(1));
            }
        }, "parker");
        parker.start();
        checks.check(seenParkedOn(parker, gate),
                "main sees the thread parked on its gate: " + LockSupport.getBlocker(parker));
        open.set(true);
        LockSupport.unpark(parker);
        checks.check(seenParkedOn(parker, ParkBlockerAcrossNodes.class),
                "main sees the thread parked on a class literal: " + LockSupport.getBlocker(parker));
        parker.interrupt();
        Threads.joinAll(parker);
        checks.check(clearedAfter[0], "the blocker is cleared once park returns");
        checks.check(LockSupport.getBlocker(parker) == null, "an ended thread has no blocker");

        // A thread queued for a lock main holds parks on the lock's synchronizer.
        ReentrantLock lock = new ReentrantLock();
        lock.lock();
        Thread waiter = new Thread(() -> {
            lock.lock();
            lock.unlock();
        }, "waiter");
        waiter.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Object blocker = null;
        while (!(blocker instanceof AbstractQueuedSynchronizer) && System.nanoTime() < deadline) {
            Thread.sleep(1);
            blocker = LockSupport.getBlocker(waiter);
        }
        checks.check(blocker instanceof AbstractQueuedSynchronizer,
                "main sees the waiter blocked on the lock's synchronizer: " + blocker);
        checks.check(lock.hasQueuedThread(waiter), "the waiter queues for the lock");
        lock.unlock();
        Threads.joinAll(waiter);
        checks.done();
    }
}
