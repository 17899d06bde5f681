// Cached shared access in the interpreter against local access: the same
// loops on a local object and on a shared one this node holds in M.
//
//   build/jvm/base-image/bin/javac -cp build/jdk/lib/djava-runtime.jar -d /tmp/ca \
//       bench/micro/CachedAccess.java
//   DJAVA_THREAD_SERVERS=1 build/bin/djava -cp /tmp/ca CachedAccess 3000000
//
// Prints ns per iteration and the ratio, five rounds (docs/BENCHMARKS.md).
import djava.runtime.Node;
public class CachedAccess {
    static class Box { int i; int[] a = new int[16]; }
    static long loop(Box b, int n) {
        long t0 = System.nanoTime();
        for (int k = 0; k < n; k++) { b.i++; }
        return System.nanoTime() - t0;
    }
    static long readLoop(Box b, int n) {
        long t0 = System.nanoTime(); int s = 0;
        for (int k = 0; k < n; k++) { s += b.i; }
        if (s == 42) System.out.print("");
        return System.nanoTime() - t0;
    }
    static long arrLoop(Box b, int n) {
        long t0 = System.nanoTime(); int[] a = b.a;
        for (int k = 0; k < n; k++) { a[k & 15] = k; }
        return System.nanoTime() - t0;
    }
    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        Box local = new Box(), shared = new Box();
        Node.publish(shared); Node.publish(shared.a);
        for (int r = 0; r < 5; r++) {
            double l = loop(local, n) / (double) n, s = loop(shared, n) / (double) n;
            double lr = readLoop(local, n) / (double) n, sr = readLoop(shared, n) / (double) n;
            double la = arrLoop(local, n) / (double) n, sa = arrLoop(shared, n) / (double) n;
            System.out.printf("inc local %.1f shared %.1f (%.2fx) | read local %.1f shared %.1f (%.2fx) | array store local %.1f shared %.1f (%.2fx)%n",
                l, s, s / l, lr, sr, sr / lr, la, sa, sa / la);
        }
    }
}
