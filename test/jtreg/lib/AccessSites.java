/**
 * Access sites for the tests of C2's speculation on them
 * (CompiledSpeculationOn*Sites): a field read and write and an array element read
 * and write, each in a method of its own, which a test keeps from being inlined
 * (-XX:CompileCommand=dontinline,AccessSites::*) so that its own compiled code is
 * what runs after a warm-up.
 */
public final class AccessSites {
    private AccessSites() {}

    public static final class Cell {
        public long a;
        public long b;
    }

    public static long sum(Cell c) {
        return c.a + c.b;
    }

    public static void bump(Cell c, long by) {
        c.a += by;
        c.b -= by;
    }

    public static long element(long[] values, int i) {
        return values[i];
    }

    public static void setElement(long[] values, int i, long v) {
        values[i] = v;
    }

    /** Calls each site `times` times on `cell` and `values`; a sum of what they read. */
    public static long warmUp(Cell cell, long[] values, int times) {
        long sink = 0;
        for (int i = 0; i < times; i++) {
            bump(cell, i);
            sink += sum(cell);
            setElement(values, i & 15, i);
            sink += element(values, (i + 1) & 15);
        }
        return sink;
    }
}
