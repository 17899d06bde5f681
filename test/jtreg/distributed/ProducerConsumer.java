/*
 * @test
 * @summary A bounded buffer with wait/notifyAll between 1 producer and 2 consumers on the
 *          thread servers: every item is consumed exactly once (count, sum and each value).
 * @library /lib
 * @run main/othervm ProducerConsumer
 */
import java.util.ArrayDeque;
import java.util.Arrays;

public class ProducerConsumer {
    static final int ITEMS = 2000;
    static final int CAPACITY = 4;
    static final int CONSUMERS = 2;
    static final int END = -1;

    static final class Buffer {
        final ArrayDeque<Integer> items = new ArrayDeque<>();

        synchronized void put(int v) throws InterruptedException {
            while (items.size() >= CAPACITY) {
                wait();
            }
            items.addLast(v);
            notifyAll();
        }

        synchronized int take() throws InterruptedException {
            while (items.isEmpty()) {
                wait();
            }
            int v = items.removeFirst();
            notifyAll();
            return v;
        }
    }

    static final class Producer extends Thread {
        final Buffer buffer;
        long garbage;

        Producer(Buffer buffer) {
            super("producer");
            this.buffer = buffer;
        }

        @Override
        public void run() {
            try {
                for (int i = 1; i <= ITEMS; i++) {
                    buffer.put(i);
                    if (i % 20 == 0) {
                        garbage += Churn.garbage(300);
                    }
                }
                for (int k = 0; k < CONSUMERS; k++) {
                    buffer.put(END);
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static final class Consumer extends Thread {
        final Buffer buffer;
        final int[] taken = new int[ITEMS];
        int count;
        long sum;
        long garbage;

        Consumer(Buffer buffer, int k) {
            super("consumer-" + k);
            this.buffer = buffer;
        }

        @Override
        public void run() {
            try {
                for (int v; (v = buffer.take()) != END; ) {
                    taken[count++] = v;
                    sum += v;
                    if (count % 20 == 0) {
                        garbage += Churn.garbage(300);
                    }
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Buffer buffer = new Buffer();
        Producer producer = new Producer(buffer);
        Consumer[] consumers = new Consumer[CONSUMERS];
        for (int k = 0; k < CONSUMERS; k++) {
            consumers[k] = new Consumer(buffer, k);
            consumers[k].start();
        }
        producer.start();
        Thread[] all = Arrays.copyOf(consumers, CONSUMERS + 1, Thread[].class);
        all[CONSUMERS] = producer;
        Threads.joinAll(all);

        Checks c = new Checks("ProducerConsumer");
        int count = 0;
        long sum = 0;
        int[] times = new int[ITEMS + 1];
        for (Consumer con : consumers) {
            count += con.count;
            sum += con.sum;
            int previous = 0;
            for (int i = 0; i < con.count && i < ITEMS; i++) {
                int v = con.taken[i];
                if (v < 1 || v > ITEMS) {
                    c.fail(con.getName() + " took " + v + ", not an item");
                    continue;
                }
                times[v]++;
                c.check(v > previous, con.getName() + " took " + v + " after " + previous
                        + " (one producer: each consumer must see increasing items)");
                previous = v;
            }
        }
        c.equal("items consumed", count, ITEMS);
        c.equal("sum of items consumed", sum, (long) ITEMS * (ITEMS + 1) / 2);
        int lost = 0;
        int duplicated = 0;
        for (int v = 1; v <= ITEMS; v++) {
            if (times[v] == 0) {
                lost++;
            } else if (times[v] > 1) {
                duplicated++;
            }
        }
        c.equal("items lost", lost, 0);
        c.equal("items consumed more than once", duplicated, 0);
        synchronized (buffer) {
            c.check(buffer.items.isEmpty(), "buffer not empty at the end: " + buffer.items);
        }
        c.done();
    }
}
