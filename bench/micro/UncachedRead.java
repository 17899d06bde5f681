// An uncached field read in the interpreter: the object's bytes are at their
// home sos-server (not dirty at another node), this node has no copy, and
// a getfield fetches them: one round trip, as the seed's uncached read (its
// objects always lived on the server).
//
// Each round a thread (on a thread server) makes N small objects and waits;
// a second thread (on the other server) reads them all, which writes them
// home (the first keeps read copies); then main, on the launcher, reads one
// int field of each, every read a miss. Prints the mean microseconds per
// read, one line per round. bench/micro/uncached.py runs it beside a TCP
// ping-pong of the same machine (docs/BENCHMARKS.md).
//
//   DJAVA_THREAD_SERVERS=2 build/bin/djava -cp CLASSES UncachedRead 2000 5
public class UncachedRead {
    static final class Cell {
        int v;
        Cell(int v) { this.v = v; }
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        for (int r = 0; r < rounds; r++) {
            Cell[] cells = new Cell[n];
            java.util.concurrent.CountDownLatch made = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch read = new java.util.concurrent.CountDownLatch(1);
            Thread maker = new Thread(() -> {
                for (int i = 0; i < n; i++) cells[i] = new Cell(i);
                made.countDown();
                try { read.await(); } catch (InterruptedException e) { throw new AssertionError(e); }
            });
            maker.start();  // still running when the reader starts: the other server
            made.await();
            long[] sum = new long[1];
            Thread reader = new Thread(() -> {
                long s = 0;
                for (int i = 0; i < n; i++) s += cells[i].v;
                sum[0] = s;
            });
            reader.start();
            reader.join();
            read.countDown();
            maker.join();
            Cell first = cells[0];  // the array's own miss, outside the timing
            long s = first.v;
            long t0 = System.nanoTime();
            for (int i = 1; i < n; i++) s += cells[i].v;
            long t = System.nanoTime() - t0;
            long expected = (long) n * (n - 1) / 2;
            if (s != expected || sum[0] != expected) {
                throw new AssertionError("sums " + s + " and " + sum[0] + ", expected " + expected);
            }
            System.out.printf("uncached read %.2f us%n", t / 1e3 / (n - 1));
        }
    }
}
