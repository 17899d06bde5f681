import java.util.ArrayDeque;
import java.util.Deque;

/*
 * @test
 * @summary Threads, synchronized and wait/notifyAll give exact results on the djava VM
 *          (the local baseline of what later runs distributed).
 * @run main/othervm ThreadsAndMonitors
 * @run main/othervm -Xmn2m ThreadsAndMonitors
 */
public class ThreadsAndMonitors {
    static final int THREADS = 4;
    static final int INCREMENTS = 20_000;
    static final int ITEMS = 5_000;

    static long counter;

    public static void main(String[] args) throws Exception {
        countUnderLock();
        producerConsumer();
    }

    static void countUnderLock() throws InterruptedException {
        Object lock = new Object();
        Thread[] workers = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            workers[t] = new Thread(() -> {
                for (int i = 0; i < INCREMENTS; i++) {
                    synchronized (lock) {
                        counter++;
                    }
                }
            });
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        if (counter != (long) THREADS * INCREMENTS) {
            throw new AssertionError("counter " + counter + " != " + THREADS * INCREMENTS);
        }
    }

    /** A bounded buffer with wait/notifyAll: nothing lost, nothing duplicated. */
    static void producerConsumer() throws InterruptedException {
        Deque<Integer> buffer = new ArrayDeque<>();
        int capacity = 8;
        long[] sum = new long[1];
        Thread producer = new Thread(() -> {
            for (int i = 1; i <= ITEMS; i++) {
                synchronized (buffer) {
                    while (buffer.size() == capacity) {
                        waitOn(buffer);
                    }
                    buffer.addLast(i);
                    buffer.notifyAll();
                }
            }
        });
        Thread consumer = new Thread(() -> {
            for (int n = 0; n < ITEMS; n++) {
                synchronized (buffer) {
                    while (buffer.isEmpty()) {
                        waitOn(buffer);
                    }
                    sum[0] += buffer.removeFirst();
                    buffer.notifyAll();
                }
            }
        });
        producer.start();
        consumer.start();
        producer.join();
        consumer.join();
        long expected = (long) ITEMS * (ITEMS + 1) / 2;
        if (sum[0] != expected || !buffer.isEmpty()) {
            throw new AssertionError("sum " + sum[0] + " != " + expected + ", left " + buffer);
        }
    }

    static void waitOn(Object o) {
        try {
            o.wait();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
