/*
 * @test
 * @summary A program sees the cluster's processors, not the launcher's: availableProcessors()
 *          is the thread servers' capacities added up, the same on main and on threads on
 *          every server; in a launcher (a child djava JVM, whose main runs there) the common
 *          pool's parallelism follows it and a parallel stream's elements and a ForkJoin
 *          divide-and-conquer run on every thread server; from a thread on a server, the
 *          common pool is the program's (main's), with its parallelism, and CompletableFuture's
 *          default executor and parallel streams use it (jtreg's main itself runs on one).
 * @library /lib
 * @run main/othervm ClusterProcessors
 */
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

public class ClusterProcessors {
    static final long MAIN_PID = ProcessHandle.current().pid();
    static final int ROUNDS = 20;

    static long work(long i) {
        long x = 0;
        for (int k = 0; k < 3000; k++) {
            x += (k ^ i) % 7;
        }
        return x;
    }

    /** Sums work(i) over [from, to), forking halves; records the pid each leaf ran in. */
    static final class Sum extends RecursiveTask<Long> {
        final long from, to;
        final Map<Long, Integer> where;

        Sum(long from, long to, Map<Long, Integer> where) {
            this.from = from;
            this.to = to;
            this.where = where;
        }

        @Override
        protected Long compute() {
            if (to - from <= 16) {
                where.merge(ProcessHandle.current().pid(), 1, Integer::sum);
                long s = 0;
                for (long i = from; i < to; i++) {
                    s += work(i);
                }
                return s;
            }
            long mid = (from + to) >>> 1;
            Sum left = new Sum(from, mid, where);
            left.fork();
            return new Sum(mid, to, where).compute() + left.join();
        }
    }

    public static void main(String[] args) throws Exception {
        boolean launcher = args.length > 0 && args[0].equals("launcher");
        Checks c = new Checks("ClusterProcessors" + (launcher ? " (launcher)" : ""));
        int servers = Integer.getInteger("djava.test.threadServers", 2);
        int expected = Integer.getInteger("djava.test.clusterProcessors", -1);
        int here = Runtime.getRuntime().availableProcessors();
        c.check(expected < 0 || here == expected,
                "availableProcessors() on main is " + here + ", expected the cluster's " + expected);
        if (launcher) {
            c.equal("common pool parallelism", ForkJoinPool.getCommonPoolParallelism(), Math.max(1, here - 1));
        }

        // Every server's threads see the same count.
        int[] seen = new int[2 * servers];
        long[] pids = new long[seen.length];
        Thread[] threads = new Thread[seen.length];
        for (int i = 0; i < threads.length; i++) {
            final int slot = i;
            threads[i] = new Thread(() -> {
                seen[slot] = Runtime.getRuntime().availableProcessors();
                pids[slot] = ProcessHandle.current().pid();
            });
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);
        Set<Long> threadPids = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < threads.length; i++) {
            c.equal("availableProcessors() on thread " + i, seen[i], here);
            threadPids.add(pids[i]);
        }
        c.check(!launcher || !threadPids.contains(MAIN_PID), "a thread ran in the launcher: " + threadPids);
        c.check(threadPids.size() >= servers - (launcher ? 0 : 1),
                "the threads ran in " + threadPids + ", not on every server");
        if (!launcher) {
            checkPoolsFromAServer(c);
            // Main runs on a thread server here: the launcher's view is a child's.
            DjavaChild.Result child = DjavaChild.run(ClusterProcessors.class, 300, "launcher");
            child.assertExitCode(0);
            c.check(child.stdout.contains("ClusterProcessors (launcher): ok"), child.describe());
            c.done();
            return;
        }
        threadPids.remove(MAIN_PID);

        // A parallel stream's elements reach every thread server (bounded rounds: the
        // first may end before the pool's workers have started there).
        Map<Long, Integer> streamWhere = new ConcurrentHashMap<>();
        long expectedSum = LongStream.range(0, 2000).map(ClusterProcessors::work).sum();
        for (int r = 0; r < ROUNDS && !onEveryServer(streamWhere, threadPids); r++) {
            long s = LongStream.range(0, 2000).parallel().map(i -> {
                streamWhere.merge(ProcessHandle.current().pid(), 1, Integer::sum);
                return work(i);
            }).sum();
            c.equal("parallel sum, round " + r, s, expectedSum);
        }
        c.check(onEveryServer(streamWhere, threadPids),
                "parallel stream elements ran in " + streamWhere + ", not on every server " + threadPids);

        // A divide-and-conquer in the common pool: the same.
        Map<Long, Integer> forkWhere = new ConcurrentHashMap<>();
        for (int r = 0; r < ROUNDS && !onEveryServer(forkWhere, threadPids); r++) {
            long s = ForkJoinPool.commonPool().invoke(new Sum(0, 2000, forkWhere));
            c.equal("fork/join sum, round " + r, s, expectedSum);
        }
        c.check(onEveryServer(forkWhere, threadPids),
                "fork/join leaves ran in " + forkWhere + ", not on every server " + threadPids);

        checkPoolsFromAServer(c);
        c.done();
        System.out.println("ClusterProcessors (launcher): ok");
    }

    /**
     * The JDK's pools used from a thread on a server give their answers, and they are the
     * program's: the common pool there is the one main sees (the launcher's), with its
     * parallelism, and CompletableFuture's default executor and parallel streams use it.
     */
    static void checkPoolsFromAServer(Checks c) throws InterruptedException {
        ForkJoinPool common = ForkJoinPool.commonPool();
        int parallelism = ForkJoinPool.getCommonPoolParallelism();
        long[] remote = new long[3];
        // Compared where they are got: a JDK singleton that comes back from a server is the
        // node's own again (docs/HEAP.md, named values), so == on main would prove nothing.
        String[] notCommon = new String[4];
        int[] remoteParallelism = new int[1];
        boolean[] streamInCommonPool = new boolean[1];
        Thread user = new Thread(() -> {
            try {
                remote[0] = CompletableFuture.supplyAsync(() -> 6L * 7).get(30, TimeUnit.SECONDS);
                remote[1] = LongStream.range(0, 1000).parallel().map(i -> 2 * i).sum();
                remote[2] = ForkJoinPool.commonPool().submit(() -> 5L).get(30, TimeUnit.SECONDS);
                notCommon[0] = unless(ForkJoinPool.commonPool(), common);
                notCommon[1] = unless(new CompletableFuture<Void>().defaultExecutor(), common);
                notCommon[2] = unless(CompletableFuture.supplyAsync(ForkJoinTask::getPool)
                        .get(30, TimeUnit.SECONDS), common);
                notCommon[3] = unless(ForkJoinPool.commonPool()
                        .submit((Callable<ForkJoinPool>) ForkJoinTask::getPool).get(30, TimeUnit.SECONDS), common);
                remoteParallelism[0] = ForkJoinPool.getCommonPoolParallelism();
                // Bounded rounds: this thread takes part, and may finish a round alone
                // before a worker has woken on a loaded machine (-Xint under make test),
                // so it pauses at each of its own elements to leave the pool its share.
                for (int r = 0; r < ROUNDS && !streamInCommonPool[0]; r++) {
                    streamInCommonPool[0] = IntStream.range(0, 256).parallel()
                            .map(i -> ForkJoinTask.getPool() == common ? 1 + (int) (work(i) & 0)
                                    : pauseThenZero())
                            .sum() > 0;
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Threads.startAll(user);
        Threads.joinAll(user);
        c.equal("supplyAsync on a server", remote[0], 42L);
        c.equal("parallel stream on a server", remote[1], 999000L);
        c.equal("common pool task on a server", remote[2], 5L);
        c.check(notCommon[0] == null, "ForkJoinPool.commonPool() on a server is " + notCommon[0]
                + ", not the program's " + common);
        c.equal("common pool parallelism on a server", remoteParallelism[0], parallelism);
        c.check(notCommon[3] == null, "a common pool task on a server ran in " + notCommon[3]
                + ", not in the program's common pool " + common);
        if (parallelism > 1) {
            c.check(notCommon[1] == null, "CompletableFuture's default executor on a server is "
                    + notCommon[1] + ", not the program's common pool " + common);
            c.check(notCommon[2] == null, "supplyAsync on a server ran in " + notCommon[2]
                    + ", not in the program's common pool " + common);
            c.check(streamInCommonPool[0], "no element of a parallel stream on a server ran in the "
                    + "program's common pool in " + ROUNDS + " rounds");
        }
    }

    /** Gives the pool's workers a moment to take elements; 0. */
    static int pauseThenZero() {
        try {
            Thread.sleep(2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /** null if got is expected, else what got is. */
    static String unless(Object got, Object expected) {
        return got == expected ? null : String.valueOf(got);
    }

    static boolean onEveryServer(Map<Long, Integer> where, Set<Long> serverPids) {
        return where.keySet().containsAll(serverPids);
    }
}
