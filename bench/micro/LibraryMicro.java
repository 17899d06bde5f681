// The library calls programs make in their hot loops, most of them intrinsics
// in HotSpot's JIT (atomics and VarHandles over Unsafe, String's and
// arrays' loops, copies, locks), for bench/micro/library.py: ns per call
// on djava's server VM (C1 alone, or C1 and C2) against stock HotSpot.
//
//   java LibraryMicro ITERATIONS              local objects (any VM)
//   build/bin/djava -cp CLASSES LibraryMicro ITERATIONS shared
//                                             also the rows marked cached on
//                                             shared objects this node holds
//                                             (it published them: M)
//
// Prints "row column ns" lines (column local or cached). Each loop runs
// once to warm up, then three times timed; the best counts.
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

public class LibraryMicro {
    /** Keeps the values the loops compute alive (for the JIT's sake). */
    static volatile long sink;

    interface Loop {
        long run(int n);
    }

    static void time(String row, String column, int n, Loop loop) {
        sink += loop.run(n);
        long best = Long.MAX_VALUE;
        for (int r = 0; r < 3; r++) {
            long t = System.nanoTime();
            sink += loop.run(n);
            best = Math.min(best, System.nanoTime() - t);
        }
        System.out.printf("%s %s %.4f%n", row, column, best / (double) n);
    }

    static final class Objects {
        final AtomicInteger atomicInt = new AtomicInteger();
        final AtomicLong atomicLong = new AtomicLong();
        final HashMap<Integer, Integer> hashMap = new HashMap<>();
        final ConcurrentHashMap<Integer, Integer> concurrentMap;
        final ArrayList<Integer> list = new ArrayList<>();
        final LongAdder adder = new LongAdder();
        final ReentrantLock lock = new ReentrantLock();
        final Object monitor = new Object();
        final int[] source = new int[16];
        final int[] target = new int[16];
        long count;

        Objects() {
            for (int i = 0; i < 1024; i++) {
                hashMap.put(i, i);
            }
            concurrentMap = new ConcurrentHashMap<>(hashMap);
        }
    }

    static long atomicIncrement(AtomicInteger a, int n) {
        for (int i = 0; i < n; i++) {
            a.incrementAndGet();
        }
        return a.get();
    }

    static long atomicCompareAndSet(AtomicLong a, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            long v = a.get();
            if (a.compareAndSet(v, v + 1)) {
                s++;
            }
        }
        return s;
    }

    static long atomicGetAcquire(AtomicInteger a, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += a.getAcquire();
        }
        return s;
    }

    static long hashMapGet(HashMap<Integer, Integer> m, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += m.get(i & 1023);
        }
        return s;
    }

    static long concurrentMapGet(ConcurrentHashMap<Integer, Integer> m, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += m.get(i & 1023);
        }
        return s;
    }

    static long concurrentMapPut(ConcurrentHashMap<Integer, Integer> m, int n) {
        for (int i = 0; i < n; i++) {
            m.put(i & 1023, i);
        }
        return m.size();
    }

    static long stringEquals(String x, String y, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            if (x.equals(y)) {
                s++;
            }
        }
        return s;
    }

    static long stringIndexOf(String x, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += x.indexOf('w');
        }
        return s;
    }

    static long arraycopy(int[] source, int[] target, int n) {
        for (int i = 0; i < n; i++) {
            source[i & 15] = i;
            System.arraycopy(source, 0, target, 0, 16);
        }
        return target[3];
    }

    static long arraysCopyOf(int[] source, int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += Arrays.copyOf(source, 16).length;
        }
        return s;
    }

    static long stringBuilder(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += new StringBuilder().append("ab").append(i).append('c').length();
        }
        return s;
    }

    static long listAdd(ArrayList<Integer> list, int n) {
        for (int i = 0; i < n; i++) {
            list.add(i);
            if (list.size() == 64) {
                list.clear();
            }
        }
        return list.size();
    }

    static long adderIncrement(LongAdder adder, int n) {
        for (int i = 0; i < n; i++) {
            adder.increment();
        }
        return adder.sum();
    }

    static long lockUnlock(Objects o, int n) {
        for (int i = 0; i < n; i++) {
            o.lock.lock();
            o.count++;
            o.lock.unlock();
        }
        return o.count;
    }

    static long synchronizedBlock(Objects o, int n) {
        for (int i = 0; i < n; i++) {
            synchronized (o.monitor) {
                o.count++;
            }
        }
        return o.count;
    }

    // The rows on one set of objects: every row, or (cached) those whose
    // objects stay in this node's cache (no lock: a shared lock's
    // hand-offs are the monitor service's, bench/micro/sync.py).
    static void rows(String column, Objects o, int n) {
        boolean all = column.equals("local");
        time("atomic-increment", column, n, k -> atomicIncrement(o.atomicInt, k));
        time("atomic-compare-and-set", column, n, k -> atomicCompareAndSet(o.atomicLong, k));
        time("atomic-get-acquire", column, n, k -> atomicGetAcquire(o.atomicInt, k));
        time("hashmap-get", column, n, k -> hashMapGet(o.hashMap, k));
        time("concurrent-map-get", column, n, k -> concurrentMapGet(o.concurrentMap, k));
        time("concurrent-map-put", column, n / 4, k -> concurrentMapPut(o.concurrentMap, k));
        time("arraylist-add", column, n, k -> listAdd(o.list, k));
        time("arraycopy-16", column, n, k -> arraycopy(o.source, o.target, k));
        if (all) {
            String x = "hello, distributed world " + n;
            String y = "hello, distributed world " + n;
            time("string-equals", column, n, k -> stringEquals(x, y, k));
            time("string-index-of", column, n, k -> stringIndexOf(x, k));
            time("arrays-copy-of-16", column, n, k -> arraysCopyOf(o.source, k));
            time("string-builder", column, n / 4, k -> stringBuilder(k));
            time("long-adder-increment", column, n, k -> adderIncrement(o.adder, k));
            time("reentrant-lock", column, n, k -> lockUnlock(o, k));
            time("synchronized", column, n, k -> synchronizedBlock(o, k));
        }
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        rows("local", new Objects(), n);
        if (args.length > 1 && args[1].equals("shared")) {
            Objects shared = new Objects();
            Sharing.publish(shared);
            rows("cached", shared, n);
        }
    }

    // Only under djava: the one class here that links djava.runtime.Node.
    static final class Sharing {
        static void publish(Objects o) throws InterruptedException {
            for (Object x : new Object[] {o, o.atomicInt, o.atomicLong, o.hashMap,
                                          o.concurrentMap, o.list, o.source, o.target}) {
                djava.runtime.Node.publish(x);
            }
            Thread.sleep(200);  // lets the cluster settle, as SharedMicro does
        }
    }
}
