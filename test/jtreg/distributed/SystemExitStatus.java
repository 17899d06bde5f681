/*
 * @test
 * @summary In a child JVM, a thread on a thread server calls System.exit(42) while main is
 *          blocked in join: the program ends with status 42, main prints nothing after the
 *          join, and nothing but the program's own output appears. In another, the thread
 *          that calls System.exit(43) was started on a thread server by a shipped thread and
 *          kept there beside it (it holds an open file of that node): the program ends with
 *          43 and the thread server goes on serving.
 * @library /lib
 * @run main/othervm SystemExitStatus
 */
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

    /**
     * The second child program: a shipped thread starts a thread that holds an open file of
     * its node, so it runs there, beside it; that one calls System.exit(43).
     */
    public static final class KeptBesideItsStarter {
        public static void main(String[] args) throws Exception {
            System.out.println("launcher pid " + ProcessHandle.current().pid());
            Thread starter = new Thread(() -> {
                try {
                    Path file = Files.createTempFile("exiter", ".open");
                    InputStream open = new FileInputStream(file.toFile());
                    Files.delete(file);  // the stream stays open
                    Thread exiter = new Thread(() -> {
                        System.out.println("exiter holds " + open + " in pid "
                                + ProcessHandle.current().pid());
                        System.exit(43);
                    }, "exiter");
                    exiter.start();
                    exiter.join();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }, "starter");
            starter.start();
            starter.join();
            System.out.println(AFTER_JOIN);
            Thread.sleep(20_000);
        }
    }

    static void exitBesideItsStarter(Checks c) throws Exception {
        DjavaChild.Result r = DjavaChild.run(KeptBesideItsStarter.class, 90);
        c.equal("exit status of System.exit(43) in a thread kept beside its starter",
                r.exitCode, 43);
        Matcher launcher = Pattern.compile("(?m)^launcher pid (\\d+)$").matcher(r.stdout);
        Matcher exiter = Pattern.compile("(?m)^exiter holds .* in pid (\\d+)$").matcher(r.stdout);
        if (!launcher.find() || !exiter.find()) {
            c.fail("the kept thread's child printed no pids");
            System.out.println(r.describe());
            return;
        }
        long server = Long.parseLong(exiter.group(1));
        c.check(server != Long.parseLong(launcher.group(1)),
                "the exiter ran in the launcher, not on a thread server");
        // A server that took the program's exit for its own would be gone by now.
        Thread.sleep(2000);
        c.check(ProcessHandle.of(server).map(ProcessHandle::isAlive).orElse(false),
                "the thread server that ran the exiter (pid " + server + ") is gone");
        c.check(!r.stdout.contains(AFTER_JOIN), "main printed after its join");
        if (!c.ok()) {
            System.out.println(r.describe());
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
        exitBesideItsStarter(c);
        c.done();
    }
}
