/**
 * Travelling salesman by branch and bound, after the Manta report's TSP
 * (fast-parallel-java-1998): a central job queue of partial tours (the first
 * cities fixed) and one shared best bound, read at every step of every
 * search and written only when a shorter tour turns up. Workers take jobs
 * until the queue is empty. Checks the optimum against a single-threaded
 * search.
 *
 * usage: java TSP [CITIES] [THREADS] [SEED]
 */
import java.util.ArrayDeque;
import java.util.Random;

public class TSP {
    /** The shared bound: read without a lock (volatile), lowered under one. */
    static final class Bound {
        volatile int best = Integer.MAX_VALUE;
        synchronized void offer(int length) {
            if (length < best) best = length;
        }
    }

    /** The central job queue: partial tours starting at city 0. */
    static final class Jobs {
        private final ArrayDeque<int[]> queue = new ArrayDeque<>();
        synchronized void add(int[] prefix) { queue.add(prefix); }
        synchronized int[] take() { return queue.poll(); }
    }

    final int[][] distance;
    final int n;

    TSP(int n, long seed) {
        this.n = n;
        distance = new int[n][n];
        Random r = new Random(seed);
        int[] x = new int[n], y = new int[n];
        for (int i = 0; i < n; i++) { x[i] = r.nextInt(1000); y[i] = r.nextInt(1000); }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                distance[i][j] = (int) Math.round(Math.hypot(x[i] - x[j], y[i] - y[j]));
    }

    /** Depth-first search below a prefix of `length` cities. */
    void search(int[] path, int depth, boolean[] used, int length, Bound bound) {
        if (length >= bound.best) return;
        if (depth == n) {
            bound.offer(length + distance[path[n - 1]][path[0]]);
            return;
        }
        for (int c = 1; c < n; c++) {
            if (used[c]) continue;
            used[c] = true;
            path[depth] = c;
            search(path, depth + 1, used, length + distance[path[depth - 1]][c], bound);
            used[c] = false;
        }
    }

    void work(Jobs jobs, Bound bound) {
        int[] prefix;
        while ((prefix = jobs.take()) != null) {
            int[] path = new int[n];
            boolean[] used = new boolean[n];
            int length = 0;
            for (int i = 0; i < prefix.length; i++) {
                path[i] = prefix[i];
                used[prefix[i]] = true;
                if (i > 0) length += distance[prefix[i - 1]][prefix[i]];
            }
            search(path, prefix.length, used, length, bound);
        }
    }

    public static void main(String[] args) throws Exception {
        int cities = args.length > 0 ? Integer.parseInt(args[0]) : 11;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        long seed = args.length > 2 ? Long.parseLong(args[2]) : 42;
        TSP tsp = new TSP(cities, seed);
        Jobs jobs = new Jobs();
        for (int a = 1; a < cities; a++)
            for (int b = 1; b < cities; b++)
                if (a != b) jobs.add(new int[] {0, a, b});
        Bound bound = new Bound();
        long start = System.nanoTime();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> tsp.work(jobs, bound), "tsp-" + t);
            workers[t].start();
        }
        for (Thread w : workers) w.join();
        long elapsed = System.nanoTime() - start;
        Bound expected = new Bound();
        int[] path = new int[cities];
        boolean[] used = new boolean[cities];
        used[0] = true;
        tsp.search(path, 1, used, 0, expected);
        if (bound.best != expected.best) {
            System.out.println("WRONG: " + bound.best + " != " + expected.best);
            System.exit(1);
        }
        System.out.printf("TSP %d cities by %d threads: correct (shortest tour %d), %.1f ms%n",
                cities, threads, bound.best, elapsed / 1e6);
    }
}
