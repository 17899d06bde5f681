/*
 * @test
 * @summary An object compiled code allocated and then saw published is checked after the
 *          publication: a thread on a thread server runs, hot and compiled, a method that
 *          allocates a box, stores it into an object the launcher shares, and enters a shared
 *          lock the launcher holds (no call of a Java method since the allocation, so C2
 *          emits the box's write in the lock with no check at all). While it waits for the
 *          lock, the launcher takes the box, publishing it, and reads it (a copy on its node);
 *          then it releases the lock and reads the box again. Every write arrives: the
 *          publication's fence deoptimized the waiting frame, and the write invalidated the
 *          launcher's copy.
 * @library /lib
 * @run main/othervm CompiledFreshObjectPublished
 */
public class CompiledFreshObjectPublished {
    static final int WARM_UP = 30_000;  // past C2's thresholds, tiered or alone
    static final int ROUNDS = 40;
    static final long DEADLINE_NANOS = 120_000_000_000L;

    static final class Box {
        long value;
    }

    static final class Exchange {
        Box box;
        volatile int written;  // the worker's: the round whose box it wrote
        volatile int ready;    // the launcher's: the round for which it holds the lock
    }

    static final class Meeting {
        Exchange exchange = new Exchange();
        Object lock = new Object();
        Exchange warmExchange;  // the worker's, shared for its warm-up
        Object warmLock;
        volatile boolean warmShared;
        volatile long workerPid;
    }

    // The method C2 compiles: between the box's allocation and its write
    // lie only the exchange's check and the lock's enter.
    static void round(Exchange ex, Object lock, int round) {
        Box box = new Box();
        ex.box = box;
        synchronized (lock) {
            box.value = round;
            box.value += 1_000;
        }
        ex.written = round;
    }

    static void await(String what, java.util.function.BooleanSupplier done, long deadline) {
        while (!done.getAsBoolean()) {
            Thread.onSpinWait();
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never: " + what);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Checks checks = new Checks("CompiledFreshObjectPublished");
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        Meeting m = new Meeting();
        Thread worker = new Thread(() -> {
            m.workerPid = ProcessHandle.current().pid();
            // Warmed up on a shared exchange and lock nobody else uses, so
            // that the compiled method checks them as it must afterwards.
            Exchange warm = new Exchange();
            Object warmLock = new Object();
            m.warmExchange = warm;
            m.warmLock = warmLock;
            await("the launcher shared the warm-up's objects", () -> m.warmShared, deadline);
            for (int i = 0; i < WARM_UP; i++) {
                round(warm, warmLock, i);
            }
            for (int r = 1; r <= ROUNDS; r++) {
                final int next = r;
                await("the launcher holds the lock for round " + r, () -> m.exchange.ready >= next,
                      deadline);
                round(m.exchange, m.lock, r);
            }
        }, "worker");
        worker.start();
        await("the worker made its warm-up's objects", () -> m.warmLock != null, deadline);
        checks.check(m.warmExchange != null, "the warm-up's exchange is shared");
        m.warmShared = true;

        Exchange ex = m.exchange;
        long[] seen = new long[ROUNDS + 1];
        long[] before = new long[ROUNDS + 1];
        Box last = null;
        for (int r = 1; r <= ROUNDS; r++) {
            Box box = null;
            synchronized (m.lock) {
                ex.ready = r;
                while ((box = ex.box) == null || box == last) {  // taking it publishes it
                    Thread.onSpinWait();
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("round " + r + ": the worker stored no box");
                    }
                }
                last = box;
                before[r] = box.value;  // a copy here, which the worker's write must invalidate
                Thread.sleep(2);  // the worker waits for the lock meanwhile
            }
            final int round = r;
            await("round " + r + ": the worker wrote its box", () -> ex.written >= round, deadline);
            seen[r] = box.value;
        }
        worker.join();
        checks.check(m.workerPid != ProcessHandle.current().pid(), "the worker ran on another node");
        int lost = 0;
        for (int r = 1; r <= ROUNDS; r++) {
            if (before[r] != 0 || seen[r] != r + 1_000) {
                lost++;
                System.out.println("round " + r + ": the box read " + before[r] + " when taken and "
                                   + seen[r] + " after the write, not 0 and " + (r + 1_000));
            }
        }
        checks.equal("rounds whose box's writes stayed on the worker's node", lost, 0);
        checks.done();
        System.out.println("CompiledFreshObjectPublished: ok");
    }
}
