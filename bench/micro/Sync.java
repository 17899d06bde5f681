// Synchronization across nodes: the shapes of issue 24, each timed per
// operation by the program itself after a warm-up (bench/micro/sync.py runs
// them on stock HotSpot and on djava clusters, and counts messages).
//
//   Sync barrier P N     P threads, N trips of one CyclicBarrier(P)
//   Sync abq N           a producer and a consumer, N messages through an
//                        ArrayBlockingQueue(64)
//   Sync lbq N           the same through a LinkedBlockingQueue
//   Sync reentrant N     two threads taking strict turns under a ReentrantLock
//                        and its Condition, N turns each
//   Sync monitor N       the same with synchronized, wait and notifyAll
//   Sync locked N        the same on a lock object of its own, the turn kept
//                        in another object (a private final Object lock)
//   Sync spin N          two threads taking turns through a volatile int,
//                        each spinning until it is its turn
//   Sync round P N       P threads, N rounds of a barrier made of one
//                        monitor's wait and notifyAll (a clocked simulation)
//   Sync uncontended N   one thread, N lock and unlock of a shared ReentrantLock
//   Sync interrupt N     one thread waits in Object.wait, another interrupts
//                        it, N times: from the interrupt until the waiter
//                        is back from its InterruptedException
//
// Each prints one line "SHAPE: ops N us_per_op X nodes K": the operations
// timed (all but the first tenth, the warm-up; for turns, the hand-offs),
// and K the distinct processes the threads ran in.
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

public class Sync {
    /** What the threads report: where they ran, and the timed span. */
    static final class Result {
        final long[] pids;
        volatile long start, end;

        Result(int threads) {
            pids = new long[threads];
        }

        synchronized void ranAt(int thread) {
            pids[thread] = ProcessHandle.current().pid();
        }

        synchronized int nodes() {
            Set<Long> distinct = new HashSet<>();
            for (long p : pids) distinct.add(p);
            return distinct.size();
        }
    }

    interface Body {
        void run(int thread, Result r) throws Exception;
    }

    /** Runs body in `threads` threads; `timed`: the operations between r.start and r.end. */
    static void runThreads(String shape, int threads, long timed, Body body) throws Exception {
        Result r = new Result(threads);
        Thread[] ts = new Thread[threads];
        Throwable[] failure = new Throwable[1];
        for (int i = 0; i < threads; i++) {
            int me = i;
            ts[i] = new Thread(() -> {
                r.ranAt(me);
                try {
                    body.run(me, r);
                } catch (Throwable t) {
                    synchronized (failure) {
                        failure[0] = t;
                    }
                }
            }, shape + "-" + i);
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        synchronized (failure) {
            if (failure[0] != null) throw new AssertionError(shape + " failed", failure[0]);
        }
        System.out.printf("%s: ops %d us_per_op %.2f nodes %d%n", shape, timed,
                (r.end - r.start) / 1e3 / timed, r.nodes());
    }

    static void barrier(int parties, int trips) throws Exception {
        CyclicBarrier b = new CyclicBarrier(parties);
        runThreads("barrier " + parties, parties, trips - trips / 10, (me, r) -> {
            for (int k = 0; k < trips; k++) {
                if (me == 0 && k == trips / 10) r.start = System.nanoTime();
                b.await();
            }
            if (me == 0) r.end = System.nanoTime();
        });
    }

    static void queue(String shape, BlockingQueue<Integer> q, int messages) throws Exception {
        runThreads(shape, 2, messages - messages / 10, (me, r) -> {
            if (me == 0) {
                for (int k = 0; k < messages; k++) q.put(k);
            } else {
                for (int k = 0; k < messages; k++) {
                    if (k == messages / 10) r.start = System.nanoTime();
                    int v = q.take();
                    if (v != k) throw new AssertionError("took " + v + ", expected " + k);
                }
                r.end = System.nanoTime();
            }
        });
    }

    static final class Turns {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        int turn;
    }

    static void reentrant(int turns) throws Exception {
        Turns t = new Turns();
        runThreads("reentrant", 2, 2L * (turns - 1 - turns / 10), (me, r) -> {
            for (int k = 0; k < turns; k++) {
                t.lock.lock();
                try {
                    while (t.turn != me) t.changed.await();
                    if (me == 0 && k == turns / 10) r.start = System.nanoTime();
                    if (me == 0 && k == turns - 1) r.end = System.nanoTime();
                    t.turn = 1 - me;
                    t.changed.signalAll();
                } finally {
                    t.lock.unlock();
                }
            }
        });
    }

    static final class Baton {
        int turn;
    }

    static void monitor(int turns) throws Exception {
        Baton b = new Baton();
        runThreads("monitor", 2, 2L * (turns - 1 - turns / 10), (me, r) -> {
            for (int k = 0; k < turns; k++) {
                synchronized (b) {
                    while (b.turn != me) b.wait();
                    if (me == 0 && k == turns / 10) r.start = System.nanoTime();
                    if (me == 0 && k == turns - 1) r.end = System.nanoTime();
                    b.turn = 1 - me;
                    b.notifyAll();
                }
            }
        });
    }

    static final class Turn {
        int turn;
    }

    static void locked(int turns) throws Exception {
        Object lock = new Object();
        Turn t = new Turn();
        runThreads("locked", 2, 2L * (turns - 1 - turns / 10), (me, r) -> {
            for (int k = 0; k < turns; k++) {
                synchronized (lock) {
                    while (t.turn != me) lock.wait();
                    if (me == 0 && k == turns / 10) r.start = System.nanoTime();
                    if (me == 0 && k == turns - 1) r.end = System.nanoTime();
                    t.turn = 1 - me;
                    lock.notifyAll();
                }
            }
        });
    }

    static final class Flag {
        volatile int turn;
    }

    static void spin(int turns) throws Exception {
        Flag f = new Flag();
        long[] spins = new long[2];
        runThreads("spin", 2, 2L * (turns - 1 - turns / 10), (me, r) -> {
            long mine = 0;
            for (int k = 0; k < turns; k++) {
                while (f.turn != me) mine++;
                if (me == 0 && k == turns / 10) r.start = System.nanoTime();
                if (me == 0 && k == turns - 1) r.end = System.nanoTime();
                f.turn = 1 - me;
            }
            synchronized (spins) {
                spins[me] = mine;
            }
        });
        synchronized (spins) {
            // How often a thread read the flag while it was not its turn:
            // under djava each change should cost one miss, whatever this.
            System.out.printf("spin: reads_per_turn %.1f%n", (spins[0] + spins[1]) / (2.0 * turns));
        }
    }

    static final class Clock {
        int arrived;
        long round;
    }

    static void round(int parties, int rounds) throws Exception {
        Clock c = new Clock();
        runThreads("round " + parties, parties, rounds - rounds / 10, (me, r) -> {
            for (int k = 0; k < rounds; k++) {
                if (me == 0 && k == rounds / 10) r.start = System.nanoTime();
                synchronized (c) {
                    long mine = c.round;
                    if (++c.arrived == parties) {
                        c.arrived = 0;
                        c.round++;
                        c.notifyAll();
                    } else {
                        while (c.round == mine) c.wait();
                    }
                }
            }
            if (me == 0) r.end = System.nanoTime();
        });
    }

    static void uncontended(int ops) throws Exception {
        ReentrantLock lock = new ReentrantLock();
        int[] counter = new int[1];
        runThreads("uncontended", 1, ops - ops / 10, (me, r) -> {
            for (int k = 0; k < ops; k++) {
                if (k == ops / 10) r.start = System.nanoTime();
                lock.lock();
                try {
                    counter[0]++;
                } finally {
                    lock.unlock();
                }
            }
            r.end = System.nanoTime();
        });
        if (counter[0] != ops) throw new AssertionError("counted " + counter[0]);
    }

    static final class Interrupted {
        volatile Thread waiter;
        volatile boolean waiting;
        volatile int caught;
    }

    static void interrupt(int times) throws Exception {
        Object lock = new Object();
        Interrupted s = new Interrupted();
        runThreads("interrupt", 2, times - times / 10, (me, r) -> {
            if (me == 0) {
                s.waiter = Thread.currentThread();
                for (int k = 0; k < times; k++) {
                    synchronized (lock) {
                        s.waiting = true;
                        try {
                            lock.wait();
                            throw new AssertionError("woken without an interrupt");
                        } catch (InterruptedException expected) {
                            s.waiting = false;
                        }
                    }
                    s.caught = k + 1;
                }
            } else {
                Thread waiter;
                while ((waiter = s.waiter) == null) Thread.onSpinWait();
                long spent = 0;
                for (int k = 0; k < times; k++) {
                    while (!s.waiting) Thread.onSpinWait();
                    synchronized (lock) {
                        // The waiter released the monitor: it is in the wait set.
                    }
                    long t0 = System.nanoTime();
                    waiter.interrupt();
                    while (s.caught != k + 1) Thread.onSpinWait();
                    if (k >= times / 10) spent += System.nanoTime() - t0;
                }
                r.start = 0;
                r.end = spent;
            }
        });
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "barrier": barrier(Integer.parseInt(args[1]), Integer.parseInt(args[2])); break;
            case "abq": queue("abq", new ArrayBlockingQueue<>(64), Integer.parseInt(args[1])); break;
            case "lbq": queue("lbq", new LinkedBlockingQueue<>(), Integer.parseInt(args[1])); break;
            case "reentrant": reentrant(Integer.parseInt(args[1])); break;
            case "monitor": monitor(Integer.parseInt(args[1])); break;
            case "locked": locked(Integer.parseInt(args[1])); break;
            case "spin": spin(Integer.parseInt(args[1])); break;
            case "round": round(Integer.parseInt(args[1]), Integer.parseInt(args[2])); break;
            case "uncontended": uncontended(Integer.parseInt(args[1])); break;
            case "interrupt": interrupt(Integer.parseInt(args[1])); break;
            default: throw new IllegalArgumentException("no such shape: " + args[0]);
        }
    }
}
