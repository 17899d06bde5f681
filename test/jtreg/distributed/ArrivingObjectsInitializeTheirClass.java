/*
 * @test
 * @summary Objects made on the launcher reach threads on thread servers that only call their
 *          instance methods (no new, no static access: JLS 12.4.1 initializes nothing there).
 *          Each server takes the class's initialization from the cluster soon after, so that
 *          its compilers see the class initialized (C2 trapped at every call to such a class
 *          and recompiled until it gave up), and the class's <clinit> still ran once, on the
 *          launcher, with its static values the same everywhere.
 * @library /lib
 * @run main/othervm ArrivingObjectsInitializeTheirClass
 */
import java.lang.reflect.Field;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class ArrivingObjectsInitializeTheirClass {
    static final int THREADS = 2;

    /** Made only on the launcher. */
    public static final class Payload {
        static final long STAMP = System.nanoTime() ^ ProcessHandle.current().pid();
        static int initializations;
        static {
            initializations++;
        }
        final int value;

        Payload(int value) {
            this.value = value;
        }

        int twice() {
            return 2 * value;
        }
    }

    /** The child program. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            sun.misc.Unsafe unsafe = (sun.misc.Unsafe) f.get(null);
            long launcher = ProcessHandle.current().pid();
            Payload[] items = new Payload[THREADS];
            for (int k = 0; k < THREADS; k++) {
                items[k] = new Payload(k + 20);
            }
            System.out.println("launcher pid " + launcher + " stamp " + Payload.STAMP);
            String[] lines = new String[THREADS];
            Thread[] threads = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                final int k = t;
                threads[t] = new Thread(() -> {
                    long pid = ProcessHandle.current().pid();
                    int twice = items[k].twice();  // an instance call: initializes nothing
                    long start = System.nanoTime();
                    boolean pending = unsafe.shouldBeInitialized(Payload.class);
                    while (pending && System.nanoTime() - start < 30_000_000_000L) {
                        try {
                            Thread.sleep(10);
                        } catch (InterruptedException e) {
                            break;
                        }
                        pending = unsafe.shouldBeInitialized(Payload.class);
                    }
                    long waited = (System.nanoTime() - start) / 1_000_000;
                    lines[k] = "thread " + k + " pid " + pid + " twice " + twice
                            + (pending ? " never initialized" : " initialized after " + waited + " ms")
                            + " stamp " + Payload.STAMP + " initializations " + Payload.initializations;
                }, "reader-" + t);
            }
            for (Thread t : threads) {
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            for (String line : lines) {
                System.out.println(line);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        DjavaChild.Result r = DjavaChild.run(Child.class, 90);
        Checks c = new Checks("ArrivingObjectsInitializeTheirClass");
        c.equal("child exit status", r.exitCode, 0);
        Matcher m = Pattern.compile("(?m)^launcher pid (\\d+) stamp (-?\\d+)$").matcher(r.stdout);
        c.check(m.find(), "no 'launcher pid' line");
        String launcher = m.group(1), stamp = m.group(2);
        Matcher t = Pattern.compile("(?m)^thread (\\d+) pid (\\d+) twice (\\d+) (.*) stamp (-?\\d+) "
                + "initializations (\\d+)$").matcher(r.stdout);
        int seen = 0;
        while (t.find()) {
            System.out.println(t.group());
            seen++;
            int k = Integer.parseInt(t.group(1));
            c.check(!t.group(2).equals(launcher), "thread " + k + " ran in the launcher");
            c.equal("thread " + k + "'s call", Integer.parseInt(t.group(3)), 2 * (k + 20));
            c.check(t.group(4).startsWith("initialized after"),
                    "thread " + k + ": Payload was " + t.group(4) + " on its node");
            c.equal("thread " + k + "'s stamp", t.group(5), stamp);
            c.equal("thread " + k + "'s count of <clinit> runs", t.group(6), "1");
        }
        c.equal("threads that reported", seen, THREADS);
        if (!c.ok()) {
            System.out.println(r.describe());
        }
        c.done();
    }
}
