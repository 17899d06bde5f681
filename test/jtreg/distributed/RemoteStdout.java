/*
 * @test
 * @summary In a child JVM, 4 threads on the thread servers each print 200 numbered lines with
 *          System.out.println: the launcher's stdout has every line whole, exactly once, and
 *          in order per thread, and the main thread's line printed after joining them last
 *          (a thread's output reaches the launcher before its end is seen).
 * @library /lib
 * @run main/othervm RemoteStdout
 */
import java.util.ArrayList;
import java.util.List;

public class RemoteStdout {
    static final int THREADS = 4;
    static final int LINES = 200;
    static final String DONE = "main: all printers joined";

    /** The child program. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            Thread[] printers = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                final int k = t;
                printers[t] = new Thread(() -> {
                    for (int i = 0; i < LINES; i++) {
                        System.out.println("t" + k + " line " + i);
                        if (i % 10 == 0) {
                            Churn.garbage(4000);
                        }
                    }
                }, "printer-" + t);
            }
            for (Thread t : printers) {
                t.start();
            }
            for (Thread t : printers) {
                t.join();
            }
            System.out.println(DONE);
        }
    }

    public static void main(String[] args) throws Exception {
        DjavaChild.Result r = DjavaChild.run(Child.class, 90);
        Checks c = new Checks("RemoteStdout");
        c.equal("child exit status", r.exitCode, 0);
        List<String> lines = r.stdoutLines();
        List<List<String>> perThread = new ArrayList<>();
        for (int k = 0; k < THREADS; k++) {
            perThread.add(new ArrayList<>());
        }
        int strange = 0;
        for (String line : lines) {
            if (line.matches("t[0-9] line [0-9]+") && line.charAt(1) - '0' < THREADS) {
                perThread.get(line.charAt(1) - '0').add(line);
            } else if (!line.equals(DONE) && strange++ < 10) {
                c.fail("stdout line is not whole or not expected: '" + line + "'");
            }
        }
        for (int k = 0; k < THREADS; k++) {
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < LINES; i++) {
                expected.add("t" + k + " line " + i);
            }
            c.check(perThread.get(k).equals(expected), "thread " + k + "'s lines are not its " + LINES
                    + " lines once each in order: " + perThread.get(k));
        }
        c.check(!lines.isEmpty() && lines.get(lines.size() - 1).equals(DONE),
                "the last stdout line is not '" + DONE + "'");
        c.equal("stdout lines", lines.size(), THREADS * LINES + 1);
        c.check(!r.stderr.contains("Exception") && !r.stderr.contains("Error") && !r.stderr.contains("djava:"),
                "stderr reports an error");
        if (!c.ok()) {
            System.out.println(r.describe());
        }
        c.done();
    }
}
