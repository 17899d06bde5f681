/**
 * The seed's Appendix A microbenchmarks ("Transparent Distributed Java",
 * Table 6) on local objects: each loop body as the seed wrote it, timed over
 * many iterations and reported in nanoseconds per loop iteration.
 *
 * usage: java Micro ITERATIONS        prints "name ns" lines
 */
public class Micro {
    static class SmallObject {
        public int var1;
        public int var2;
        public SmallObject o;
    }

    static int sink;

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        SmallObject localObject = new SmallObject();
        localObject.o = new SmallObject();
        SmallObject[] localObjectArray = new SmallObject[100];
        int j = 0;
        long t;

        t = System.nanoTime();
        for (int i = 0; i < n; i++) {
        }
        report("empty-loop", t, n);

        t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObject = new SmallObject();
        }
        report("new-object", t, n);

        t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObjectArray[i % 100] = localObject;
        }
        report("array-ref-write", t, n);

        t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObject = localObjectArray[i % 100];
        }
        report("array-ref-read", t, n);

        t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObject.var1 = i;
            localObject.var2 = i;
        }
        report("int-field-write", t, n);

        t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            j = localObject.var1;
            j = localObject.var2;
        }
        report("int-field-read", t, n);

        SmallObject other = new SmallObject();
        t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            localObject.o = other;
        }
        report("ref-field-write", t, n);

        t = System.nanoTime();
        for (int i = 0; i < n; i++) {
            other = localObject.o;
        }
        report("ref-field-read", t, n);
        sink = j + (other == null ? 0 : 1);
    }

    static void report(String name, long start, int n) {
        System.out.printf("%s %.2f%n", name, (System.nanoTime() - start) / (double) n);
    }
}
