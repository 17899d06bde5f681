/**
 * A parallel-stream reduction as an unmodified program writes one: the
 * integral of a smooth function by the midpoint rule over N intervals, as
 * IntStream.range(0, N).parallel().mapToDouble(f).sum(). The stream runs in
 * the ForkJoin common pool, which sizes itself by availableProcessors(): under
 * djava the cluster's, with its workers on the thread servers. Checks its
 * result against the closed form.
 *
 * usage: java ParallelIntegrate [N] [THREADS]   (THREADS 1: a sequential stream;
 *                                                otherwise the common pool's size)
 */
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;

public class ParallelIntegrate {
    // f(x) = 4 / (1 + x^2) on [0, 1] integrates to pi; the inner loop makes
    // an element cost about what a pixel or a cell costs in the other apps.
    static double f(int i, int n) {
        double x = (i + 0.5) / n;
        double y = 0;
        for (int k = 0; k < 64; k++) {
            y += 4.0 / (1.0 + x * x);
        }
        return y / 64 / n;
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        Map<Long, Integer> where = new ConcurrentHashMap<>();
        long start = System.nanoTime();
        IntStream range = IntStream.range(0, n);
        double pi = (threads == 1 ? range : range.parallel()).mapToDouble(i -> {
            if ((i & 1023) == 0) {
                where.merge(ProcessHandle.current().pid(), 1024, Integer::sum);
            }
            return f(i, n);
        }).sum();
        String ms = String.format("%.1f", (System.nanoTime() - start) / 1e6);
        System.out.println("ParallelIntegrate " + n + ": " + ms + " ms, parallelism "
                + (threads == 1 ? 1 : ForkJoinPool.getCommonPoolParallelism())
                + ", elements per process " + where.values());
        if (Math.abs(pi - Math.PI) > 1e-9) {
            System.out.println("wrong: " + pi);
            System.exit(1);
        }
        System.out.println("correct, " + ms + " ms");
    }
}
