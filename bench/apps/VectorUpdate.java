/**
 * daxpy and a dot product over two large double[] vectors (4 M elements by
 * default, 32 MiB each: more than one message may carry, so under djava only
 * arrays in blocks can share them): each thread updates y += a * x over its
 * own range, then a barrier, then each sums x[i] * y[i] over its range; the
 * main thread adds the partial sums. Checks its result against a
 * single-threaded run.
 *
 * usage: java VectorUpdate [MEGAELEMENTS] [ROUNDS] [THREADS]
 */
import java.util.concurrent.CyclicBarrier;

public class VectorUpdate {
    public static void main(String[] args) throws Exception {
        int mega = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        int n = mega << 20;
        double[] x = new double[n];
        double[] y = new double[n];
        fill(x, y);
        double[] partial = new double[threads];
        CyclicBarrier barrier = new CyclicBarrier(threads);
        long start = System.nanoTime();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int k = t;
            int from = (int) ((long) n * t / threads), to = (int) ((long) n * (t + 1) / threads);
            workers[t] = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        daxpy(0.5 + r, x, y, from, to);
                    }
                    barrier.await();
                    partial[k] = dot(x, y, from, to);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "vector-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        double sum = 0;
        for (double p : partial) {
            sum += p;
        }
        long elapsed = System.nanoTime() - start;
        double[] ex = new double[n];
        double[] ey = new double[n];
        fill(ex, ey);
        for (int r = 0; r < rounds; r++) {
            daxpy(0.5 + r, ex, ey, 0, n);
        }
        double expected = 0;
        for (int t = 0; t < threads; t++) {
            expected += dot(ex, ey, (int) ((long) n * t / threads), (int) ((long) n * (t + 1) / threads));
        }
        for (int i = 0; i < n; i++) {
            if (y[i] != ey[i]) {
                System.out.println("WRONG at " + i + ": " + y[i] + " != " + ey[i]);
                System.exit(1);
            }
        }
        if (sum != expected) {
            System.out.println("WRONG dot product: " + sum + " != " + expected);
            System.exit(1);
        }
        System.out.printf("VectorUpdate %d M elements, %d rounds by %d threads: correct, %.1f ms%n",
                mega, rounds, threads, elapsed / 1e6);
    }

    static void fill(double[] x, double[] y) {
        for (int i = 0; i < x.length; i++) {
            x[i] = (i % 1000) * 0.001;
            y[i] = 1.0 / (1 + (i % 97));
        }
    }

    static void daxpy(double a, double[] x, double[] y, int from, int to) {
        for (int i = from; i < to; i++) {
            y[i] += a * x[i];
        }
    }

    static double dot(double[] x, double[] y, int from, int to) {
        double s = 0;
        for (int i = from; i < to; i++) {
            s += x[i] * y[i];
        }
        return s;
    }
}
