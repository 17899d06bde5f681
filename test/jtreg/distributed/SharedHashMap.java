/*
 * @test
 * @summary A HashMap<String,Integer> updated by 4 threads on the thread servers under
 *          synchronized (map) (shared keys counted up, per-thread keys added, some removed,
 *          the table resized remotely) has exactly the expected contents afterwards.
 * @library /lib
 * @run main/othervm SharedHashMap
 */
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

public class SharedHashMap {
    static final int THREADS = 4;
    static final int OPS = 250;
    static final int SHARED_KEYS = 25;

    public static void main(String[] args) throws Exception {
        Map<String, Integer> map = new HashMap<>();
        map.put("preset", -1);
        long[] garbage = new long[THREADS];
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < OPS; i++) {
                    String sharedKey = "key-" + (i % SHARED_KEYS);
                    String ownKey = "t" + k + "-" + i;
                    synchronized (map) {
                        map.merge(sharedKey, 1, Integer::sum);
                        map.put(ownKey, k * 1000 + i);
                        if (i % 10 == 9) {
                            map.remove("t" + k + "-" + (i - 1));
                        }
                    }
                    if (i % 10 == 0) {
                        garbage[k] += Churn.garbage(800);
                    }
                }
                synchronized (map) {
                    map.compute("preset", (key, v) -> v == null ? 1000 : v + 1);
                }
            }, "mapper-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);

        Map<String, Integer> expected = new TreeMap<>();
        expected.put("preset", -1 + THREADS);
        for (int i = 0; i < SHARED_KEYS; i++) {
            expected.put("key-" + i, THREADS * OPS / SHARED_KEYS);
        }
        for (int k = 0; k < THREADS; k++) {
            for (int i = 0; i < OPS; i++) {
                if (i % 10 != 8) {
                    expected.put("t" + k + "-" + i, k * 1000 + i);
                }
            }
        }

        Checks c = new Checks("SharedHashMap");
        synchronized (map) {
            c.equal("map.size()", map.size(), expected.size());
            int wrong = 0;
            for (Map.Entry<String, Integer> e : expected.entrySet()) {
                Integer actual = map.get(e.getKey());
                if (!e.getValue().equals(actual) && wrong++ < 10) {
                    c.fail("map.get(\"" + e.getKey() + "\") is " + actual + ", expected " + e.getValue());
                }
            }
            for (String key : map.keySet()) {
                if (!expected.containsKey(key) && wrong++ < 20) {
                    c.fail("unexpected key \"" + key + "\" -> " + map.get(key));
                }
            }
            c.check(new TreeMap<>(map).equals(expected), "map differs from the expected contents ("
                    + wrong + " differences)");
        }
        c.done();
    }
}
