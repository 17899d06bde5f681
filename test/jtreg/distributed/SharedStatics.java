/*
 * @test
 * @summary Static fields and static arrays written by threads on the thread servers are read
 *          by main after join; a class's static initializer runs exactly once cluster-wide,
 *          even when threads on two nodes first use the class at the same time.
 * @library /lib
 * @run main/othervm SharedStatics
 */
import java.util.Arrays;

public class SharedStatics {
    static final int THREADS = 4;
    static final int ADDS = 250;

    /** First used by the threads, never by main before they start. */
    static final class Stamp {
        static int initializations;
        static final long NANOS;
        static final String ID;
        static final int[] TABLE;

        static {
            initializations++;
            NANOS = System.nanoTime();
            ID = "stamp-" + NANOS + "-pid-" + ProcessHandle.current().pid();
            TABLE = new int[16];
            for (int i = 0; i < TABLE.length; i++) {
                TABLE[i] = i * i;
            }
        }
    }

    static long total;
    static double doubleSum;
    static String lastWriter;
    static final int[] slots = new int[THREADS];
    static final long[] seenNanos = new long[THREADS];
    static final String[] seenIds = new String[THREADS];
    static final int[] seenInits = new int[THREADS];
    static final long[] seenTable = new long[THREADS];
    static final Object[] madeRemotely = new Object[THREADS];

    static synchronized void add(long n, double d) {
        total += n;
        doubleSum += d;
    }

    public static void main(String[] args) throws Exception {
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                seenNanos[k] = Stamp.NANOS;
                seenIds[k] = Stamp.ID;
                seenInits[k] = Stamp.initializations;
                long tableSum = 0;
                for (int v : Stamp.TABLE) {
                    tableSum += v;
                }
                seenTable[k] = tableSum;
                long g = 0;
                for (int i = 1; i <= ADDS; i++) {
                    add(i, 0.5);
                    if (i % 25 == 0) {
                        g += Churn.garbage(2000);
                    }
                }
                slots[k] = 100 + k;
                madeRemotely[k] = new int[] {k, (int) (g & 0), 7};
                if (k == 2) {
                    lastWriter = "thread-" + k;
                }
            }, "statics-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);

        Checks c = new Checks("SharedStatics");
        c.equal("Stamp.initializations (static initializer runs)", Stamp.initializations, 1);
        for (int k = 0; k < THREADS; k++) {
            c.equal("Stamp.NANOS seen by thread " + k, seenNanos[k], Stamp.NANOS);
            c.equal("Stamp.ID seen by thread " + k, seenIds[k], Stamp.ID);
            c.equal("Stamp.initializations seen by thread " + k, seenInits[k], 1);
            c.equal("sum of Stamp.TABLE seen by thread " + k, seenTable[k], 1240);
            c.equal("slots[" + k + "]", slots[k], 100 + k);
            Object made = madeRemotely[k];
            c.check(made instanceof int[] && Arrays.equals((int[]) made, new int[] {k, 0, 7}),
                    "madeRemotely[" + k + "] is " + (made instanceof int[]
                            ? Arrays.toString((int[]) made) : String.valueOf(made))
                            + ", expected [" + k + ", 0, 7]");
        }
        c.equal("total", total, (long) THREADS * ADDS * (ADDS + 1) / 2);
        c.equal("doubleSum", doubleSum, THREADS * ADDS * 0.5);
        c.equal("lastWriter", lastWriter, "thread-2");
        c.done();
    }
}
