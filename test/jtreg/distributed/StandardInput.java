/*
 * @test
 * @summary System.in belongs to the launcher, as System.out does (issue 25): a program whose
 *          main (in a launcher: a child JVM) reads the first line of its standard input byte by
 *          byte, and whose thread on a thread server then reads the rest with a Scanner, gets
 *          every number once and in order (the sum of 1..1000), and a later read from another
 *          thread sees the end of the input. Before, a thread server's System.in was at its
 *          end at once and the sum was 0.
 * @library /lib
 * @run main/othervm StandardInput
 */
import java.io.IOException;
import java.io.InputStream;
import java.util.Scanner;

public class StandardInput {
    static final int COUNT = 1000;
    static volatile long sum;
    static volatile int numbers;
    static volatile long readerPid;
    static volatile int afterEnd;

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            child();
            return;
        }
        StringBuilder input = new StringBuilder("a header line\n");
        for (int i = 1; i <= COUNT; i++) {
            input.append(i).append(i % 10 == 0 ? '\n' : ' ');
        }
        DjavaChild.Result r = DjavaChild.runWithInput(StandardInput.class, 120, input.toString(), "child")
                .assertExitCode(0);
        Checks c = new Checks("StandardInput");
        c.check(r.stdoutLines().contains("first line: a header line"), "main read the first line\n"
                + r.describe());
        c.check(r.stdoutLines().contains("numbers " + COUNT + " sum " + (long) COUNT * (COUNT + 1) / 2),
                "the reader got every number once\n" + r.describe());
        c.check(r.stdoutLines().contains("after the end: -1"), "a read after the end gives -1\n"
                + r.describe());
        if (Integer.getInteger("djava.test.threadServers", 0) > 0) {
            c.check(r.stdoutLines().contains("reader elsewhere: true"),
                    "the reader ran on another node than main\n" + r.describe());
        }
        c.done();
    }

    static void child() throws Exception {
        InputStream in = System.in;
        StringBuilder first = new StringBuilder();
        for (int b; (b = in.read()) != -1 && b != '\n'; ) {
            first.append((char) b);
        }
        System.out.println("first line: " + first);
        Thread reader = new Thread(() -> {
            readerPid = ProcessHandle.current().pid();
            Scanner scanner = new Scanner(System.in);
            long s = 0;
            int n = 0;
            while (scanner.hasNextLong()) {
                s += scanner.nextLong();
                n++;
            }
            sum = s;
            numbers = n;
        }, "reader");
        reader.start();
        reader.join();
        Thread late = new Thread(() -> {
            try {
                afterEnd = System.in.read();
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }, "late reader");
        late.start();
        late.join();
        System.out.println("numbers " + numbers + " sum " + sum);
        System.out.println("after the end: " + afterEnd);
        System.out.println("reader elsewhere: " + (readerPid != ProcessHandle.current().pid()));
    }
}
