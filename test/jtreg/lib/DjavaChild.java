import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Runs a main class in a child JVM of the JDK under test, with the VM and java options jtreg
 * was given (test.vm.opts, test.java.opts: under djava they name the cluster), so that the
 * child's main thread is a real launcher main thread. Standard output and error go to files
 * (no reader threads: in the parent those would be program threads too) and are returned
 * whole with the exit status. The wait is bounded; a child that outlives it is destroyed and
 * the test fails with what it printed so far.
 */
public final class DjavaChild {
    private DjavaChild() {
    }

    /** A finished child: exit status and everything it printed. */
    public static final class Result {
        public final List<String> command;
        public final int exitCode;
        public final String stdout;
        public final String stderr;

        Result(List<String> command, int exitCode, String stdout, String stderr) {
            this.command = command;
            this.exitCode = exitCode;
            this.stdout = stdout;
            this.stderr = stderr;
        }

        public List<String> stdoutLines() {
            return lines(stdout);
        }

        public List<String> stderrLines() {
            return lines(stderr);
        }

        /** The command, status and both streams, for failure messages. */
        public String describe() {
            return "command: " + String.join(" ", command) + "\nexit status: " + exitCode
                    + "\n----- child stdout -----\n" + stdout
                    + "\n----- child stderr -----\n" + stderr + "\n-----";
        }

        /** Fails with the whole child output unless the exit status is {@code expected}. */
        public Result assertExitCode(int expected) {
            if (exitCode != expected) {
                throw new AssertionError("child exit status " + exitCode + ", expected " + expected
                        + "\n" + describe());
            }
            return this;
        }

        private static List<String> lines(String s) {
            return s.lines().collect(Collectors.toList());
        }
    }

    /**
     * Runs {@code mainClass} with the one argument "launcher" in a child, so that its main
     * thread is a launcher's (jtreg's own main runs on a thread server under djava), and fails
     * the test unless the child ends with status 0 having printed "NAME (launcher): ok".
     */
    public static void runOnLauncher(Class<?> mainClass, long timeoutSeconds) throws Exception {
        Result child = run(mainClass, timeoutSeconds, "launcher");
        child.assertExitCode(0);
        if (!child.stdout.contains(mainClass.getSimpleName() + " (launcher): ok")) {
            throw new AssertionError(child.describe());
        }
    }

    /** Runs {@code mainClass} with {@code args}; fails the test after {@code timeoutSeconds}. */
    public static Result run(Class<?> mainClass, long timeoutSeconds, String... args) throws Exception {
        return runWithInput(mainClass, timeoutSeconds, null, args);
    }

    /** As {@link #run}, with {@code input} (UTF-8; null: none) as the child's standard input. */
    public static Result runWithInput(Class<?> mainClass, long timeoutSeconds, String input,
                                      String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(property("java.home") + File.separator + "bin" + File.separator + "java");
        command.addAll(options(property("test.vm.opts")));
        command.addAll(options(property("test.java.opts")));
        command.add("-cp");
        command.add(property("test.class.path"));
        command.add(mainClass.getName());
        command.addAll(Arrays.asList(args));

        Path out = Files.createTempFile("djava-child-", ".out");
        Path err = Files.createTempFile("djava-child-", ".err");
        Path in = input == null ? null : Files.createTempFile("djava-child-", ".in");
        try {
            if (in != null) {
                Files.write(in, input.getBytes(StandardCharsets.UTF_8));
            }
            ProcessBuilder pb = new ProcessBuilder(command);
            // The child gets exactly jtreg's options, not a launcher environment's extras.
            pb.environment().remove("JDK_JAVA_OPTIONS");
            pb.environment().remove("_JAVA_OPTIONS");
            pb.redirectInput(ProcessBuilder.Redirect.from(in == null ? new File("/dev/null") : in.toFile()));
            pb.redirectOutput(out.toFile());
            pb.redirectError(err.toFile());
            Process p = pb.start();
            double factor = Double.parseDouble(System.getProperty("test.timeout.factor", "1.0"));
            long timeout = Math.max(timeoutSeconds, (long) (timeoutSeconds * factor));
            if (!p.waitFor(timeout, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
                Result partial = new Result(command, -1, read(out), read(err));
                throw new AssertionError("child did not end within " + timeout + " s; destroyed it\n"
                        + partial.describe());
            }
            return new Result(command, p.exitValue(), read(out), read(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
            if (in != null) {
                Files.deleteIfExists(in);
            }
        }
    }

    /**
     * A system property jtreg sets for every test. A missing one means this JVM does not see
     * the properties of the VM jtreg started (under djava: the test's main thread runs on a
     * thread server, whose System properties would be its own).
     */
    static String property(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new AssertionError("system property '" + name + "' is not set in this JVM (pid "
                    + ProcessHandle.current().pid() + ", thread " + Thread.currentThread().getName()
                    + ", user.dir " + System.getProperty("user.dir") + "); jtreg sets it on the"
                    + " test VM's command line, so the test's main thread should see it");
        }
        return value;
    }

    private static List<String> options(String s) {
        List<String> result = new ArrayList<>();
        for (String o : s.trim().split("\\s+")) {
            if (!o.isEmpty()) {
                result.add(o);
            }
        }
        return result;
    }

    private static String read(Path p) throws IOException {
        return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
    }
}
