/**
 * Red/black successive over-relaxation on a square grid, after the Manta
 * report's SOR (fast-parallel-java-1998): each thread owns a band of rows and
 * updates its red points, then (after a barrier) its black points; only the
 * rows at band edges are read by a neighbour, so the traffic per iteration is
 * two rows per thread. Checks its result against a single-threaded run.
 *
 * usage: java SOR [N] [ITERATIONS] [THREADS]
 */
import java.util.concurrent.CyclicBarrier;

public class SOR {
    static final double OMEGA = 1.25;

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        double[][] grid = initial(n);
        double[][] expected = initial(n);
        long start = System.nanoTime();
        CyclicBarrier barrier = new CyclicBarrier(threads);
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int from = 1 + (n - 2) * t / threads, to = 1 + (n - 2) * (t + 1) / threads;
            workers[t] = new Thread(() -> {
                try {
                    for (int it = 0; it < iterations; it++) {
                        sweep(grid, from, to, 0);
                        barrier.await();
                        sweep(grid, from, to, 1);
                        barrier.await();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "sor-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        long elapsed = System.nanoTime() - start;
        for (int it = 0; it < iterations; it++) {
            sweep(expected, 1, n - 1, 0);
            sweep(expected, 1, n - 1, 1);
        }
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (grid[i][j] != expected[i][j]) {
                    System.out.println("WRONG at " + i + "," + j + ": " + grid[i][j] + " != " + expected[i][j]);
                    System.exit(1);
                }
            }
        }
        System.out.printf("SOR %dx%d, %d iterations by %d threads: correct, %.1f ms%n",
                n, n, iterations, threads, elapsed / 1e6);
    }

    static double[][] initial(int n) {
        double[][] g = new double[n][n];
        for (int i = 0; i < n; i++) {
            g[i][0] = 1.0;          // a hot left edge
            g[i][n - 1] = 0.0;
        }
        for (int j = 0; j < n; j++) {
            g[0][j] = (double) j / n;
            g[n - 1][j] = 1.0 - (double) j / n;
        }
        return g;
    }

    /** Updates the points of one colour in rows [from, to). */
    static void sweep(double[][] g, int from, int to, int colour) {
        int n = g.length;
        for (int i = from; i < to; i++) {
            double[] row = g[i], up = g[i - 1], down = g[i + 1];
            for (int j = 1 + (i + colour) % 2; j < n - 1; j += 2) {
                double average = (up[j] + down[j] + row[j - 1] + row[j + 1]) / 4;
                row[j] += OMEGA * (average - row[j]);
            }
        }
    }
}
