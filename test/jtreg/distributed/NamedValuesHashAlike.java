/*
 * @test
 * @summary Values every node has its own instance of (a JDK class's mirror, a JDK enum
 *          constant) have the same identity hash on every node, so a shared ConcurrentHashMap
 *          or Hashtable keyed by them holds each key once, whichever node put it (issue 25:
 *          OpenJDK's ThrowingTasks counted its uncaught exceptions by class in such maps).
 * @library /lib
 * @run main/othervm NamedValuesHashAlike
 */
import java.util.Arrays;
import java.util.Hashtable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

public class NamedValuesHashAlike {
    static final Object[] KEYS = {
        Exception.class, RuntimeException.class, Thread.State.class, String[].class, int.class,
        Thread.State.RUNNABLE, Thread.State.BLOCKED, TimeUnit.SECONDS, TimeUnit.MILLISECONDS,
    };
    static final int THREADS = 4;
    static final Map<Object, Integer> concurrent = new ConcurrentHashMap<>();
    static final Map<Object, Integer> table = new Hashtable<>();
    static final int[][] hashesSeen = new int[THREADS][];

    static int[] hashes() {
        int[] h = new int[KEYS.length];
        for (int i = 0; i < KEYS.length; i++) {
            h[i] = System.identityHashCode(KEYS[i]);
        }
        return h;
    }

    static void count() {
        for (Object k : KEYS) {
            concurrent.merge(k, 1, Integer::sum);
            table.merge(k, 1, Integer::sum);
        }
    }

    public static void main(String[] args) throws Exception {
        Checks c = new Checks("NamedValuesHashAlike");
        int[] mine = hashes();
        count();  // the maps are main's first: hashed here, then met elsewhere
        Thread[] ts = new Thread[THREADS];
        for (int i = 0; i < THREADS; i++) {
            int me = i;
            ts[i] = new Thread(() -> {
                hashesSeen[me] = hashes();
                count();
            }, "counter " + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        for (int i = 0; i < THREADS; i++) {
            c.check(Arrays.equals(hashesSeen[i], mine), "thread " + i + "'s identity hashes "
                    + Arrays.toString(hashesSeen[i]) + " are main's " + Arrays.toString(mine));
        }
        for (Map<Object, Integer> m : Arrays.asList(concurrent, table)) {
            String kind = m.getClass().getSimpleName();
            c.equal(kind + "'s size", m.size(), KEYS.length);
            for (Object k : KEYS) {
                c.equal(kind + "'s count of " + k, (long) m.getOrDefault(k, 0), THREADS + 1);
            }
        }
        c.done();
    }
}
