import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One writer and several readers, each a thread the cluster places, going round by round: before
 * round r the writer checks what the readers did in round r - 1 and fills round r's contents,
 * then publishes r through a volatile field; each reader, once warmed up on objects of its own
 * (so that the JIT compiles its code before it meets shared ones), waits for r, checks it and
 * acknowledges; the writer waits for every acknowledgement before its next step. A step returns
 * null, or what was wrong; the first wrong step of each thread, a timeout or an exception ends
 * that thread and becomes a failed check.
 */
public final class Rounds {
    public interface Reader {
        /** Warm-up on this reader's own objects. */
        String warmUp(int reader) throws Exception;

        /** Round {@code round}'s check, once the writer has published it. */
        String check(int reader, int round) throws Exception;
    }

    public interface Writer {
        /**
         * Before round {@code round} (1 to rounds + 1): the readers' round - 1 is done (check
         * what they did); fill round {@code round} unless it is rounds + 1.
         */
        String step(int round) throws Exception;
    }

    private volatile int round;
    private final AtomicInteger acks = new AtomicInteger();

    private Rounds() {
    }

    /** Runs them and records every thread's failure in c; waits up to timeoutSeconds. */
    public static void run(Checks c, int readers, int rounds, int timeoutSeconds, Reader reader,
                           Writer writer) throws InterruptedException {
        Rounds shared = new Rounds();
        CountDownLatch done = new CountDownLatch(readers + 1);
        String[] failures = new String[readers + 1];
        for (int t = 0; t < readers; t++) {
            final int k = t;
            new Thread(() -> {
                try {
                    String wrong = reader.warmUp(k);
                    if (wrong != null) {
                        failures[k] = "warm-up: " + wrong;
                        return;
                    }
                    for (int r = 1; r <= rounds; r++) {
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(50);
                        while (shared.round < r) {
                            if (System.nanoTime() > deadline) {
                                failures[k] = "round " + r + " never came";
                                return;
                            }
                            Thread.onSpinWait();
                        }
                        wrong = reader.check(k, r);
                        if (wrong != null) {
                            failures[k] = "round " + r + ": " + wrong;
                            return;
                        }
                        shared.acks.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failures[k] = e.toString();
                } finally {
                    done.countDown();
                }
            }, "reader-" + t).start();
        }
        new Thread(() -> {
            try {
                for (int r = 1; r <= rounds + 1; r++) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(50);
                    while (shared.acks.get() < readers * (r - 1)) {
                        if (Arrays.stream(failures, 0, readers).anyMatch(f -> f != null)) {
                            return;  // a reader gave up: its failure says why
                        }
                        if (System.nanoTime() > deadline) {
                            failures[readers] = "the readers stopped acknowledging at round "
                                    + (r - 1);
                            return;
                        }
                        Thread.sleep(1);
                    }
                    String wrong = writer.step(r);
                    if (wrong != null) {
                        failures[readers] = "before round " + r + ": " + wrong;
                        return;
                    }
                    if (r <= rounds) {
                        shared.round = r;  // publishes the round's contents
                    }
                }
            } catch (Throwable e) {
                failures[readers] = e.toString();
            } finally {
                done.countDown();
            }
        }, "writer").start();
        boolean finished = done.await(timeoutSeconds, TimeUnit.SECONDS);
        c.check(finished, "the threads did not end within " + timeoutSeconds + " s ("
                + done.getCount() + " left)");
        for (int t = 0; t <= readers; t++) {
            c.check(failures[t] == null,
                    (t < readers ? "reader " + t : "writer") + ": " + failures[t]);
        }
    }
}
