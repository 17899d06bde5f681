// An uncached field read in the interpreter: the object's bytes are at their
// home sos-server (not dirty at another node), this node has no copy, and
// a getfield fetches them: one round trip, as the seed's uncached read (its
// objects always lived on the server).
//
// Each round a thread (on a thread server) makes N small objects and waits;
// a second thread (on the other server) reads them all, which writes them
// home (the first keeps read copies); then main, on the launcher, reads one
// int field of each, every read a miss, each timed on its own (two
// System.nanoTime calls, about 50 ns, against microseconds). Prints the
// mean per read ("uncached read") and the percentiles ("single reads": on
// a host with fewer cores than busy threads the mean is mostly its tail,
// the few reads that waited for a core or for a pause of the directory),
// one line of each per round.
// bench/micro/uncached.py and latency.py run it beside a TCP ping-pong of
// the same machine (docs/BENCHMARKS.md); SharedMicro (table6.py) uses
// madeElsewhere for its uncached rows.
//
//   build/jvm/base-image/bin/javac -cp build/jdk/lib/djava-runtime.jar -d CLASSES \
//       bench/micro/Micro.java bench/micro/UncachedRead.java
//   DJAVA_THREAD_SERVERS=2 build/bin/djava -cp CLASSES UncachedRead 2000 5
import djava.runtime.Node;
import java.util.concurrent.CountDownLatch;

public class UncachedRead {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        for (int r = 0; r < rounds; r++) {
            Micro.SmallObject[] cells = madeElsewhere(n, true);
            long[] single = singleReads(cells, 1, n);
            checkVar1(cells, i -> i);
            System.out.printf("uncached read %.2f us%n", mean(single) / 1e3);
            System.out.printf("single reads p50 %.2f p90 %.2f p99 %.2f us%n",
                              percentile(single, 50) / 1e3, percentile(single, 90) / 1e3,
                              percentile(single, 99) / 1e3);
        }
    }

    /**
     * n objects made (as Micro.elements makes them) by a thread on a thread
     * server, none cached on this node but the array and element 0 (touched
     * here, outside any timing); so an access to a[1..n-1] is a miss. With
     * home, a thread on the other server has read them all, which wrote their
     * bytes home (both servers keep read copies): a read is one round trip
     * to the home. Without, they are modified (M) at the maker's server,
     * which wrote them last: a write must take them from there.
     */
    static Micro.SmallObject[] madeElsewhere(int n, boolean home) throws InterruptedException {
        Micro.SmallObject[] cells = new Micro.SmallObject[n];
        String[] nodes = new String[2];
        CountDownLatch made = new CountDownLatch(1);
        CountDownLatch read = new CountDownLatch(1);
        Thread maker = new Thread(() -> {
            nodes[0] = Node.nodeName();
            Micro.SmallObject[] mine = Micro.elements(n);
            for (int i = 0; i < n; i++) cells[i] = mine[i];
            made.countDown();
            if (home) {
                awaitUninterruptibly(read);  // still running: the reader goes to the other server
            }
        });
        maker.start();
        made.await();
        if (home) {
            long[] sum = new long[1];
            Thread reader = new Thread(() -> {
                nodes[1] = Node.nodeName();
                long s = 0;
                for (int i = 0; i < n; i++) s += cells[i].var1;
                sum[0] = s;
            });
            reader.start();
            reader.join();
            read.countDown();
            if (sum[0] != (long) n * (n - 1) / 2) {
                throw new AssertionError("the reader's sum " + sum[0]);
            }
            if (nodes[0].equals(nodes[1])) {
                throw new AssertionError("maker and reader both ran on " + nodes[0]);
            }
        }
        maker.join();
        if (nodes[0].equals(Node.nodeName())) {
            throw new AssertionError("the maker ran on this node, " + nodes[0]);
        }
        if (cells[0].var1 != 0) {  // the array's own miss and element 0's
            throw new AssertionError("cells[0].var1 = " + cells[0].var1);
        }
        return cells;
    }

    static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Nanoseconds of each read of a[from..to-1].var1, sorted. */
    static long[] singleReads(Micro.SmallObject[] a, int from, int to) {
        long[] ns = new long[to - from];
        int sum = 0;
        for (int i = from; i < to; i++) {
            long t = System.nanoTime();
            sum += a[i].var1;
            ns[i - from] = System.nanoTime() - t;
        }
        Micro.sink += sum;
        java.util.Arrays.sort(ns);
        return ns;
    }

    static double mean(long[] ns) {
        long sum = 0;
        for (long x : ns) {
            sum += x;
        }
        return (double) sum / ns.length;
    }

    static double percentile(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, sorted.length * p / 100)];
    }

    /** Checks every a[i].var1 == expected(i), after a loop (cached by then). */
    static void checkVar1(Micro.SmallObject[] a, java.util.function.IntUnaryOperator expected) {
        for (int i = 0; i < a.length; i++) {
            if (a[i].var1 != expected.applyAsInt(i)) {
                throw new AssertionError("a[" + i + "].var1 = " + a[i].var1 + ", expected "
                                         + expected.applyAsInt(i));
            }
        }
    }
}
