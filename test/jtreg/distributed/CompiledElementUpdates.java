/*
 * @test
 * @summary Element updates (a[i] += 1, b[i] ^= k, d[i] += 0.5: a load and a store of one
 *          element with arithmetic between, which C1 checks once, for writing) by two threads
 *          on different thread servers taking turns under a shared lock, on a small int[]
 *          kept whole and on a byte[] and a double[] kept in blocks: the arrays move between
 *          the nodes every turn, and main sees every update after join.
 * @library /lib
 * @run main/othervm CompiledElementUpdates
 */
public class CompiledElementUpdates {
    static final int TURNS = 40;
    static final int PASSES = 25;
    static final int INTS = 256;
    static final int BYTES = 64 * 1024;
    static final int DOUBLES = 8 * 1024;

    static final class Shared {
        final int[] ints = new int[INTS];
        final byte[] bytes = new byte[BYTES];
        final double[] doubles = new double[DOUBLES];
        int turn;
    }

    static void increment(int[] a) {
        for (int i = 0; i < a.length; i++) {
            a[i] += 1;
        }
    }

    static void scramble(byte[] b, int key) {
        for (int i = 0; i < b.length; i++) {
            b[i] ^= (byte) (key + i);
        }
    }

    static void add(double[] d) {
        for (int i = 0; i < d.length; i++) {
            d[i] += 0.5;
        }
    }

    // What a byte holds after every turn's passes: each XOR with the same
    // key twice cancels, so only an odd count of passes of a turn stays.
    static byte expectedByte(int i) {
        byte b = 0;
        for (int turn = 0; turn < TURNS; turn++) {
            for (int p = 0; p < PASSES; p++) {
                b ^= (byte) (turn * 7 + 1 + i);
            }
        }
        return b;
    }

    public static void main(String[] args) throws Exception {
        Shared s = new Shared();
        Object lock = new Object();
        Thread[] threads = new Thread[2];
        for (int t = 0; t < 2; t++) {
            final int me = t;
            threads[t] = new Thread(() -> {
                try {
                    for (int k = 0; k < TURNS / 2; k++) {
                        synchronized (lock) {
                            while (s.turn % 2 != me) {
                                lock.wait();
                            }
                            for (int p = 0; p < PASSES; p++) {
                                increment(s.ints);
                                scramble(s.bytes, s.turn * 7 + 1);
                                add(s.doubles);
                            }
                            s.turn++;
                            lock.notifyAll();
                        }
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "updates-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);

        Checks c = new Checks("CompiledElementUpdates");
        c.equal("turns", s.turn, TURNS);
        int bad = 0;
        for (int i = 0; i < INTS; i++) {
            if (s.ints[i] != TURNS * PASSES && bad++ < 5) {
                c.fail("ints[" + i + "] = " + s.ints[i] + ", expected " + TURNS * PASSES);
            }
        }
        for (int i = 0; i < BYTES; i++) {
            if (s.bytes[i] != expectedByte(i) && bad++ < 10) {
                c.fail("bytes[" + i + "] = " + s.bytes[i] + ", expected " + expectedByte(i));
            }
        }
        for (int i = 0; i < DOUBLES; i++) {
            if (s.doubles[i] != TURNS * PASSES * 0.5 && bad++ < 15) {
                c.fail("doubles[" + i + "] = " + s.doubles[i] + ", expected " + TURNS * PASSES * 0.5);
            }
        }
        c.equal("wrong elements", bad, 0);
        c.done();
    }
}
