// A stream of work through a shared queue (test_replicas_of_a_running_program_are_released):
// main makes batches of items, each with a payload, and puts each batch into an
// ArrayBlockingQueue twice, the second time BATCHES_APART batches later and
// unchanged; a consumer thread on a thread server checks every item's
// payload, keeps nothing, and collects its garbage after every batch. So the
// consumer's replicas of a batch are collected between its two receptions,
// and the second must fetch the bytes again into new replicas (a cached read
// copy of a collected replica would read as zeros). At the end both sides
// collect their garbage; -XX:+PrintDistributedStatistics then shows how many
// shared objects each node still has.
//
//   Turnover BATCHES ITEMS PAYLOAD
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;

public class Turnover {
    static final int BATCHES_APART = 4;

    static final class Item {
        final int id;
        final int[] payload;

        Item(int id, int length) {
            this.id = id;
            this.payload = new int[length];
            for (int k = 0; k < length; k++) {
                payload[k] = id * 31 + k;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int batches = Integer.parseInt(args[0]);
        int items = Integer.parseInt(args[1]);
        int payload = Integer.parseInt(args[2]);
        ArrayBlockingQueue<Item[]> queue = new ArrayBlockingQueue<>(2);
        Item[] end = new Item[0];
        String[] failure = new String[1];
        long[] received = new long[1];
        Thread consumer = new Thread(() -> {
            try {
                for (Item[] batch = queue.take(); batch != end; batch = queue.take()) {
                    for (Item item : batch) {
                        for (int k = 0; k < item.payload.length; k++) {
                            if (item.payload[k] != item.id * 31 + k && failure[0] == null) {
                                failure[0] = "item " + item.id + " element " + k + " is "
                                        + item.payload[k] + ", not " + (item.id * 31 + k);
                            }
                        }
                        received[0]++;
                    }
                    batch = null;
                    System.gc();
                }
                System.gc();
            } catch (InterruptedException e) {
                failure[0] = e.toString();
            }
        }, "consumer");
        consumer.start();
        List<Item[]> recent = new ArrayList<>();
        int next = 0;
        for (int b = 0; b < batches; b++) {
            Item[] batch = new Item[items];
            for (int i = 0; i < items; i++) {
                batch[i] = new Item(next++, payload);
            }
            queue.put(batch);
            recent.add(batch);
            if (recent.size() > BATCHES_APART) {
                queue.put(recent.remove(0));  // again, unchanged
            }
        }
        for (Item[] batch : recent) {
            queue.put(batch);
        }
        recent.clear();
        queue.put(end);
        consumer.join();
        System.gc();
        System.out.println("received " + received[0] + " of " + (2L * batches * items));
        System.out.println(failure[0] == null ? "payloads intact" : "FAILED: " + failure[0]);
    }
}
