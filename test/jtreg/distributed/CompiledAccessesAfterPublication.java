/*
 * @test
 * @summary An object that compiled code allocated, then saw published while it waited, is checked
 *          like any other: a thread on one node runs, hot and compiled, a method that allocates
 *          an AtomicInteger, stores it into an object shared with a thread on another node, waits
 *          (a safepoint) while that thread takes it (publishing it) and sets it, then reads it,
 *          adds to it and sets it again (getAcquire, getAndAdd, setRelease: Unsafe's get, atomic
 *          and put on the allocation, inlined). The other thread sees each write, and this one
 *          sees the other's.
 * @library /lib
 * @run main/othervm CompiledAccessesAfterPublication
 */
import java.util.concurrent.atomic.AtomicInteger;

public class CompiledAccessesAfterPublication {
    static final int WARM_UP = 30_000;  // past C2's thresholds, tiered or alone
    static final int ROUNDS = 150;
    static final long DEADLINE_NANOS = 200_000_000_000L;

    // Where the two threads meet. Each writes only its own turn.
    static final class Exchange {
        AtomicInteger slot;
        int written;      // what the taker adds to a box it takes: 100, none in warm-up
        int selfAdvance;  // warm-up: each wait's spin stands for a step of the taker
        volatile int makerTurn;
        volatile int takerTurn;
        volatile long makerPid;
        volatile long takerPid;
        volatile String makerFailure;
        volatile String takerFailure;
    }

    // Yields until the other thread's turn reaches `turn`. In warm-up the
    // exchange stands in for the other thread (selfAdvance): the loop then
    // goes round a few times and leaves, so the JIT sees every branch the
    // real waits take (one it never saw would deoptimize the method).
    static boolean awaitTaker(Exchange ex, int turn, long deadline) {
        int credit = 0;
        for (;;) {
            Thread.yield();
            if (ex.takerTurn + credit >= turn) {
                return true;
            }
            if (ex.takerFailure != null) {
                return false;
            }
            credit += ex.selfAdvance;
            if (System.nanoTime() > deadline) {
                return false;
            }
        }
    }

    static boolean awaitMaker(Exchange ex, int turn, long deadline) {
        while (ex.makerTurn < turn && ex.makerFailure == null) {
            Thread.yield();
            if (System.nanoTime() > deadline) {
                return false;
            }
        }
        return ex.makerFailure == null;
    }

    // The method the JIT compiles: the AtomicInteger is this compilation's
    // allocation, and its methods (inlined) reach it through Unsafe after
    // the waits.
    static String round(Exchange ex, int i, long deadline) {
        AtomicInteger box = new AtomicInteger(i);
        ex.slot = box;
        ex.makerTurn = 3 * i + 1;
        if (!awaitTaker(ex, 3 * i + 1, deadline)) {
            return "round " + i + ": the other thread did not take the box";
        }
        int seen = box.getAcquire();
        if (seen != i + ex.written) {
            return "round " + i + ": getAcquire read " + seen + ", not the other node's "
                    + (i + ex.written);
        }
        box.getAndAdd(1);
        ex.makerTurn = 3 * i + 2;
        if (!awaitTaker(ex, 3 * i + 2, deadline)) {
            return "round " + i + ": the other thread did not see the sum";
        }
        box.setRelease(i + 200);
        ex.makerTurn = 3 * i + 3;
        return null;
    }

    // The other side of a round, after the maker's turn 3i+1.
    static String take(Exchange ex, int i, long deadline) {
        AtomicInteger box = ex.slot;
        if (box.get() != i) {
            return "round " + i + ": took a box holding " + box.get() + ", not " + i;
        }
        box.set(i + 100);
        ex.takerTurn = 3 * i + 1;
        if (!awaitMaker(ex, 3 * i + 2, deadline)) {
            return "round " + i + ": no sum in time";
        }
        if (box.get() != i + 101) {
            return "round " + i + ": after getAndAdd the box holds " + box.get()
                    + ", not " + (i + 101);
        }
        ex.takerTurn = 3 * i + 2;
        if (!awaitMaker(ex, 3 * i + 3, deadline)) {
            return "round " + i + ": no set in time";
        }
        if (box.get() != i + 200) {
            return "round " + i + ": after setRelease the box holds " + box.get()
                    + ", not " + (i + 200);
        }
        return null;
    }

    public static void main(String[] args) throws Exception {
        Exchange ex = new Exchange();
        ex.written = 100;
        Thread maker = new Thread(() -> {
            ex.makerPid = ProcessHandle.current().pid();
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            // Warm-up on an exchange of this thread's own, whose boxes stay
            // local: each wait goes round three or four times.
            Exchange own = new Exchange();
            own.selfAdvance = 1;
            for (int i = 0; i < WARM_UP; i++) {
                own.takerTurn = 3 * i - 1;
                String failure = round(own, i, deadline);
                if (failure != null) {
                    ex.makerFailure = "warm-up " + failure;
                    return;
                }
            }
            for (int i = 0; i < ROUNDS && ex.takerFailure == null; i++) {
                String failure = round(ex, i, deadline);
                if (failure != null) {
                    ex.makerFailure = failure;
                    break;
                }
            }
        }, "maker");
        Thread taker = new Thread(() -> {
            ex.takerPid = ProcessHandle.current().pid();
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            for (int i = 0; i < ROUNDS; i++) {
                if (!awaitMaker(ex, 3 * i + 1, deadline)) {
                    if (ex.makerFailure == null) {
                        ex.takerFailure = "round " + i + ": no box in time";
                    }
                    return;
                }
                String failure = take(ex, i, deadline);
                if (failure != null) {
                    if (ex.makerFailure == null) {
                        ex.takerFailure = failure;
                    }
                    return;
                }
            }
        }, "taker");
        maker.start();
        taker.start();
        maker.join(240_000);
        taker.join(240_000);
        Checks c = new Checks("CompiledAccessesAfterPublication");
        c.check(!maker.isAlive() && !taker.isAlive(), "the threads did not end within 240 s");
        c.check(ex.makerPid != ex.takerPid,
                "both threads ran in process " + ex.makerPid + ": the test needs two nodes");
        c.check(ex.makerFailure == null, "the maker: " + ex.makerFailure);
        c.check(ex.takerFailure == null, "the taker: " + ex.takerFailure);
        c.done();
    }
}
