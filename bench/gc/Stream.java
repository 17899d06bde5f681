import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Programs that keep sharing short-lived objects, for the distributed garbage collector's
 * memory benchmark (bench/gc/stream.py):
 *
 *   Stream messages N   a producer passes N messages (an object with an int[16]) through an
 *                       ArrayBlockingQueue to a consumer; the two run on different nodes
 *   Stream pool SECONDS a thread pool runs tasks whose shared results (an object with a
 *                       double[32]) main consumes and drops, for that long
 *
 * Each prints "progress COUNT" as it goes (every 10,000 messages; every 2,000 tasks) and a
 * last line "done COUNT checksum C".
 */
public class Stream {
    static final class Message {
        final int seq;
        final int[] payload = new int[16];

        Message(int seq) {
            this.seq = seq;
            for (int i = 0; i < payload.length; i++) {
                payload[i] = seq + i;
            }
        }
    }

    static final class Result {
        final int task;
        final double[] values = new double[32];

        Result(int task) {
            this.task = task;
            for (int i = 0; i < values.length; i++) {
                values[i] = task * 0.5 + i;
            }
        }
    }

    static void messages(int n) throws InterruptedException {
        ArrayBlockingQueue<Message> queue = new ArrayBlockingQueue<>(256);
        long[] checksum = new long[1];
        Thread producer = new Thread(() -> {
            try {
                for (int i = 1; i <= n; i++) {
                    queue.put(new Message(i));
                }
                queue.put(new Message(-1));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, "producer");
        Thread consumer = new Thread(() -> {
            long sum = 0;
            try {
                for (int count = 1; ; count++) {
                    Message m = queue.take();
                    if (m.seq < 0) {
                        break;
                    }
                    if (m.payload[15] != m.seq + 15) {
                        throw new AssertionError("message " + m.seq + " arrived as " + m.payload[15]);
                    }
                    sum += m.seq;
                    if (count % 10_000 == 0) {
                        System.out.println("progress " + count);
                    }
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            synchronized (checksum) {
                checksum[0] = sum;
            }
        }, "consumer");
        producer.start();
        consumer.start();
        producer.join();
        consumer.join();
        long expected = (long) n * (n + 1) / 2;
        synchronized (checksum) {
            if (checksum[0] != expected) {
                throw new AssertionError("checksum " + checksum[0] + ", expected " + expected);
            }
            System.out.println("done " + n + " checksum " + checksum[0]);
        }
    }

    static void pool(int seconds) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        int tasks = 0;
        double checksum = 0;
        while (System.nanoTime() < end) {
            List<Future<Result>> batch = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                final int task = tasks + i;
                batch.add(pool.submit(() -> new Result(task)));
            }
            for (Future<Result> f : batch) {
                Result r = f.get();
                checksum += r.values[31] - r.task * 0.5;
            }
            tasks += batch.size();
            if (tasks % 2_000 == 0) {
                System.out.println("progress " + tasks);
            }
        }
        pool.shutdown();
        if (checksum != 31.0 * tasks) {
            throw new AssertionError("checksum " + checksum + ", expected " + 31.0 * tasks);
        }
        System.out.println("done " + tasks + " checksum " + checksum);
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("messages")) {
            messages(Integer.parseInt(args[1]));
        } else if (args.length == 2 && args[0].equals("pool")) {
            pool(Integer.parseInt(args[1]));
        } else {
            System.err.println("usage: Stream messages N | Stream pool SECONDS");
            System.exit(2);
        }
    }
}
