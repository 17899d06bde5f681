/*
 * @test
 * @summary An int[], a long[] and a double[] written by 4 threads on the thread servers in
 *          disjoint ranges (the arrays are shared whole, so the writers contend for them):
 *          main sees every element exactly after join.
 * @library /lib
 * @run main/othervm DisjointArrayRanges
 */
public class DisjointArrayRanges {
    static final int THREADS = 4;
    static final int PER_THREAD = 1024;
    static final int LENGTH = THREADS * PER_THREAD;

    static int intValue(int i) {
        return i * 31 + 7;
    }

    static long longValue(int i) {
        return (long) i * 1_000_000_007L + Long.MIN_VALUE / 3;
    }

    static double doubleValue(int i) {
        return i * 0.5 + 1.0 / (i + 3);
    }

    public static void main(String[] args) throws Exception {
        int[] ints = new int[LENGTH];
        long[] longs = new long[LENGTH];
        double[] doubles = new double[LENGTH];
        long[] garbage = new long[THREADS];
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                int from = k * PER_THREAD;
                int to = from + PER_THREAD;
                for (int i = from; i < to; i++) {
                    ints[i] = intValue(i);
                    longs[i] = longValue(i);
                    doubles[i] = doubleValue(i);
                    if (i % 32 == 0) {
                        garbage[k] += Churn.garbage(500);
                    }
                }
            }, "ranges-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);

        Checks c = new Checks("DisjointArrayRanges");
        int bad = 0;
        for (int i = 0; i < LENGTH; i++) {
            boolean ok = ints[i] == intValue(i) && longs[i] == longValue(i)
                    && Double.doubleToRawLongBits(doubles[i]) == Double.doubleToRawLongBits(doubleValue(i));
            if (!ok && bad++ < 10) {
                c.fail("element " + i + " (thread " + i / PER_THREAD + "'s range): int " + ints[i]
                        + " long " + longs[i] + " double " + doubles[i] + ", expected " + intValue(i)
                        + " / " + longValue(i) + " / " + doubleValue(i));
            }
        }
        c.equal("wrong elements", bad, 0);
        c.done();
    }
}
