/*
 * @test
 * @summary A hot loop that tested its object local once keeps no local view of it once it is
 *          published: a thread on a thread server makes a counter, stores it into an object the
 *          launcher shares, and counts on it for three seconds in a loop that C2 compiled with
 *          the counter's test out of the loop (a loop versioned for a local counter, with no
 *          test at all). Meanwhile the main thread takes the counter, publishing it. After the
 *          thread ends, the main thread reads every count it made: the publication's fence
 *          deoptimized the loop's frame, so its later writes reached the counter's copies.
 * @library /lib
 * @run main/othervm CompiledLoopSeesItsObjectPublished
 */
public class CompiledLoopSeesItsObjectPublished {
    static final long DEADLINE_NANOS = 120_000_000_000L;
    static final long COUNT_NANOS = 3_000_000_000L;

    static final class Counter {
        long count;
    }

    static final class Exchange {
        Counter counter;
        long counted;          // what the worker counted on it
        long workerPid;
    }

    // Counts on c for `nanos`: no call (nanoTime is a leaf) and no barrier,
    // so C2's code tests c once, outside the loop. Returns the counts made.
    static long count(Counter c, long nanos) {
        long made = 0;
        long end = System.nanoTime() + nanos;
        do {
            for (int i = 0; i < 1_000; i++) {
                c.count++;
            }
            made += 1_000;
        } while (System.nanoTime() < end);
        return made;
    }

    public static void main(String[] args) throws Exception {
        Exchange ex = new Exchange();
        Thread worker = new Thread(() -> {
            ex.workerPid = ProcessHandle.current().pid();
            Counter warm = new Counter();
            for (int r = 0; r < 300; r++) {
                count(warm, 1_000_000);  // compiled, on a counter of its own
            }
            Counter c = new Counter();
            ex.counter = c;
            ex.counted = count(c, COUNT_NANOS);
        }, "counter");
        worker.start();
        // The exchange stays the worker's while it warms up: the counter is
        // published when this thread first reads the exchange after the
        // worker stored it, while the worker counts.
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        Counter c;
        do {
            Thread.sleep(700);
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the worker never stored its counter");
            }
            c = ex.counter;
        } while (c == null);
        long seen = c.count;
        worker.join();
        if (ex.workerPid == ProcessHandle.current().pid()) {
            throw new AssertionError("the worker ran in the launcher: nothing was tested");
        }
        long count = c.count;
        System.out.println("counter: " + seen + " when published, " + count + " at the end; the "
                + "worker counted " + ex.counted);
        if (count != ex.counted) {
            throw new AssertionError("the counter reads " + count + " here, but the worker counted "
                    + ex.counted + ": its counts after the publication stayed on its node");
        }
    }
}
