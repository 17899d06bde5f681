/*
 * @test
 * @summary Threads on the thread servers compute into their own fields and into result objects
 *          main made; main reads a long, a double, a String, an array and a linked list built
 *          remotely, exactly, after join.
 * @library /lib
 * @run main/othervm ResultsAfterJoin
 */
public class ResultsAfterJoin {
    static final int THREADS = 4;
    static final int LIST_LENGTH = 100;

    static final class Cell {
        final int value;
        final String label;
        Cell next;

        Cell(int value, String label) {
            this.value = value;
            this.label = label;
        }
    }

    /** Made by main, filled in by a worker. */
    static final class Result {
        long product;
        int[] digits;
        Object[] mixed;
    }

    static long sumOfSquares(int k) {
        long s = 0;
        for (int i = 1; i <= 1000 + k; i++) {
            s += (long) i * i * (k + 1);
        }
        return s;
    }

    static double harmonic(int k) {
        double h = 0;
        for (int i = 1; i <= 500 + k; i++) {
            h += 1.0 / i;
        }
        return h * Math.sqrt(k + 2);
    }

    static String text(int k) {
        StringBuilder sb = new StringBuilder("worker-" + k + ":");
        for (int i = 0; i < 20; i++) {
            sb.append((char) ('a' + (i + k) % 26));
        }
        return sb.toString();
    }

    static long product(int k) {
        long p = 1;
        for (int i = 1; i <= 15 + k; i++) {
            p *= i;
        }
        return p;
    }

    static final class Worker extends Thread {
        final int k;
        final Result result;
        long longResult;
        double doubleResult;
        String stringResult;
        Cell list;
        long garbage;

        Worker(int k, Result result) {
            super("worker-" + k);
            this.k = k;
            this.result = result;
        }

        @Override
        public void run() {
            longResult = sumOfSquares(k);
            doubleResult = harmonic(k);
            stringResult = text(k);
            Cell head = null;
            for (int i = LIST_LENGTH - 1; i >= 0; i--) {
                Cell cell = new Cell(i * 10 + k, "cell " + i + " of " + k);
                cell.next = head;
                head = cell;
                if (i % 10 == 0) {
                    garbage += Churn.garbage(2000);
                }
            }
            list = head;
            result.product = product(k);
            result.digits = Long.toString(result.product).chars().map(ch -> ch - '0').toArray();
            result.mixed = new Object[] {Integer.valueOf(k), "mixed-" + k, new long[] {k, -k}, head};
        }
    }

    public static void main(String[] args) throws Exception {
        Worker[] workers = new Worker[THREADS];
        Result[] results = new Result[THREADS];
        for (int k = 0; k < THREADS; k++) {
            results[k] = new Result();
            workers[k] = new Worker(k, results[k]);
            workers[k].start();
        }
        Threads.joinAll(workers);
        Checks c = new Checks("ResultsAfterJoin");
        for (int k = 0; k < THREADS; k++) {
            Worker w = workers[k];
            Result r = results[k];
            String who = "worker " + k + ": ";
            c.equal(who + "longResult", w.longResult, sumOfSquares(k));
            c.check(Double.doubleToRawLongBits(w.doubleResult) == Double.doubleToRawLongBits(harmonic(k)),
                    who + "doubleResult " + w.doubleResult + ", expected " + harmonic(k));
            c.equal(who + "stringResult", w.stringResult, text(k));
            int n = 0;
            for (Cell cell = w.list; cell != null; cell = cell.next, n++) {
                if (cell.value != n * 10 + k || !("cell " + n + " of " + k).equals(cell.label)) {
                    c.fail(who + "list cell " + n + " is (" + cell.value + ", " + cell.label + ")");
                    break;
                }
            }
            c.equal(who + "list length", n, LIST_LENGTH);
            c.equal(who + "result.product", r.product, product(k));
            c.equal(who + "result.digits", r.digits == null ? null : java.util.Arrays.toString(r.digits),
                    java.util.Arrays.toString(Long.toString(product(k)).chars().map(ch -> ch - '0').toArray()));
            Object[] m = r.mixed;
            c.check(m != null && m.length == 4 && Integer.valueOf(k).equals(m[0]) && ("mixed-" + k).equals(m[1])
                    && m[2] instanceof long[] && ((long[]) m[2])[0] == k && ((long[]) m[2])[1] == -k
                    && m[3] == w.list,
                    who + "result.mixed is " + (m == null ? null : java.util.Arrays.deepToString(
                            java.util.Arrays.copyOf(m, Math.min(3, m.length))))
                            + " (and mixed[3] must be the list's head)");
        }
        c.done();
    }
}
