/*
 * @test
 * @summary A thread that runs on another node has its stack there: Thread.getStackTrace()
 *          gives its frames as they read for a thread of this node (class, method, file, line,
 *          loader and module), and
 *          Thread.getAllStackTraces() lists the program's threads on every node with theirs;
 *          an ended thread has none. Main runs on the launcher (a child djava JVM: jtreg's own
 *          main runs on a thread server).
 * @library /lib
 * @run main/othervm RemoteStackTraces
 */
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

public class RemoteStackTraces {
    static final class Inner {
        /** Parks until released: the frame the tests look for. */
        static void holdHere(CountDownLatch ready, CountDownLatch release) throws InterruptedException {
            ready.countDown();
            release.await();
        }

        static void parkIn(CountDownLatch ready, CountDownLatch release) {
            try {
                holdHere(ready, release);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    static volatile long holderPid;
    static volatile Thread grandchild;

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            DjavaChild.runOnLauncher(RemoteStackTraces.class, 300);
            return;
        }
        Checks c = new Checks("RemoteStackTraces (launcher)");
        CountDownLatch ready = new CountDownLatch(3);
        CountDownLatch release = new CountDownLatch(1);
        // The oracle: a thread of this node parked where the others are; their frames must read
        // as its frames do.
        Thread local = Threads.onThisNode(() -> Inner.parkIn(ready, release), "local");
        Thread holder = new Thread(() -> {
            holderPid = ProcessHandle.current().pid();
            // A thread the remote thread starts: the program's too, wherever it runs.
            grandchild = new Thread(() -> Inner.parkIn(ready, release), "grandchild");
            grandchild.start();
            Inner.parkIn(ready, release);
        }, "holder");
        // The holder first: once the local thread waits on `release`, the holder reaches it
        // through the latch's queue, and a thread of this node's own work keeps whatever
        // reaches it here (Thread.start's closure scan), so the holder would not be shipped.
        holder.start();
        local.start();
        ready.await();
        // Until all are parked in holdHere (bounded).
        for (int i = 0; i < 200 && (holder.getState() != Thread.State.WAITING
                || grandchild.getState() != Thread.State.WAITING
                || local.getState() != Thread.State.WAITING); i++) {
            Thread.sleep(50);
        }
        if (Integer.getInteger("djava.test.threadServers", 0) > 0) {
            c.check(holderPid != ProcessHandle.current().pid(), "the holder ran on another node");
        }

        StackTraceElement[] trace = holder.getStackTrace();
        StackTraceElement[] oracle = local.getStackTrace();
        int at = indexOf(trace, "holdHere");
        int oracleAt = indexOf(oracle, "holdHere");
        c.check(at >= 0 && oracleAt >= 0, "the holder's stack has holdHere: " + Arrays.toString(trace));
        if (at >= 0 && oracleAt >= 0) {
            StackTraceElement e = trace[at];
            c.check(e.getClassName().equals("RemoteStackTraces$Inner")
                            && "RemoteStackTraces.java".equals(e.getFileName()) && e.getLineNumber() > 0
                            && e.toString().equals(oracle[oracleAt].toString()),
                    "holdHere's frame " + e + " reads as a local thread's, " + oracle[oracleAt]);
            c.check(at > 0 && oracleAt > 0 && trace[at - 1].getClassName().equals("java.util.concurrent.CountDownLatch")
                            && "java.base".equals(trace[at - 1].getModuleName())
                            && trace[at - 1].toString().equals(oracle[oracleAt - 1].toString()),
                    "the frame inside it is the JDK's CountDownLatch.await, module and all, as a local "
                            + "thread's: " + (at > 0 ? trace[at - 1] : "none") + " vs "
                            + (oracleAt > 0 ? oracle[oracleAt - 1] : "none"));
        }
        StackTraceElement bottom = trace.length > 0 ? trace[trace.length - 1] : null;
        c.check(bottom != null && bottom.getClassName().equals("java.lang.Thread")
                        && bottom.getMethodName().equals("run"),
                "the holder's bottom frame is Thread.run: " + bottom);

        Map<Thread, StackTraceElement[]> all = Thread.getAllStackTraces();
        c.check(all.containsKey(Thread.currentThread()), "getAllStackTraces has main");
        c.check(all.containsKey(holder) && indexOf(all.get(holder), "holdHere") >= 0,
                "getAllStackTraces has the holder, in holdHere: " + Arrays.toString(all.get(holder)));
        c.check(all.containsKey(grandchild) && indexOf(all.get(grandchild), "holdHere") >= 0,
                "getAllStackTraces has the thread the holder started, in holdHere: "
                        + Arrays.toString(all.get(grandchild)));

        release.countDown();
        holder.join();
        grandchild.join();
        local.join();
        c.equal("an ended thread's stack length", holder.getStackTrace().length, 0);
        c.check(!Thread.getAllStackTraces().containsKey(holder), "getAllStackTraces leaves out an ended thread");
        c.done();
        System.out.println("RemoteStackTraces (launcher): ok");
    }

    static int indexOf(StackTraceElement[] trace, String method) {
        for (int i = 0; trace != null && i < trace.length; i++) {
            if (trace[i].getMethodName().equals(method)) {
                return i;
            }
        }
        return -1;
    }
}
