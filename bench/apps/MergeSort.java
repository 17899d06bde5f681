/**
 * A ForkJoinTask divide-and-conquer as an unmodified program writes one: a
 * merge sort of N longs in the ForkJoin common pool (RecursiveTask), which
 * sizes itself by availableProcessors(): under djava the cluster's, with its
 * workers on the thread servers. Each task sorts a range into an array of its
 * own and merges its halves' arrays, so the tasks share no array. Checks the
 * result against Arrays.sort.
 *
 * usage: java MergeSort [N] [THREADS]   (THREADS 1: the same recursion in the
 *                                        calling thread; otherwise the common pool)
 */
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;

public class MergeSort {
    static final int LEAF = 4096;

    static final class Sort extends RecursiveTask<long[]> {
        final long[] data;
        final int from, to;
        final Map<Long, Integer> where;

        Sort(long[] data, int from, int to, Map<Long, Integer> where) {
            this.data = data;
            this.from = from;
            this.to = to;
            this.where = where;
        }

        @Override
        protected long[] compute() {
            if (to - from <= LEAF) {
                where.merge(ProcessHandle.current().pid(), 1, Integer::sum);
                long[] leaf = Arrays.copyOfRange(data, from, to);
                Arrays.sort(leaf);
                return leaf;
            }
            int mid = (from + to) >>> 1;
            Sort left = new Sort(data, from, mid, where);
            left.fork();
            long[] right = new Sort(data, mid, to, where).compute();
            return merge(left.join(), right);
        }
    }

    static long[] merge(long[] a, long[] b) {
        long[] out = new long[a.length + b.length];
        int i = 0, j = 0, k = 0;
        while (i < a.length && j < b.length) {
            out[k++] = a[i] <= b[j] ? a[i++] : b[j++];
        }
        while (i < a.length) {
            out[k++] = a[i++];
        }
        while (j < b.length) {
            out[k++] = b[j++];
        }
        return out;
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 18;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        long[] data = new Random(42).longs(n).toArray();
        Map<Long, Integer> where = new ConcurrentHashMap<>();
        long start = System.nanoTime();
        Sort root = new Sort(data, 0, n, where);
        long[] sorted = threads == 1 ? root.compute() : ForkJoinPool.commonPool().invoke(root);
        String ms = String.format("%.1f", (System.nanoTime() - start) / 1e6);
        System.out.println("MergeSort " + n + ": " + ms + " ms, parallelism "
                + (threads == 1 ? 1 : ForkJoinPool.getCommonPoolParallelism())
                + ", leaves per process " + where.values());
        long[] expected = data.clone();
        Arrays.sort(expected);
        if (!Arrays.equals(sorted, expected)) {
            System.out.println("wrong");
            System.exit(1);
        }
        System.out.println("correct, " + ms + " ms");
    }
}
