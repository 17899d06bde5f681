import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.TimeUnit;

/**
 * What a steal costs in the ForkJoin common pool, whose workers djava spreads
 * over the thread servers (issue 26). System.nanoTime is the host's monotonic
 * clock, the same in every process of one machine, so a task's start is
 * timed against its fork wherever it runs.
 *
 *   external  main (on the launcher, not a worker) submits a task and waits
 *             for it: the time until a worker starts it (a worker woken and
 *             taking it from the pool's submission queue) and until main
 *             hears it finished; "idle" waits 5 ms between tasks, so the
 *             workers have parked, "busy" submits the next at once.
 *   worker    a task on a worker forks a child and spins until another
 *             worker starts it (it never runs the child itself): the time
 *             from the fork to the child's start, split by whether the
 *             thief ran in the same process or another one.
 *
 * usage: Steal N [external-busy|external-idle|worker]
 *        (N tasks of that kind, of every kind without one; a line per kind)
 */
public class Steal {
    static final long MAIN_PID = ProcessHandle.current().pid();

    static final class Probe extends RecursiveAction {
        final CountDownLatch finished = new CountDownLatch(1);
        volatile long startedAt;
        volatile long pid;

        @Override
        protected void compute() {
            long now = System.nanoTime();
            pid = ProcessHandle.current().pid();  // before startedAt, which says it is there
            startedAt = now;
            finished.countDown();
        }
    }

    /**
     * Forks a probe and waits, without helping, until some other worker started it; after
     * 5 s it gives up and joins it (then runs it itself). The pool does not promise that
     * another worker takes a forked task (a worker going idle while the fork reads the pool's
     * control word is not signalled, and does not look again), so this is counted, not waited for.
     */
    static final class Parent extends RecursiveAction {
        long forkToStart;
        boolean sameProcess;
        boolean neverStolen;

        @Override
        protected void compute() {
            Probe child = new Probe();
            long forkedAt = System.nanoTime();
            child.fork();
            while (child.startedAt == 0) {
                if (System.nanoTime() - forkedAt > 5_000_000_000L) {
                    neverStolen = true;
                    child.join();
                    return;
                }
                Thread.onSpinWait();
            }
            forkToStart = child.startedAt - forkedAt;
            sameProcess = child.pid == ProcessHandle.current().pid();
        }
    }

    static String micros(long[] ns, int n) {
        if (n == 0) {
            return "- -";
        }
        long[] sorted = Arrays.copyOf(ns, n);
        Arrays.sort(sorted);
        return String.format("%.1f %.1f", sorted[n / 2] / 1e3, sorted[(int) (n * 0.9)] / 1e3);
    }

    static void external(ForkJoinPool pool, int n, boolean idle) throws Exception {
        long[] start = new long[n];
        long[] done = new long[n];
        int remote = 0;
        for (int i = 0; i < n; i++) {
            if (idle) {
                Thread.sleep(5);
            }
            Probe p = new Probe();
            long submittedAt = System.nanoTime();
            pool.execute(p);
            if (!p.finished.await(60, TimeUnit.SECONDS)) {
                throw new AssertionError("a task submitted to the common pool never ran");
            }
            done[i] = System.nanoTime() - submittedAt;
            start[i] = p.startedAt - submittedAt;
            remote += p.pid != MAIN_PID ? 1 : 0;
        }
        System.out.println("external " + (idle ? "idle" : "busy") + ": tasks " + n + " elsewhere " + remote
                + " start_us " + micros(start, n) + " done_us " + micros(done, n));
    }

    static void workers(ForkJoinPool pool, int n) {
        long[] same = new long[n];
        long[] other = new long[n];
        int s = 0;
        int o = 0;
        int lost = 0;
        for (int i = 0; i < n; i++) {
            Parent p = new Parent();
            pool.invoke(p);
            if (p.neverStolen) {
                lost++;
            } else if (p.sameProcess) {
                same[s++] = p.forkToStart;
            } else {
                other[o++] = p.forkToStart;
            }
        }
        System.out.println("worker: tasks " + n + " same " + s + " start_us " + micros(same, s)
                + " other " + o + " start_us " + micros(other, o) + " never_stolen " + lost);
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        String kind = args.length > 1 ? args[1] : "all";
        ForkJoinPool pool = ForkJoinPool.commonPool();
        System.out.println("parallelism " + pool.getParallelism());
        external(pool, 20, false);  // the workers start
        if (kind.equals("all") || kind.equals("external-busy")) {
            external(pool, n, false);
        }
        if (kind.equals("all") || kind.equals("external-idle")) {
            external(pool, n, true);
        }
        if ((kind.equals("all") || kind.equals("worker")) && pool.getParallelism() >= 2) {
            workers(pool, n);
        }
        System.out.println("correct");
    }
}
