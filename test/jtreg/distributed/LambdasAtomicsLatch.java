/*
 * @test
 * @summary Runnable lambdas on the thread servers share an AtomicLong (incrementAndGet from 4
 *          threads hands out every value exactly once) and count down a CountDownLatch that
 *          main awaits; the total is exact.
 * @library /lib
 * @run main/othervm LambdasAtomicsLatch
 */
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

public class LambdasAtomicsLatch {
    static final int THREADS = 4;
    static final int INCREMENTS = 2000;

    public static void main(String[] args) throws Exception {
        AtomicLong counter = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(THREADS);
        long[][] got = new long[THREADS][INCREMENTS];
        long[] garbage = new long[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int k = t;
            Runnable task = () -> {
                try {
                    if (!start.await(60, TimeUnit.SECONDS)) {
                        return;
                    }
                    long[] mine = new long[INCREMENTS];
                    for (int i = 0; i < INCREMENTS; i++) {
                        mine[i] = counter.incrementAndGet();
                        if (i % 50 == 0) {
                            garbage[k] += Churn.garbage(500);
                        }
                    }
                    got[k] = mine;
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                } finally {
                    done.countDown();
                }
            };
            new Thread(task, "incrementer-" + t).start();
        }
        Thread.sleep(200);
        start.countDown();
        Checks c = new Checks("LambdasAtomicsLatch");
        boolean finished = done.await(60, TimeUnit.SECONDS);
        c.check(finished, "the latch did not reach 0 within 60 s (count " + done.getCount() + ")");
        if (finished) {
            long total = (long) THREADS * INCREMENTS;
            c.equal("counter.get()", counter.get(), total);
            int[] times = new int[(int) total + 1];
            int outOfRange = 0;
            for (int k = 0; k < THREADS; k++) {
                long previous = 0;
                for (long v : got[k]) {
                    if (v < 1 || v > total) {
                        outOfRange++;
                        continue;
                    }
                    times[(int) v]++;
                    if (v <= previous) {
                        c.fail("thread " + k + " got " + v + " after " + previous);
                    }
                    previous = v;
                }
            }
            int missing = 0;
            int repeated = 0;
            for (int v = 1; v <= total; v++) {
                missing += times[v] == 0 ? 1 : 0;
                repeated += times[v] > 1 ? 1 : 0;
            }
            c.equal("values of incrementAndGet out of range", outOfRange, 0);
            c.equal("values never returned by incrementAndGet", missing, 0);
            c.equal("values returned more than once", repeated, 0);
        }
        c.done();
    }
}
