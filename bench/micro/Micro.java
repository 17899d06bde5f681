/**
 * The seed's Appendix A microbenchmarks ("Transparent Distributed Java",
 * Table 6): each loop body as the seed wrote it, timed over many iterations
 * and reported in nanoseconds per loop iteration.
 *
 * The loops are static methods that take their objects as arguments, so the
 * same code runs on local objects (main here, on every VM) and on shared
 * ones (SharedMicro, under djava: cached here, or uncached). The last four
 * are the bodies of the seed's uncached ("∞") loops, one field access of
 * the array element a[i] per iteration; main runs them on local objects,
 * which is what their rows compare an uncached access with.
 *
 * usage: java Micro ITERATIONS        prints "name ns" lines (bench/micro/run.py,
 *                                     bench/micro/table6.py)
 */
public class Micro {
    static final class SmallObject {
        public int var1;
        public int var2;
        public SmallObject o;

        /** The seed's init(): every object of its uncached loops has its own o. */
        SmallObject init() {
            o = new SmallObject();
            return this;
        }
    }

    /** Keeps the values the loops read alive (for the JIT's sake). */
    static int sink;

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        SmallObject localObject = new SmallObject().init();
        SmallObject other = new SmallObject();
        SmallObject[] localObjectArray = new SmallObject[100];
        SmallObject[] elements = elements(100);
        report("empty-loop", emptyLoop(n));
        report("new-object", newObject(n));
        report("array-ref-write", arrayRefWrite(localObjectArray, localObject, n));
        report("array-ref-read", arrayRefRead(localObjectArray, n));
        report("int-field-write", intFieldWrite(localObject, n));
        report("int-field-read", intFieldRead(localObject, n));
        report("ref-field-write", refFieldWrite(localObject, other, n));
        report("ref-field-read", refFieldRead(localObject, n));
        report("uncached-int-field-write", elementIntFieldWrite(elements, 0, n));
        report("uncached-int-field-read", elementIntFieldRead(elements, 0, n));
        report("uncached-ref-field-write", elementRefFieldWrite(elements, other, 0, n));
        report("uncached-ref-field-read", elementRefFieldRead(elements, 0, n));
    }

    /** n objects as the seed's setup made them: so[i] = new SmallObject(); so[i].init(). */
    static SmallObject[] elements(int n) {
        SmallObject[] a = new SmallObject[n];
        for (int i = 0; i < n; i++) {
            a[i] = new SmallObject().init();
            a[i].var1 = i;
        }
        return a;
    }

    static void report(String name, double ns) {
        System.out.printf("%s %.4f%n", name, ns);
    }

    static double perIteration(long start, int n) {
        return (System.nanoTime() - start) / (double) n;
    }

    static double emptyLoop(int n) {
        long t = System.nanoTime();
        for (int i = 0; i < n; i++) {
        }
        return perIteration(t, n);
    }

    static double newObject(int n) {
        SmallObject localObject = null;
        long t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObject = new SmallObject();
        }
        double ns = perIteration(t, n);
        sink += localObject.var1;
        return ns;
    }

    /** a has 100 elements. */
    static double arrayRefWrite(SmallObject[] localObjectArray, SmallObject localObject, int n) {
        long t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObjectArray[i % 100] = localObject;
        }
        return perIteration(t, n);
    }

    /** a has 100 elements. */
    static double arrayRefRead(SmallObject[] localObjectArray, int n) {
        SmallObject localObject = null;
        long t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObject = localObjectArray[i % 100];
        }
        double ns = perIteration(t, n);
        sink += localObject == null ? 0 : 1;
        return ns;
    }

    static double intFieldWrite(SmallObject localObject, int n) {
        long t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObject.var1 = i;
            localObject.var2 = i;
        }
        return perIteration(t, n);
    }

    static double intFieldRead(SmallObject localObject, int n) {
        int j = 0;
        long t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            j = localObject.var1;
            j = localObject.var2;
        }
        double ns = perIteration(t, n);
        sink += j;
        return ns;
    }

    static double refFieldWrite(SmallObject localObject, SmallObject other, int n) {
        long t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObject.o = other;
        }
        return perIteration(t, n);
    }

    static double refFieldRead(SmallObject localObject, int n) {
        SmallObject other = null;
        long t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            other = localObject.o;
        }
        double ns = perIteration(t, n);
        sink += other == null ? 0 : 1;
        return ns;
    }

    // The seed's uncached loops: iterations i = from .. from+n-1 access the
    // element a[i % a.length]. On local or cached objects (from 0, 100
    // elements) that is the loop shape of the array loops above; on
    // uncached ones (from 1, n = a.length - 1) every iteration touches an
    // object this node has no copy of (a[0] was touched outside the timing).

    static double elementIntFieldWrite(SmallObject[] a, int from, int n) {
        int len = a.length, end = from + n, j = 7;
        long t = System.nanoTime();
        for (int i = from; i < end; i++) {
            a[i % len].var1 = j;
        }
        return perIteration(t, n);
    }

    static double elementIntFieldRead(SmallObject[] a, int from, int n) {
        int len = a.length, end = from + n, j = 0;
        long t = System.nanoTime();
        for (int i = from; i < end; i++) {
            j = a[i % len].var1;
        }
        double ns = perIteration(t, n);
        sink += j;
        return ns;
    }

    static double elementRefFieldWrite(SmallObject[] a, SmallObject localObject, int from, int n) {
        int len = a.length, end = from + n;
        long t = System.nanoTime();
        for (int i = from; i < end; i++) {
            a[i % len].o = localObject;
        }
        return perIteration(t, n);
    }

    static double elementRefFieldRead(SmallObject[] a, int from, int n) {
        int len = a.length, end = from + n;
        SmallObject localObject = null;
        long t = System.nanoTime();
        for (int i = from; i < end; i++) {
            localObject = a[i % len].o;
        }
        double ns = perIteration(t, n);
        sink += localObject == null ? 0 : 1;
        return ns;
    }
}
