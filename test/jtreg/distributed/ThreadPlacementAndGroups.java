/*
 * @test
 * @summary Threads as Thread and ThreadGroup see them, wherever they run (issue 25): a thread
 *          whose task reaches a file descriptor of its starter's node runs on that node and
 *          reads the file; a thread that keeps System.out in a field runs elsewhere and prints
 *          to the program's console; a program's thread group lists and counts its threads
 *          wherever they run (a thread started by a shipped thread included), and a thread
 *          leaves it before join() returns; an untimed wait on a shared object's monitor and an
 *          untimed park read WAITING, not TIMED_WAITING (djava bounds both internally).
 * @library /lib
 * @run main/othervm ThreadPlacementAndGroups
 */
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public class ThreadPlacementAndGroups {
    static volatile long pid;
    static volatile String read;
    static volatile boolean inOwnGroup;
    static final Thread[] grandchildren = new Thread[3];
    static volatile Thread grandchildRef;
    static final Object lock = new Object();
    static volatile boolean release;
    static volatile boolean unparked;

    /** Keeps a stream in a field: System.out travels by name, so the task may run anywhere. */
    static final class Printer implements Runnable {
        final PrintStream out;

        Printer(PrintStream out) {
            this.out = out;
        }

        @Override
        public void run() {
            pid = ProcessHandle.current().pid();
            out.println("printed through a field by a thread elsewhere");
        }
    }

    public static void main(String[] args) throws Exception {
        Checks c = new Checks("ThreadPlacementAndGroups");
        boolean distributed = Integer.getInteger("djava.test.threadServers", 0) > 0;
        long mainPid = ProcessHandle.current().pid();

        // A task holding an open file of main's node runs where the file is open.
        Path file = Files.createTempFile("placement", ".txt");
        Files.writeString(file, "the file's contents");
        try (InputStream in = new FileInputStream(file.toFile())) {
            Thread reader = new Thread(() -> {
                pid = ProcessHandle.current().pid();
                try {
                    read = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                } catch (Exception e) {
                    read = e.toString();
                }
            }, "file reader");
            reader.start();
            reader.join();
        } finally {
            Files.deleteIfExists(file);
        }
        c.equal("what the reader read", read, "the file's contents");
        c.equal("the reader's node", pid, mainPid);

        Thread printer = new Thread(new Printer(System.out), "printer");
        printer.start();
        printer.join();
        if (distributed) {
            c.check(pid != mainPid, "the printer ran on another node");
        }

        // A program's thread group lists its threads wherever they run: a thread shipped from
        // main finds itself in main's group, and main's group counts the threads that thread
        // started, on whichever nodes they run (as ThreadPoolExecutor's own tests count a
        // pool's workers). Three of them, so that one runs on a node main does not.
        ThreadGroup group = Thread.currentThread().getThreadGroup();
        CountDownLatch grandchildrenStarted = new CountDownLatch(grandchildren.length);
        CountDownLatch finish = new CountDownLatch(1);
        Thread member = new Thread(() -> {
            Thread me = Thread.currentThread();
            inOwnGroup = lists(me.getThreadGroup(), me);
            for (int i = 0; i < grandchildren.length; i++) {
                grandchildren[i] = new Thread(() -> {
                    grandchildrenStarted.countDown();
                    try {
                        finish.await();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }, "grandchild " + i);
                grandchildren[i].start();
            }
            try {
                for (Thread t : grandchildren) {
                    t.join();
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, "member");
        member.start();
        grandchildrenStarted.await();
        c.check(lists(group, member), "main's group lists the thread it started");
        for (Thread t : grandchildren) {
            c.check(lists(group, t), "main's group lists " + t.getName() + ", which its thread started");
            c.check(t.getThreadGroup() == group, t.getName() + "'s group is main's: " + t.getThreadGroup());
        }
        c.check(group.activeCount() >= 2 + grandchildren.length,
                "main's group counts main, its thread and the grandchildren: " + group.activeCount());
        finish.countDown();
        member.join();
        c.check(inOwnGroup, "the thread is in its own thread group where it runs");
        // Thread.exit, wherever a thread ran, took it out before join returned.
        c.check(!lists(group, member), "main's group lets the thread go when it ends");
        for (Thread t : grandchildren) {
            c.check(!lists(group, t), "main's group lets " + t.getName() + " go when it ends");
        }
        c.check(member.getThreadGroup() == null, "an ended thread has no group: " + member.getThreadGroup());

        // Untimed waits read WAITING on the node where the thread runs: this one stays on
        // main's node (it holds an open file of it), where main observes it.
        Path anchor = Files.createTempFile("placement", ".anchor");
        InputStream nodeLocal = new FileInputStream(anchor.toFile());
        Thread waiter = new Thread(() -> {
            if (nodeLocal == null) {
                return;
            }
            synchronized (lock) {
                while (!release) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
            while (!unparked) {
                LockSupport.park();
            }
        }, "waiter");
        Thread.State[] states = new Thread.State[2];
        waiter.start();
        states[0] = stateOnItsNode(waiter, Thread.State.WAITING);
        synchronized (lock) {
            release = true;
            lock.notifyAll();
        }
        states[1] = stateOnItsNode(waiter, Thread.State.WAITING);
        unparked = true;
        LockSupport.unpark(waiter);
        waiter.join();
        nodeLocal.close();
        Files.deleteIfExists(anchor);
        c.equal("state in an untimed wait", states[0], Thread.State.WAITING);
        c.equal("state in an untimed park", states[1], Thread.State.WAITING);
        c.done();
    }

    static boolean lists(ThreadGroup group, Thread t) {
        Thread[] all = new Thread[group.activeCount() + 8];
        int n = group.enumerate(all);
        for (int i = 0; i < n; i++) {
            if (all[i] == t) {
                return true;
            }
        }
        return false;
    }

    /** Polls the thread's state (up to 20 s) until it is {@code wanted}; returns the last seen. */
    static Thread.State stateOnItsNode(Thread t, Thread.State wanted) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        Thread.State s = t.getState();
        while (s != wanted && System.nanoTime() < deadline) {
            Thread.sleep(10);
            s = t.getState();
        }
        return s;
    }
}
