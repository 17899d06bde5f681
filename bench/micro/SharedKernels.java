/**
 * The inner loops of bench/apps' programs on arrays the main thread made,
 * run by one other thread (under djava a thread server's, so every array is
 * a replica held there, and every access pays its cached check): a matrix
 * product's (four reads a step, a row of b each), a stream cipher's byte
 * XOR (a read and a write of one element), a red-black stencil's
 * half-sweep (three rows read, one element read and written) and a daxpy
 * (y += k * x). ns per inner step, the best of the timed rounds after the
 * warm-up ones; stock HotSpot's figures are the local baseline.
 *
 * usage: java SharedKernels [ROUNDS]
 */
public class SharedKernels {
    static final int N = 300;
    static final int BYTES = 4 << 20;
    static final int DOUBLES = 1 << 20;

    static double matrix(double[][] a, double[][] b, double[][] c) {
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                double sum = 0;
                for (int k = 0; k < N; k++) {
                    sum += a[i][k] * b[k][j];
                }
                c[i][j] = sum;
            }
        }
        return (double) N * N * N;
    }

    static double xor(byte[] b, int pass) {
        long x = 0x9E3779B97F4A7C15L * (pass + 1);
        for (int i = 0; i < b.length; i++) {
            b[i] ^= (byte) (x >>> ((i & 7) << 3));
        }
        return b.length;
    }

    static double stencil(double[][] g) {
        for (int i = 1; i < N - 1; i++) {
            double[] row = g[i], up = g[i - 1], down = g[i + 1];
            for (int j = 1 + i % 2; j < N - 1; j += 2) {
                double average = (up[j] + down[j] + row[j - 1] + row[j + 1]) / 4;
                row[j] += 1.25 * (average - row[j]);
            }
        }
        return (double) (N - 2) * (N - 2) / 2;
    }

    static double daxpy(double[] x, double[] y, double k) {
        for (int i = 0; i < y.length; i++) {
            y[i] += k * x[i];
        }
        return y.length;
    }

    interface Kernel {
        double run(int round);
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        double[][] a = new double[N][N], b = new double[N][N], c = new double[N][N];
        double[][] g = new double[N][N];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                a[i][j] = i + j;
                b[i][j] = i - j;
                g[i][j] = (i * 7 + j) % 10;
            }
        }
        byte[] bytes = new byte[BYTES];
        double[] x = new double[DOUBLES], y = new double[DOUBLES];
        for (int i = 0; i < DOUBLES; i++) {
            x[i] = i % 100;
        }
        String[] names = {"matrix", "xor", "stencil", "daxpy"};
        Kernel[] kernels = {
            r -> matrix(a, b, c), r -> xor(bytes, r), r -> stencil(g), r -> daxpy(x, y, 0.5 + r)
        };
        double[] best = new double[kernels.length];
        Thread worker = new Thread(() -> {
            for (int k = 0; k < kernels.length; k++) {
                best[k] = Double.MAX_VALUE;
                for (int r = 0; r < rounds; r++) {
                    long t0 = System.nanoTime();
                    double steps = kernels[k].run(r);
                    double ns = (System.nanoTime() - t0) / steps;
                    if (r >= rounds / 2) {
                        best[k] = Math.min(best[k], ns);
                    }
                }
            }
        }, "kernels");
        worker.start();
        worker.join();
        for (int k = 0; k < kernels.length; k++) {
            System.out.printf("%s %.3f ns%n", names[k], best[k]);
        }
    }
}
