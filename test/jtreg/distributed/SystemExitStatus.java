/*
 * @test
 * @summary In a child JVM, a thread on a thread server calls System.exit(42) while main is
 *          blocked in join: the program ends with status 42, main prints nothing after the
 *          join, and nothing but the program's own output appears.
 * @library /lib
 * @run main/othervm SystemExitStatus
 */
public class SystemExitStatus {
    static final String AFTER_JOIN = "main after join: System.exit did not end the program";

    /** The child program. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            Thread exiter = new Thread(() -> {
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                Churn.garbage(20000);
                System.out.println("exiting with 42");
                System.exit(42);
            }, "exiter");
            exiter.start();
            System.out.println("main joins");
            exiter.join();
            System.out.println(AFTER_JOIN);
            Thread.sleep(20_000);
            System.out.println(AFTER_JOIN + " (still, 20 s later)");
        }
    }

    public static void main(String[] args) throws Exception {
        DjavaChild.Result r = DjavaChild.run(Child.class, 90);
        Checks c = new Checks("SystemExitStatus");
        c.equal("child exit status", r.exitCode, 42);
        c.check(r.stdoutLines().contains("main joins"), "stdout lacks 'main joins'");
        c.check(r.stdoutLines().contains("exiting with 42"), "stdout lacks 'exiting with 42'");
        c.check(!r.stdout.contains(AFTER_JOIN), "main printed after its join");
        c.check(!r.stderr.contains("InternalError"), "stderr mentions InternalError");
        c.check(!r.stderr.contains("djava:"), "stderr has djava: messages");
        c.check(!r.stderr.contains("Exception"), "stderr mentions an Exception");
        if (!c.ok()) {
            System.out.println(r.describe());
        }
        c.done();
    }
}
