/**
 * Loops over local objects, where C2's checks matter most (issue 21): a
 * long[] sum, a double[] daxpy (y += k * x) and a field incremented in a
 * loop, 4,096 elements or iterations per call, ns per element, two timed
 * rounds after six of warm-up. Stock HotSpot vectorizes the daxpy
 * (SuperWord); with -XX:-UseSuperWord it unrolls it as djava's C2 does.
 *
 * usage: java LocalLoops           (djava: build/bin/djava -server
 *        -XX:+UnlockExperimentalVMOptions -XX:+DjavaCompileWithC2 LocalLoops)
 */
public class LocalLoops {
    int f;

    static long sum(long[] a) {
        long s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i];
        }
        return s;
    }

    static void daxpy(double k, double[] x, double[] y) {
        for (int i = 0; i < x.length; i++) {
            y[i] += k * x[i];
        }
    }

    static int field(LocalLoops o, int n) {
        for (int i = 0; i < n; i++) {
            o.f += i;
        }
        return o.f;
    }

    public static void main(String[] args) {
        final int n = 4096, calls = 20_000;
        long[] a = new long[n];
        double[] x = new double[n], y = new double[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
            x[i] = i;
        }
        LocalLoops o = new LocalLoops();
        for (int round = 0; round < 8; round++) {
            long t0 = System.nanoTime(), s = 0;
            for (int i = 0; i < calls; i++) {
                s += sum(a);
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                daxpy(0.5, x, y);
            }
            long t2 = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                s += field(o, n);
            }
            long t3 = System.nanoTime();
            double per = (double) calls * n;
            if (round >= 6) {
                System.out.printf("sum %.3f daxpy %.3f field %.3f ns (%d)%n",
                        (t1 - t0) / per, (t2 - t1) / per, (t3 - t2) / per, s);
            }
        }
    }
}
