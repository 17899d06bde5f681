/*
 * @test
 * @summary java.util.concurrent's synchronizers shared between nodes wait at the monitor
 *          service (SharedSynchronizers) and keep their Java semantics there: mutual exclusion
 *          and reentrancy of ReentrantLock (fair and not), a Condition's signal and signalAll,
 *          timed and interruptible waits (tryLock with a timeout, lockInterruptibly,
 *          awaitNanos), an uninterruptible lock() keeping the interrupt for later, the queue
 *          inspections (hasQueuedThread, getQueueLength, hasWaiters, getWaitQueueLength) seeing
 *          threads that wait on other nodes (an awaiting thread from the moment it lets the
 *          lock go, and a thread seen queued from then until it gets the lock or gives up),
 *          Semaphore, CountDownLatch and
 *          ReentrantReadWriteLock, a fair Semaphore's waiters keeping their places in line
 *          across wake-ups (and counted queued while they re-check), a ReentrantLock held
 *          when it became shared, tryLock taking a free lock whose monitor another node
 *          holds leased, and a thread taking a shared lock while another thread of its node
 *          holds its Thread locked (as Thread.start() does) or joins it.
 * @library /lib
 * @run main/othervm SharedLocksAndConditions
 */
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

public class SharedLocksAndConditions {
    static final Checks checks = new Checks("SharedLocksAndConditions");

    /** Runs bodies in threads (on the thread servers), failing the test with any throwable. */
    static void run(String name, Runnable... bodies) throws InterruptedException {
        Throwable[] failure = new Throwable[1];
        Thread[] ts = new Thread[bodies.length];
        for (int i = 0; i < bodies.length; i++) {
            Runnable body = bodies[i];
            ts[i] = new Thread(() -> {
                try {
                    body.run();
                } catch (Throwable t) {
                    synchronized (failure) {
                        failure[0] = t;
                    }
                }
            }, name + "-" + i);
        }
        Threads.startAll(ts);
        Threads.joinAll(ts);
        synchronized (failure) {
            if (failure[0] != null) {
                checks.fail(name + ": " + failure[0]);
                failure[0].printStackTrace();
            }
        }
    }

    interface Check {
        boolean holds();
    }

    static void awaitTrue(String what, Check c) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!c.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("30 s passed and still not: " + what);
            }
            Thread.sleep(10);
        }
    }

    static final class Counter {
        final ReentrantLock lock;
        long count;

        Counter(boolean fair) {
            lock = new ReentrantLock(fair);
        }
    }

    static void mutualExclusion(boolean fair) throws InterruptedException {
        Counter c = new Counter(fair);
        int perThread = 300;
        Runnable body = () -> {
            for (int i = 0; i < perThread; i++) {
                c.lock.lock();
                try {
                    c.lock.lock();  // reentrant
                    try {
                        long v = c.count;
                        Thread.yield();
                        c.count = v + 1;
                    } finally {
                        c.lock.unlock();
                    }
                    if (c.lock.getHoldCount() != 1) {
                        throw new AssertionError("hold count " + c.lock.getHoldCount());
                    }
                } finally {
                    c.lock.unlock();
                }
            }
        };
        run(fair ? "fair" : "nonfair", body, body, body, body);
        checks.equal((fair ? "fair" : "nonfair") + " lock: count", c.count, 4L * perThread);
        checks.check(!c.lock.isLocked(), "lock free at the end");
    }

    static final class Turns {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        int turn;
        int handOffs;
    }

    static void conditionTurns() throws InterruptedException {
        Turns t = new Turns();
        int turns = 100;
        Runnable[] bodies = new Runnable[2];
        for (int who = 0; who < 2; who++) {
            int me = who;
            bodies[who] = () -> {
                for (int k = 0; k < turns; k++) {
                    t.lock.lock();
                    try {
                        while (t.turn != me) {
                            t.changed.awaitUninterruptibly();
                        }
                        t.turn = 1 - me;
                        t.handOffs++;
                        if (k % 2 == 0) {
                            t.changed.signal();
                        } else {
                            t.changed.signalAll();
                        }
                    } finally {
                        t.lock.unlock();
                    }
                }
            };
        }
        run("turns", bodies);
        checks.equal("condition turns", t.handOffs, 2 * turns);
    }

    static void timeoutsAndInterrupts() throws Exception {
        InspectableLock lock = new InspectableLock();
        Condition never = lock.newCondition();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        AtomicBoolean timedOut = new AtomicBoolean();
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicBoolean keptInterrupt = new AtomicBoolean();
        AtomicInteger awaitNanosLeft = new AtomicInteger(1);
        Thread holder = new Thread(() -> {
            lock.lock();
            try {
                held.countDown();
                done.await();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                lock.unlock();
            }
        }, "holder");
        holder.start();
        held.await();
        // A timed tryLock on another node gives up while the holder keeps the lock.
        Thread timed = new Thread(() -> {
            try {
                long t0 = System.nanoTime();
                boolean got = lock.tryLock(200, TimeUnit.MILLISECONDS);
                long waited = System.nanoTime() - t0;
                timedOut.set(!got && waited >= TimeUnit.MILLISECONDS.toNanos(200));
                if (got) {
                    lock.unlock();
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, "timed");
        // lockInterruptibly ends with InterruptedException when main interrupts it.
        Thread interruptible = new Thread(() -> {
            try {
                lock.lockInterruptibly();
                lock.unlock();
            } catch (InterruptedException e) {
                interrupted.set(!lock.isHeldByCurrentThread());
            }
        }, "interruptible");
        // lock() ignores an interrupt until it has the lock, then keeps it set.
        Thread uninterruptible = new Thread(() -> {
            lock.lock();
            try {
                keptInterrupt.set(Thread.currentThread().isInterrupted());
                // An awaitNanos that times out re-acquires the lock before returning.
                Thread.interrupted();
                long left = never.awaitNanos(TimeUnit.MILLISECONDS.toNanos(50));
                awaitNanosLeft.set(left <= 0 && lock.isHeldByCurrentThread() ? 0 : 1);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                lock.unlock();
            }
        }, "uninterruptible");
        timed.start();
        interruptible.start();
        uninterruptible.start();
        timed.join(30_000);
        checks.check(timedOut.get(), "tryLock(200 ms) timed out after 200 ms while another node held the lock");
        awaitTrue("two threads queued for the lock",
                () -> lock.hasQueuedThread(interruptible) && lock.hasQueuedThread(uninterruptible));
        checks.equal("queue length seen from the launcher", lock.getQueueLength(), 2);
        checks.check(lock.hasQueuedThreads(), "hasQueuedThreads");
        checks.check(lock.queued().contains(interruptible)
                && lock.queued().contains(uninterruptible), "getQueuedThreads names them");
        interruptible.interrupt();
        uninterruptible.interrupt();
        interruptible.join(30_000);
        checks.check(interrupted.get(), "lockInterruptibly threw InterruptedException without the lock");
        done.countDown();
        Threads.joinAll(holder, uninterruptible);
        checks.check(keptInterrupt.get(), "lock() kept the interrupt for after it acquired");
        checks.equal("awaitNanos timed out holding the lock again", awaitNanosLeft.get(), 0);
        checks.check(!lock.hasQueuedThreads(), "nobody queued at the end");
    }

    /** A ReentrantLock whose protected getQueuedThreads the test may call. */
    static final class InspectableLock extends ReentrantLock {
        InspectableLock() {
        }

        InspectableLock(boolean fair) {
            super(fair);
        }

        java.util.Collection<Thread> queued() {
            return getQueuedThreads();
        }

        java.util.Collection<Thread> waiting(Condition c) {
            return getWaitingThreads(c);
        }
    }

    static void conditionQueries() throws Exception {
        ReentrantLock lock = new ReentrantLock();
        Condition ready = lock.newCondition();
        AtomicInteger woken = new AtomicInteger();
        Runnable waiter = () -> {
            lock.lock();
            try {
                ready.await();
                woken.incrementAndGet();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                lock.unlock();
            }
        };
        Thread a = new Thread(waiter, "waiter-a");
        Thread b = new Thread(waiter, "waiter-b");
        a.start();
        b.start();
        awaitTrue("two threads await the condition", () -> {
            lock.lock();
            try {
                return lock.getWaitQueueLength(ready) == 2;
            } finally {
                lock.unlock();
            }
        });
        lock.lock();
        try {
            checks.check(lock.hasWaiters(ready), "hasWaiters");
            ready.signal();
        } finally {
            lock.unlock();
        }
        awaitTrue("one waiter woke", () -> woken.get() == 1);
        Thread.sleep(100);
        checks.equal("signal woke exactly one", woken.get(), 1);
        lock.lock();
        try {
            checks.equal("one still waits", lock.getWaitQueueLength(ready), 1);
            ready.signalAll();
        } finally {
            lock.unlock();
        }
        Threads.joinAll(a, b);
        checks.equal("signalAll woke the other", woken.get(), 2);
    }

    /**
     * A thread that awaits a condition is its waiter from the moment it lets
     * the lock go: the next owner, taking the lock at once, sees it in
     * hasWaiters, getWaitQueueLength and getWaitingThreads, though its wait
     * may not have reached the service yet (the TCK's
     * testGetWaitingThreads does this once per run).
     */
    static void awaitersSeenAtOnce(boolean fair, boolean onMainsNode) throws Exception {
        InspectableLock lock = new InspectableLock(fair);
        Condition c = lock.newCondition();
        AtomicInteger announced = new AtomicInteger();
        int rounds = 40;
        // A thread elsewhere shares the lock; a waiter holding an open file of
        // main's node runs there, beside main (the lease case: the service
        // monitor's enters are local).
        Thread sharer = new Thread(() -> {
            lock.lock();
            lock.unlock();
        }, "sharer");
        sharer.start();
        sharer.join();
        java.nio.file.Path anchor = java.nio.file.Files.createTempFile("awaiter", ".anchor");
        java.io.InputStream nodeLocal =
            onMainsNode ? new java.io.FileInputStream(anchor.toFile()) : null;
        Thread waiter = new Thread(() -> {
            if (onMainsNode && nodeLocal == null) {
                return;
            }
            for (int r = 1; r <= rounds; r++) {
                lock.lock();
                try {
                    announced.set(r);
                    c.awaitUninterruptibly();
                } finally {
                    lock.unlock();
                }
            }
        }, "awaiter");
        waiter.start();
        int missed = 0;
        for (int r = 1; r <= rounds; r++) {
            while (announced.get() != r) {
                Thread.onSpinWait();
            }
            while (!lock.tryLock()) {  // taken the moment the waiter lets it go
                Thread.onSpinWait();
            }
            try {
                if (!lock.hasWaiters(c) || lock.getWaitQueueLength(c) != 1
                    || !lock.waiting(c).contains(waiter)) {
                    missed++;
                }
                c.signal();
            } finally {
                lock.unlock();
            }
        }
        Threads.joinAll(waiter);
        if (nodeLocal != null) {
            nodeLocal.close();
        }
        java.nio.file.Files.deleteIfExists(anchor);
        checks.equal((fair ? "fair" : "nonfair") + " lock, waiter "
                     + (onMainsNode ? "beside main" : "elsewhere")
                     + ": rounds whose next owner missed the waiter", missed, 0);
    }

    /**
     * A thread takes a shared lock while another thread of its node holds its Thread object
     * locked (Thread.start() is synchronized, so a thread started beside its starter that
     * takes a shared lock at once meets this), or waits on it (its starter joins it): taking
     * the lock names the thread at the service, which shares its Thread once the holder lets
     * it go (the joiner steps aside); it does not fail.
     */
    static void lockWhileItsThreadIsHeld(boolean joined) throws Exception {
        ReentrantLock lock = new ReentrantLock();
        run("sharer", () -> {  // shared from elsewhere: its waiters queue at the service
            lock.lock();
            lock.unlock();
        });
        java.nio.file.Path anchor = java.nio.file.Files.createTempFile("taker", ".anchor");
        java.io.InputStream nodeLocal = new java.io.FileInputStream(anchor.toFile());
        java.nio.file.Files.delete(anchor);  // the stream stays open
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean asking = new AtomicBoolean();
        AtomicBoolean took = new AtomicBoolean();
        Thread taker = new Thread(() -> {  // runs beside main: it holds a file of main's node
            try {
                if (nodeLocal.available() >= 0) {
                    if (joined) {
                        Thread.sleep(300);  // main waits in join meanwhile
                    }
                    asking.set(true);
                    lock.lock();
                    took.set(true);
                    lock.unlock();
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "taker");
        synchronized (taker) {
            taker.start();
            while (!joined && !asking.get()) {
                Thread.onSpinWait();
            }
            if (!joined) {
                Thread.sleep(200);  // still holding the taker while it asks for the lock
            }
        }
        Threads.joinAll(taker);
        nodeLocal.close();
        checks.check(failure.get() == null && took.get(), "a thread whose Thread another thread "
                + (joined ? "joined" : "held locked") + " did not take a shared lock: "
                + failure.get());
    }

    static void semaphoreAndLatch() throws InterruptedException {
        Semaphore permits = new Semaphore(2);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch finished = new CountDownLatch(4);
        Runnable body = () -> {
            for (int i = 0; i < 50; i++) {
                permits.acquireUninterruptibly();
                try {
                    int n = inside.incrementAndGet();
                    most.accumulateAndGet(n, Math::max);
                    Thread.yield();
                    inside.decrementAndGet();
                } finally {
                    permits.release();
                }
            }
            finished.countDown();
        };
        Thread waiter = new Thread(() -> {
            try {
                finished.await();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, "latch-waiter");
        waiter.start();
        run("semaphore", body, body, body, body);
        waiter.join(30_000);
        checks.check(!waiter.isAlive(), "latch waiter on another node released");
        checks.check(most.get() <= 2, "never more than 2 inside (most " + most.get() + ")");
        checks.equal("permits back", permits.availablePermits(), 2);
    }

    /**
     * A fair Semaphore's first waiter keeps its place in line across the
     * wake-ups that do not let it in, ahead of a newcomer that waits while
     * it re-checks (JSR-166 TCK SemaphoreTest.testFairLocksFifo, in rounds:
     * the newcomer's releases wake the first waiter just before it queues).
     */
    static void fairSemaphoreLine() throws InterruptedException {
        for (int round = 0; round < 10; round++) {
            Semaphore s = new Semaphore(1, true);
            CountDownLatch queueing = new CountDownLatch(1);
            Thread first = new Thread(() -> s.acquireUninterruptibly(3), "line-first-" + round);
            first.start();
            awaitTrue("the first waiter queued", () -> s.getQueueLength() == 1);
            AtomicReference<String> secondFailed = new AtomicReference<>();
            Thread second = new Thread(() -> {
                boolean timed;
                try {
                    timed = s.tryAcquire(0, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                if (timed) {
                    secondFailed.set("a timed try did not queue behind the first waiter");
                    s.release();
                }
                if (!s.tryAcquire()) {  // an untimed try barges
                    secondFailed.set("an untimed try did not barge");
                    return;
                }
                s.release(2);  // wakes the first waiter: 2 permits, too few
                if (!s.tryAcquire(2)) {
                    secondFailed.set("a second untimed try did not barge");
                    return;
                }
                s.release();   // and again: 1 permit
                queueing.countDown();
                s.acquireUninterruptibly();  // behind the first waiter
            }, "line-second-" + round);
            second.start();
            queueing.await();
            awaitTrue("the second waiter queued", () -> s.getQueueLength() == 2);
            s.release(2);  // 3 permits: the first waiter's turn, not the second's
            first.join(20_000);
            checks.check(!first.isAlive(), "round " + round + ": the first waiter took its 3 permits");
            checks.check(second.isAlive(), "round " + round + ": the second still waits");
            s.release();
            Threads.joinAll(first, second);
            checks.check(secondFailed.get() == null, "round " + round + ": " + secondFailed.get());
        }
    }

    /**
     * A queued thread stays queued while a release it cannot use has it
     * re-check (as an AQS node stays queued): getQueueLength and
     * hasQueuedThreads count it right after each release, while it is out
     * of the service's wait set (JSR-166 TCK SemaphoreTest.testGetQueueLength,
     * where a queued thread giving up woke the one behind it).
     */
    static void queuedWhileRechecking() throws InterruptedException {
        Semaphore s = new Semaphore(0);
        Thread waiter = new Thread(() -> s.acquireUninterruptibly(100), "rechecking");
        waiter.start();
        awaitTrue("the waiter queued", () -> s.getQueueLength() == 1);
        int miscounted = 0;
        for (int i = 0; i < 50; i++) {
            s.release();  // one permit: the waiter wakes, checks, waits again
            if (s.getQueueLength() != 1 || !s.hasQueuedThreads()) {
                miscounted++;
            }
        }
        checks.equal("releases after which the re-checking waiter was not counted queued",
                     miscounted, 0);
        s.release(50);
        waiter.join(30_000);
        checks.check(!waiter.isAlive(), "the waiter took its 100 permits");
        checks.equal("queue length at the end", s.getQueueLength(), 0);
    }

    static final class Shared {
        final ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
        int a, b;
    }

    static void readWrite() throws InterruptedException {
        Shared s = new Shared();
        AtomicBoolean torn = new AtomicBoolean();
        Runnable writer = () -> {
            for (int i = 0; i < 100; i++) {
                s.rw.writeLock().lock();
                try {
                    s.a++;
                    Thread.yield();
                    s.b++;
                } finally {
                    s.rw.writeLock().unlock();
                }
            }
        };
        Runnable reader = () -> {
            for (int i = 0; i < 100; i++) {
                s.rw.readLock().lock();
                try {
                    if (s.a != s.b) {
                        torn.set(true);
                    }
                } finally {
                    s.rw.readLock().unlock();
                }
            }
        };
        run("readwrite", writer, reader, writer, reader);
        checks.check(!torn.get(), "no reader saw a write half done");
        checks.equal("writes", s.a, 200);
    }

    /** A lock held when it becomes shared stays held until its holder's unlock. */
    static void heldWhenShared() throws Exception {
        ReentrantLock lock = new ReentrantLock();
        Condition cond = lock.newCondition();
        AtomicBoolean got = new AtomicBoolean();
        AtomicBoolean signalled = new AtomicBoolean();
        lock.lock();  // local still: held through its state
        Thread t = new Thread(() -> {
            lock.lock();
            try {
                got.set(true);
                signalled.set(true);
                cond.signalAll();
            } finally {
                lock.unlock();
            }
        }, "after-sharing");
        t.start();  // shares the lock with t's node
        Thread.sleep(300);
        checks.check(!got.get(), "a lock held when it became shared is not granted to another");
        checks.check(lock.isHeldByCurrentThread() && lock.isLocked() && lock.getHoldCount() == 1,
                "its holder still holds it once");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!signalled.get() && System.nanoTime() < deadline) {
            cond.await(1, TimeUnit.SECONDS);  // releases it: t gets it and signals
        }
        checks.check(signalled.get() && lock.isHeldByCurrentThread(),
                "await let the other node in and re-acquired the lock");
        lock.unlock();
        t.join(30_000);
        checks.check(got.get() && !lock.isLocked(), "free at the end");
    }

    /**
     * A thread seen queued on a lock stays queued until it gets the lock
     * or gives up (as an AQS node stays queued), also while it passes from
     * the lock's monitor, granted, to the wait for the state of a holder
     * from before the sharing (JSR-166 TCK ReentrantLockTest.testHasQueuedThread:
     * an inspector saw it parked entering, then neither parked nor listed).
     */
    static final class InspectedLock extends ReentrantLock {
        InspectedLock(boolean fair) {
            super(fair);
        }

        java.util.Collection<Thread> queued() {
            return getQueuedThreads();
        }
    }

    static void queuedOnItsWayToTheState() throws Exception {
        int lost = 0;
        for (int round = 0; round < 40; round++) {
            InspectedLock lock = new InspectedLock(round % 2 == 0);
            Thread t = new Thread(() -> {
                try {
                    lock.lockInterruptibly();
                    lock.unlock();
                } catch (InterruptedException expected) {
                }
            }, "queued-" + round);
            lock.lock();  // held through its state; t's start shares it
            t.start();
            // Asked as often as it can be (as the TCK's waitForQueuedThread
            // does), to catch the thread between its monitor and its wait.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!lock.hasQueuedThread(t)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("30 s passed and " + t.getName() + " never queued");
                }
                Thread.yield();
            }
            if (!lock.hasQueuedThread(t) || lock.getQueueLength() != 1 ||
                !lock.queued().contains(t)) {
                lost++;
            }
            t.interrupt();
            t.join(30_000);
            lock.unlock();
        }
        checks.equal("rounds in which a thread seen queued was then not", lost, 0);
    }

    /**
     * tryLock takes a free lock, also when another node used it last and
     * holds its monitor leased: on the launcher's node and on another one.
     */
    static void tryLockAfterUseElsewhere() throws Exception {
        ReentrantLock lock = new ReentrantLock();
        AtomicInteger held = new AtomicInteger();
        run("lease-holder", () -> {
            for (int i = 0; i < 100; i++) {
                lock.lock();
                try {
                    held.incrementAndGet();
                } finally {
                    lock.unlock();
                }
            }
        });
        boolean got = lock.tryLock();
        checks.check(got, "tryLock takes a lock another node used and let go");
        if (got) {
            checks.check(lock.getHoldCount() == 1, "held once by tryLock");
            lock.unlock();
        }
        AtomicBoolean other = new AtomicBoolean();
        run("try-elsewhere", () -> {
            if (lock.tryLock()) {
                other.set(true);
                lock.unlock();
            }
        });
        checks.check(other.get(), "so does a thread of another node");
        checks.check(!lock.isLocked(), "free at the end");
        checks.equal("holds", held.get(), 100);
    }

    public static void main(String[] args) throws Exception {
        // The hooks are in: java.base has djava's class (lib/djava-java.base.jar).
        checks.check(Class.forName("java.util.concurrent.locks.SharedSynchronizers") != null, "java.base carries SharedSynchronizers");
        heldWhenShared();
        mutualExclusion(false);
        mutualExclusion(true);
        conditionTurns();
        timeoutsAndInterrupts();
        conditionQueries();
        awaitersSeenAtOnce(false, false);
        awaitersSeenAtOnce(true, false);
        awaitersSeenAtOnce(false, true);
        awaitersSeenAtOnce(true, true);
        lockWhileItsThreadIsHeld(false);
        lockWhileItsThreadIsHeld(true);
        semaphoreAndLatch();
        fairSemaphoreLine();
        queuedWhileRechecking();
        queuedOnItsWayToTheState();
        readWrite();
        tryLockAfterUseElsewhere();
        checks.done();
        System.out.println("SharedLocksAndConditions: ok");
    }
}
