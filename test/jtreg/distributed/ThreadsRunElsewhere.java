/*
 * @test
 * @summary In a child JVM (its main thread is the launcher's), 4 threads that are alive at
 *          the same time (they meet at a barrier) record their process ids: none is the
 *          launcher's, and at least 2 distinct processes ran them. On a JVM that does not
 *          ship threads this test fails by design.
 * @library /lib
 * @run main/othervm ThreadsRunElsewhere
 */
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class ThreadsRunElsewhere {
    static final int THREADS = 4;

    /** The child program. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            System.out.println("launcher pid " + ProcessHandle.current().pid());
            CyclicBarrier barrier = new CyclicBarrier(THREADS);
            long[] pids = new long[THREADS];
            String[] errors = new String[THREADS];
            Thread[] threads = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                final int k = t;
                threads[t] = new Thread(() -> {
                    Churn.garbage(20000);
                    try {
                        barrier.await(45, TimeUnit.SECONDS);
                        pids[k] = ProcessHandle.current().pid();
                        barrier.await(45, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        errors[k] = e.toString();
                    }
                }, "placed-" + t);
            }
            for (Thread t : threads) {
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            for (int k = 0; k < THREADS; k++) {
                if (errors[k] != null) {
                    System.out.println("thread " + k + " failed at the barrier: " + errors[k]
                            + " (could the cluster not run " + THREADS + " threads at once?)");
                } else {
                    System.out.println("thread " + k + " pid " + pids[k]);
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        DjavaChild.Result r = DjavaChild.run(Child.class, 90);
        Checks c = new Checks("ThreadsRunElsewhere");
        c.equal("child exit status", r.exitCode, 0);
        Matcher m = Pattern.compile("(?m)^launcher pid (\\d+)$").matcher(r.stdout);
        long launcher = m.find() ? Long.parseLong(m.group(1)) : -1;
        c.check(launcher > 0, "no 'launcher pid' line");
        List<Long> pids = new ArrayList<>();
        Matcher t = Pattern.compile("(?m)^thread (\\d+) pid (\\d+)$").matcher(r.stdout);
        while (t.find()) {
            pids.add(Long.parseLong(t.group(2)));
        }
        c.equal("threads that reported a pid", pids.size(), THREADS);
        for (long pid : pids) {
            c.check(pid != launcher, "a thread ran in the launcher (pid " + pid + ")");
        }
        TreeSet<Long> distinct = new TreeSet<>(pids);
        c.check(distinct.size() >= 2, "threads ran in " + distinct.size() + " process(es) " + distinct
                + ", expected at least 2");
        System.out.println("launcher " + launcher + ", thread pids " + pids);
        if (!c.ok()) {
            System.out.println(r.describe());
        }
        c.done();
    }
}
