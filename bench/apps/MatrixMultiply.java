import java.lang.management.ManagementFactory;

/**
 * Matrix multiply as in the seed's section 5.3: the result matrix is split into
 * bands of rows, one band to a thread; the source matrices are shared and only
 * read. Checks its result against a single-threaded product.
 *
 * usage: java MatrixMultiply [N] [THREADS]
 */
public class MatrixMultiply {
    public static void main(String[] args) throws InterruptedException {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 128;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        double[][] a = fill(n, 1);
        double[][] b = fill(n, 2);
        double[][] c = new double[n][n];

        long start = System.nanoTime();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Band(a, b, c, n * t / threads, n * (t + 1) / threads, "worker-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        long elapsed = System.nanoTime() - start;

        double[][] expected = new double[n][n];
        multiplyRows(a, b, expected, 0, n);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (c[i][j] != expected[i][j]) {
                    System.out.println("WRONG at " + i + "," + j + ": " + c[i][j] + " != " + expected[i][j]);
                    System.exit(1);
                }
            }
        }
        System.out.printf("%dx%d product by %d threads: correct, %.1f ms (launcher process %d, VM %s)%n",
                n, n, threads, elapsed / 1e6, ProcessHandle.current().pid(),
                ManagementFactory.getRuntimeMXBean().getVmName());
    }

    /** One band of result rows, computed by its own thread. */
    static final class Band extends Thread {
        private final double[][] a, b, c;
        private final int from, to;

        Band(double[][] a, double[][] b, double[][] c, int from, int to, String name) {
            super(name);
            this.a = a;
            this.b = b;
            this.c = c;
            this.from = from;
            this.to = to;
        }

        @Override
        public void run() {
            multiplyRows(a, b, c, from, to);
            System.out.println(getName() + ": rows " + from + ".." + (to - 1)
                    + " computed in process " + ProcessHandle.current().pid());
        }
    }

    static double[][] fill(int n, int seed) {
        double[][] m = new double[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                m[i][j] = (i * 31 + j * 17 + seed) % 10;
            }
        }
        return m;
    }

    static void multiplyRows(double[][] a, double[][] b, double[][] c, int from, int to) {
        int n = b.length;
        for (int i = from; i < to; i++) {
            for (int j = 0; j < n; j++) {
                double sum = 0;
                for (int k = 0; k < n; k++) {
                    sum += a[i][k] * b[k][j];
                }
                c[i][j] = sum;
            }
        }
    }
}
