/*
 * @test
 * @summary A thread waits (Object.wait) on a local object while a thread on another node needs
 *          it, through a shared object's field, to notify the waiter: the object becomes shared
 *          without waiting for the waiter to stop (it steps aside: a spurious wake-up, JLS
 *          17.2.1), and the notify across nodes wakes it; with one waiter and with several, at
 *          any depth of re-entry, and the object's monitor then counts the waiter's re-entries
 *          right (it is free for another node once the waiter leaves). Before, the waiter and
 *          the notifier deadlocked until sos-server cut the waiter's node off. The waiters run on
 *          the launcher (a child djava JVM: jtreg's main itself runs on a thread server, where
 *          the notifier might be placed too).
 * @library /lib
 * @run main/othervm WaitersStepAside
 */
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

public class WaitersStepAside {
    static final class Mailbox {
        Object waitedOn;
    }

    /** Guarded by its own monitor: set by the notifier, looked at by the waiters. */
    static final class Signal {
        boolean set;
    }

    static volatile Mailbox mailbox;
    static volatile long notifierPid;

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            DjavaChild.runOnLauncher(WaitersStepAside.class, 300);
            return;
        }
        Checks c = new Checks("WaitersStepAside (launcher)");
        oneWaiter(c, 0);
        oneWaiter(c, 2);
        severalWaiters(c, 3);
        if (Integer.getInteger("djava.test.threadServers", 0) > 0) {
            c.check(notifierPid != ProcessHandle.current().pid(), "the notifier ran on another node");
        }
        c.done();
        System.out.println("WaitersStepAside (launcher): ok");
    }

    /** The notifier, on a thread server: waits for the mailbox's object, then sets and notifies. */
    static Thread notifier() {
        return new Thread(() -> {
            notifierPid = ProcessHandle.current().pid();
            Object o;
            while ((o = mailbox.waitedOn) == null) {
                Thread.onSpinWait();
            }
            Signal s = (Signal) o;
            synchronized (s) {
                s.set = true;
                s.notifyAll();
            }
        }, "notifier");
    }

    /** Main waits on a local Signal, holding it reentered `depth` more times. */
    static void oneWaiter(Checks c, int depth) throws Exception {
        mailbox = new Mailbox();
        Thread n = notifier();
        n.start();  // publishes the mailbox
        Signal s = new Signal();
        long start = System.nanoTime();
        boolean set = waitNested(s, depth, 60_000);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        n.join(60_000);
        c.check(set, "depth " + depth + ": the waiter saw the notifier's signal (waited " + ms + " ms)");
        c.check(!n.isAlive(), "depth " + depth + ": the notifier ended");
        // The waiter left every level: another node can take the monitor now.
        c.check(lockedElsewhere(s), "depth " + depth + ": a thread on another node took the monitor after the waiter left");
    }

    static boolean waitNested(Signal s, int depth, long timeoutMs) throws InterruptedException {
        synchronized (s) {
            if (depth > 0) {
                return waitNested(s, depth - 1, timeoutMs);
            }
            mailbox.waitedOn = s;  // the notifier reads this while main waits on s
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (!s.set) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    return false;
                }
                s.wait(left);
            }
            return true;
        }
    }

    static boolean lockedElsewhere(Object o) throws InterruptedException {
        boolean[] took = new boolean[1];
        Thread t = new Thread(() -> {
            synchronized (o) {
                took[0] = true;
            }
        });
        t.start();
        t.join(60_000);
        return took[0] && !t.isAlive();
    }

    /** Several local threads wait on one object the notifier needs. */
    static void severalWaiters(Checks c, int waiters) throws Exception {
        mailbox = new Mailbox();
        Signal s = new Signal();
        AtomicInteger woken = new AtomicInteger();
        AtomicInteger waiting = new AtomicInteger();
        // Local threads: they must not be shipped (they would make s shared at their start).
        Thread[] ws = new Thread[waiters];
        for (int i = 0; i < waiters; i++) {
            ws[i] = Threads.onThisNode(() -> {
                synchronized (s) {
                    waiting.incrementAndGet();
                    long deadline = System.currentTimeMillis() + 60_000;
                    while (!s.set && System.currentTimeMillis() < deadline) {
                        try {
                            s.wait(1000);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    if (s.set) {
                        woken.incrementAndGet();
                    }
                }
            }, "waiter " + i);
            ws[i].start();
        }
        while (waiting.get() < waiters) {
            Thread.sleep(10);
        }
        Thread n = notifier();
        n.start();
        synchronized (s) {
            mailbox.waitedOn = s;
        }
        for (Thread w : ws) {
            w.join(90_000);
        }
        n.join(60_000);
        c.equal("waiters that saw the signal", woken.get(), waiters);
    }
}
