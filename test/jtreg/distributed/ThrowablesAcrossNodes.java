/*
 * @test
 * @summary A throwable made on one node reads on every other node as it does where it was made
 *          (issue 25): a task's exception through Future.get and CompletableFuture, one stored
 *          in a shared field, with its cause and suppressed exceptions; getStackTrace and
 *          printStackTrace give the frames, files, lines and modules of the node that threw,
 *          and the receiver may add suppressed exceptions and read them back anywhere; a deep
 *          stack trace arrives whole.
 * @library /lib
 * @run main/othervm ThrowablesAcrossNodes
 */
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public class ThrowablesAcrossNodes {
    static volatile Throwable stored;
    static volatile String printedWhereThrown;
    static volatile long throwerPid;
    static volatile String seenOnServer;

    static String printed(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }

    static int failingTask(int depth) throws IOException {
        if (depth == 0) {
            IOException root = new IOException("disk gone");
            IllegalStateException e = new IllegalStateException("task failed", root);
            e.addSuppressed(new IllegalArgumentException("while closing"));
            throw new UncheckedWrapper(e);
        }
        return failingTask(depth - 1) + 1;
    }

    /** A program's own exception class: it must resolve on every node. */
    static final class UncheckedWrapper extends RuntimeException {
        UncheckedWrapper(Throwable cause) {
            super("wrapped: " + cause.getMessage(), cause);
        }
    }

    public static void main(String[] args) throws Exception {
        Checks c = new Checks("ThrowablesAcrossNodes");
        long mainPid = ProcessHandle.current().pid();

        // A throwable stored in a shared field, never printed where it was thrown (its
        // frames travel), and what the thrower printed of its twin from the same call site.
        Thread thrower = new Thread(() -> {
            throwerPid = ProcessHandle.current().pid();
            for (int i = 0; i < 2; i++) {
                try {
                    failingTask(2);
                } catch (Throwable t) {
                    if (i == 0) {
                        printedWhereThrown = printed(t);
                    } else {
                        stored = t;
                    }
                }
            }
        }, "thrower");
        thrower.start();
        thrower.join();
        if (Integer.getInteger("djava.test.threadServers", 0) > 0) {
            c.check(throwerPid != mainPid, "the thrower ran on another node than main");
        }
        Throwable t = stored;
        c.check(t instanceof UncheckedWrapper, "the stored throwable is an UncheckedWrapper: " + t);
        StackTraceElement[] trace = t.getStackTrace();
        c.check(trace.length >= 4 && trace[0].getMethodName().equals("failingTask")
                        && trace[0].getClassName().equals("ThrowablesAcrossNodes")
                        && "ThrowablesAcrossNodes.java".equals(trace[0].getFileName())
                        && trace[0].getLineNumber() > 0,
                "its top frame is failingTask in ThrowablesAcrossNodes.java: " + Arrays.toString(trace));
        c.check(trace[trace.length - 1].toString().equals("java.base/java.lang.Thread.run(Thread.java:"
                        + trace[trace.length - 1].getLineNumber() + ")"),
                "its bottom frame reads java.base/java.lang.Thread.run: " + trace[trace.length - 1]);
        Throwable cause = t.getCause();
        c.check(cause instanceof IllegalStateException && cause.getCause() instanceof IOException
                        && "disk gone".equals(cause.getCause().getMessage()),
                "its cause chain is IllegalStateException <- IOException(disk gone): " + cause);
        c.check(cause != null && cause.getSuppressed().length == 1
                        && cause.getSuppressed()[0] instanceof IllegalArgumentException,
                "its cause's suppressed exception arrived: "
                        + (cause == null ? "-" : Arrays.toString(cause.getSuppressed())));
        // Printed here, it reads as the thrower printed its twin.
        String here = printed(t);
        String there = printedWhereThrown;
        c.check(here.lines().count() > 8 && here.equals(there),
                "main prints the throwable as its node would:\n" + here + "--- there:\n" + there);

        // A deep stack trace, its frames' text many times longer than a line the VM formats
        // (2000 bytes), arrives whole: every frame, the bottom one last.
        Thread deep = new Thread(() -> {
            try {
                failingTask(300);
            } catch (Throwable x) {
                stored = x;  // not looked at here: its frames travel as text
            }
        }, "deep thrower");
        deep.start();
        deep.join();
        StackTraceElement[] deepTrace = stored.getStackTrace();
        long failingFrames = Arrays.stream(deepTrace)
                .filter(e -> e.getMethodName().equals("failingTask")).count();
        c.equal("failingTask frames of a deep trace", failingFrames, 301L);
        c.check(deepTrace.length > 301
                        && deepTrace[deepTrace.length - 1].getMethodName().equals("run")
                        && deepTrace[deepTrace.length - 1].getClassName().equals("java.lang.Thread"),
                "a deep trace ends in Thread.run: " + deepTrace[deepTrace.length - 1]);
        stored = t;

        // Suppressed exceptions added here are seen by a thread on a server.
        t.addSuppressed(new Error("added by main"));
        Thread reader = new Thread(() -> seenOnServer = Arrays.toString(stored.getSuppressed())
                + " " + stored.getStackTrace()[0].getMethodName());
        reader.start();
        reader.join();
        c.equal("suppressed seen on a server", seenOnServer,
                "[java.lang.Error: added by main] failingTask");

        // A throwable made on main, read on a server (the other direction).
        try {
            Integer.parseInt("seven");
        } catch (NumberFormatException e) {
            stored = e;
        }
        Thread other = new Thread(() -> seenOnServer = stored.getStackTrace()[0].toString()
                + " | " + stored.getMessage());
        other.start();
        other.join();
        c.check(seenOnServer != null && seenOnServer.startsWith("java.base/java.lang.NumberFormatException")
                        && seenOnServer.endsWith("| For input string: \"seven\""),
                "a server reads main's NumberFormatException: " + seenOnServer);

        // A task's exception through the executors' futures.
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Integer> f = pool.submit(() -> failingTask(1));
            try {
                f.get();
                c.fail("Future.get returned");
            } catch (ExecutionException e) {
                c.check(e.getCause() instanceof UncheckedWrapper
                                && e.getCause().getStackTrace()[0].getMethodName().equals("failingTask"),
                        "Future.get throws the task's exception: " + e.getCause());
            }
            CompletableFuture<Integer> cf = CompletableFuture.supplyAsync(() -> {
                try {
                    return failingTask(0);
                } catch (IOException e) {
                    throw new CompletionException(e);
                }
            }, pool);
            try {
                cf.get();
                c.fail("CompletableFuture.get returned");
            } catch (ExecutionException e) {
                c.check(e.getCause() instanceof UncheckedWrapper,
                        "CompletableFuture.get throws the supplier's exception: " + e.getCause());
            }
            try {
                cf.join();
                c.fail("CompletableFuture.join returned");
            } catch (CompletionException e) {
                c.check(e.getCause() instanceof UncheckedWrapper,
                        "CompletableFuture.join wraps it: " + e.getCause());
            }
            CompletableFuture<String> handled = cf.handle((v, x) -> x == null ? "none"
                    : x.getClass().getSimpleName() + "/" + x.getCause().getClass().getSimpleName());
            c.equal("handle sees the exception", handled.get(), "CompletionException/UncheckedWrapper");
        } finally {
            pool.shutdown();
        }
        c.done();
    }
}
