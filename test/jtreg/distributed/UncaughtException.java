/*
 * @test
 * @summary In a child JVM (a real launcher main thread), a thread on a thread server ends with
 *          an uncaught exception: the launcher's stderr shows java's report
 *          'Exception in thread "NAME" ...' with the stack, the thread is dead after join,
 *          and the program goes on and exits 0.
 * @library /lib
 * @run main/othervm UncaughtException
 */
import java.util.List;

public class UncaughtException {
    static final String NAME = "boomer";
    static final String MESSAGE = "boom on purpose";

    static final class Boom extends Thread {
        Boom() {
            super(NAME);
        }

        @Override
        public void run() {
            Churn.garbage(20000);
            throw new IllegalStateException(MESSAGE);
        }
    }

    /** The child program. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            Boom boom = new Boom();
            boom.start();
            boom.join();
            System.out.println("after join alive=" + boom.isAlive());
            int[] after = new int[1];
            Thread next = new Thread(() -> after[0] = 42, "after-boom");
            next.start();
            next.join();
            System.out.println("program goes on: " + after[0]);
        }
    }

    public static void main(String[] args) throws Exception {
        DjavaChild.Result r = DjavaChild.run(Child.class, 90);
        Checks c = new Checks("UncaughtException");
        c.equal("child exit status", r.exitCode, 0);
        List<String> err = r.stderrLines();
        String header = "Exception in thread \"" + NAME + "\" java.lang.IllegalStateException: " + MESSAGE;
        int at = err.indexOf(header);
        c.check(at >= 0, "stderr has no line '" + header + "'");
        if (at >= 0) {
            String next = at + 1 < err.size() ? err.get(at + 1) : "<end of stderr>";
            c.check(next.startsWith("\tat "), "the line after the header is not a stack frame: '" + next + "'");
            c.check(next.startsWith("\tat UncaughtException$Boom.run(UncaughtException.java:"),
                    "the first frame is not Boom.run: '" + next + "'");
        }
        c.equal("occurrences of the header", err.stream().filter(header::equals).count(), 1);
        List<String> out = r.stdoutLines();
        c.check(out.contains("after join alive=false"), "stdout lacks 'after join alive=false'");
        c.check(out.contains("program goes on: 42"), "stdout lacks 'program goes on: 42'");
        if (!c.ok()) {
            System.out.println(r.describe());
        }
        c.done();
    }
}
