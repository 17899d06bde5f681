/*
 * @test
 * @summary Hand-offs through SynchronousQueues (fair and unfair) between a producer and
 *          three consumers on the thread servers: every value arrives exactly once. Each
 *          hand-off publishes a fresh node object that other nodes read and write at once,
 *          so a node asked for an object it has just published must find its replica
 *          (it once answered "no replica here to flush", and the reader got 0 bytes).
 * @run main/othervm SynchronousQueueHandOffs 6000
 */
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.atomic.AtomicLong;

public class SynchronousQueueHandOffs {
    static final int CONSUMERS = 3;
    static final int END = -1;

    public static void main(String[] args) throws Exception {
        int items = Integer.parseInt(args[0]);
        for (boolean fair : new boolean[] {true, false}) {
            SynchronousQueue<Integer> queue = new SynchronousQueue<>(fair);
            AtomicLong count = new AtomicLong();
            AtomicLong sum = new AtomicLong();
            AtomicLong squares = new AtomicLong();
            Thread[] consumers = new Thread[CONSUMERS];
            Throwable[] failure = new Throwable[1];
            for (int c = 0; c < CONSUMERS; c++) {
                consumers[c] = new Thread(() -> {
                    try {
                        for (int v; (v = queue.take()) != END; ) {
                            count.incrementAndGet();
                            sum.addAndGet(v);
                            squares.addAndGet((long) v * v);
                        }
                    } catch (Throwable t) {
                        synchronized (failure) {
                            failure[0] = t;
                        }
                    }
                });
                consumers[c].start();
            }
            long expectSum = 0, expectSquares = 0;
            for (int i = 1; i <= items; i++) {
                queue.put(i);
                expectSum += i;
                expectSquares += (long) i * i;
            }
            for (int c = 0; c < CONSUMERS; c++) {
                queue.put(END);
            }
            for (Thread t : consumers) {
                t.join();
            }
            synchronized (failure) {
                if (failure[0] != null) {
                    throw new AssertionError("a consumer failed (fair " + fair + ")", failure[0]);
                }
            }
            if (count.get() != items || sum.get() != expectSum || squares.get() != expectSquares) {
                throw new AssertionError("fair " + fair + ": " + count.get() + " values, sum " + sum.get()
                        + ", sum of squares " + squares.get() + "; expected " + items + ", " + expectSum
                        + ", " + expectSquares);
            }
            System.out.println("fair " + fair + ": " + items + " hand-offs");
        }
    }
}
