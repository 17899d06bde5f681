/*
 * @test
 * @summary A fixed thread pool of 2 (its workers on the thread servers) runs Callables; main
 *          gets every Future's value, the sum is exact, and shutdown() plus awaitTermination
 *          end the pool in bounded time.
 * @library /lib
 * @run main/othervm ExecutorFutures
 */
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

public class ExecutorFutures {
    static final int POOL = 2;
    static final int TASKS = 40;

    static long work(int n) {
        long s = 0;
        for (int i = 1; i <= 200 + n; i++) {
            s += (long) i * n + (i ^ n);
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(POOL);
        List<Future<Long>> futures = new ArrayList<>();
        long expected = 0;
        for (int n = 0; n < TASKS; n++) {
            final int task = n;
            Callable<Long> callable = () -> {
                Churn.garbage(1000);
                return work(task);
            };
            futures.add(pool.submit(callable));
            expected += work(n);
        }
        Checks c = new Checks("ExecutorFutures");
        long sum = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (int n = 0; n < TASKS; n++) {
            try {
                long v = futures.get(n).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (v != work(n)) {
                    c.fail("future " + n + " is " + v + ", expected " + work(n));
                }
                sum += v;
            } catch (TimeoutException e) {
                c.fail("future " + n + " not done within 60 s of the first get()");
                break;
            }
        }
        c.equal("sum of the futures", sum, expected);
        pool.shutdown();
        boolean terminated = pool.awaitTermination(30, TimeUnit.SECONDS);
        c.check(terminated, "the pool did not terminate within 30 s of shutdown()");
        c.check(pool.isTerminated(), "pool.isTerminated() is false");
        c.done();
    }
}
