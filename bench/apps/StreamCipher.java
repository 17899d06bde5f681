/**
 * A stream cipher over one large byte[]: each thread encrypts its own
 * quarter (disjoint ranges), several passes, with a keystream from a
 * xorshift generator seeded by the position, so every byte's result is
 * independent of the thread that computed it. The commonest data-parallel
 * shape (a cipher, a filter, a codec over one buffer); under djava the array
 * is coherent per block, so each thread's node fetches its own range once
 * and the threads never conflict. Checks its result against a
 * single-threaded run.
 *
 * usage: java StreamCipher [MEGABYTES] [PASSES] [THREADS]
 */
public class StreamCipher {
    public static void main(String[] args) throws Exception {
        int megabytes = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int passes = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        int n = megabytes << 20;
        byte[] data = plaintext(n);
        long start = System.nanoTime();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int from = (int) ((long) n * t / threads), to = (int) ((long) n * (t + 1) / threads);
            workers[t] = new Thread(() -> {
                for (int p = 0; p < passes; p++) {
                    encrypt(data, from, to, p);
                }
            }, "cipher-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        long elapsed = System.nanoTime() - start;
        byte[] expected = plaintext(n);
        for (int p = 0; p < passes; p++) {
            encrypt(expected, 0, n, p);
        }
        for (int i = 0; i < n; i++) {
            if (data[i] != expected[i]) {
                System.out.println("WRONG at " + i + ": " + data[i] + " != " + expected[i]);
                System.exit(1);
            }
        }
        System.out.printf("StreamCipher %d MiB, %d passes by %d threads: correct, %.1f ms%n",
                megabytes, passes, threads, elapsed / 1e6);
    }

    static byte[] plaintext(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 131 + (i >>> 9));
        }
        return b;
    }

    /** XORs bytes [from, to) with the keystream of pass p, 8 bytes per step. */
    static void encrypt(byte[] b, int from, int to, int pass) {
        long x = 0;
        for (int i = from; i < to; i++) {
            if (i == from || (i & 7) == 0) {
                x = ((long) (i >>> 3) + 1) * 0x9E3779B97F4A7C15L ^ (pass + 1) * 0xBF58476D1CE4E5B9L;
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
            b[i] ^= (byte) (x >>> ((i & 7) << 3));
        }
    }
}
