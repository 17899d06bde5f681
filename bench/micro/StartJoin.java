// Rounds of threads started from main and joined, each doing a trivial
// update of a shared array: what starting and ending threads costs a
// program on the protocol's critical path. Measured over a network with
// added latency by adding it to bench/apps/run.py's APPS for the run
// ("StartJoin": (["10", "{t}"], ["1", "{t}"]), one round an operation) and
// running bench/now/run.py --apps StartJoin (docs/BENCHMARKS.md).
//
//   DJAVA_THREAD_SERVERS=2 build/bin/djava -cp CLASSES StartJoin ROUNDS THREADS
public class StartJoin {
    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int threads = Integer.parseInt(args[1]);
        double[] partial = new double[threads];
        double[] data = new double[64];
        for (int i = 0; i < data.length; i++) data[i] = i;
        long start = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                final int k = t;
                ts[t] = new Thread(() -> { partial[k] += data[k]; }, "w" + t);
                ts[t].start();
            }
            for (Thread t : ts) t.join();
        }
        long elapsed = System.nanoTime() - start;
        for (int t = 0; t < threads; t++) {
            if (partial[t] != rounds * data[t]) {
                System.out.println("WRONG partial " + t + ": " + partial[t]);
                System.exit(1);
            }
        }
        System.out.printf("StartJoin %d rounds of %d threads: correct, %.1f ms%n", rounds, threads,
                elapsed / 1e6);
    }
}
