/*
 * @test
 * @summary A CyclicBarrier shared by threads on both thread servers keeps CyclicBarrier's
 *          contract: each round's arrival indices are 0..parties-1, its action runs once
 *          before any party goes on and every party sees what the others wrote before
 *          they arrived; a party that times out, is interrupted (by a thread of another
 *          node, or arriving interrupted) or whose action throws breaks the barrier for
 *          every party; isBroken, getNumberWaiting and reset answer and act as they do in
 *          one VM, and a reset barrier serves again.
 * @library /lib
 * @run main/othervm BarrierSemanticsAcrossNodes
 */
import java.util.Arrays;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

public class BarrierSemanticsAcrossNodes {
    static final Checks checks = new Checks("BarrierSemanticsAcrossNodes");
    static final int PARTIES = 4;
    static final int ROUNDS = 40;

    /** What each party's await ended with: "ok", or the exception's simple name. */
    static String outcome(CyclicBarrier b, long timeoutMillis) {
        try {
            if (timeoutMillis > 0) {
                b.await(timeoutMillis, TimeUnit.MILLISECONDS);
            } else {
                b.await();
            }
            return "ok";
        } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
            return e.getClass().getSimpleName();
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    /** Waits up to 30 s for n parties to wait at b. */
    static boolean waitingReaches(CyclicBarrier b, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (b.getNumberWaiting() == n) {
                return true;
            }
            Thread.sleep(5);
        }
        return false;
    }

    static void roundsWithAnAction() throws Exception {
        int[] slots = new int[PARTIES];
        AtomicInteger actions = new AtomicInteger();
        int[] sawAllSlots = new int[1];
        CyclicBarrier b = new CyclicBarrier(PARTIES, () -> {
            // Every party wrote its slot before it arrived.
            int round = actions.incrementAndGet();
            boolean all = true;
            for (int s : slots) {
                all &= s == round;
            }
            if (all) {
                sawAllSlots[0]++;
            }
        });
        int[][] indices = new int[ROUNDS][PARTIES];
        String[] failures = new String[PARTIES];
        Thread[] threads = new Thread[PARTIES];
        for (int t = 0; t < PARTIES; t++) {
            int me = t;
            threads[t] = new Thread(() -> {
                try {
                    for (int round = 1; round <= ROUNDS; round++) {
                        slots[me] = round;
                        indices[round - 1][me] = b.await();
                        if (actions.get() < round) {
                            failures[me] = "round " + round + " went on before its action ran";
                            return;
                        }
                    }
                } catch (Exception e) {
                    failures[me] = e.toString();
                }
            }, "party-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);
        for (int t = 0; t < PARTIES; t++) {
            checks.check(failures[t] == null, "party " + t + ": " + failures[t]);
        }
        checks.equal("actions run", actions.get(), ROUNDS);
        checks.equal("actions that saw every party's write", sawAllSlots[0], ROUNDS);
        for (int round = 0; round < ROUNDS; round++) {
            int[] sorted = indices[round].clone();
            Arrays.sort(sorted);
            checks.equal("arrival indices of round " + (round + 1), Arrays.toString(sorted),
                         "[0, 1, 2, 3]");
        }
        checks.check(!b.isBroken(), "the barrier is whole after its rounds");
        checks.equal("waiting after the rounds", b.getNumberWaiting(), 0);
    }

    static void aTimeoutBreaksItForEveryone() throws Exception {
        CyclicBarrier b = new CyclicBarrier(3);
        AtomicReference<String> patient = new AtomicReference<>();
        AtomicReference<String> hasty = new AtomicReference<>();
        Thread p = new Thread(() -> patient.set(outcome(b, 0)), "patient");
        p.start();
        checks.check(waitingReaches(b, 1), "main sees the first party wait");
        Thread h = new Thread(() -> hasty.set(outcome(b, 300)), "hasty");
        h.start();
        Threads.joinAll(p, h);
        checks.equal("the timed party", hasty.get(), "TimeoutException");
        checks.equal("the other party", patient.get(), "BrokenBarrierException");
        checks.check(b.isBroken(), "the barrier is broken");
        checks.equal("an arrival at the broken barrier", outcome(b, 0), "BrokenBarrierException");
        b.reset();
        checks.check(!b.isBroken(), "reset makes it whole");
        // And it serves again: three parties trip it.
        AtomicReference<String> second = new AtomicReference<>();
        AtomicReference<String> third = new AtomicReference<>();
        Thread s = new Thread(() -> second.set(outcome(b, 0)), "second");
        Thread t = new Thread(() -> third.set(outcome(b, 0)), "third");
        Threads.startAll(s, t);
        checks.check(waitingReaches(b, 2), "main sees two parties wait after the reset");
        checks.equal("main's own arrival", outcome(b, 0), "ok");
        Threads.joinAll(s, t);
        checks.equal("the parties after the reset", second.get() + " " + third.get(), "ok ok");
    }

    static void anInterruptBreaksIt() throws Exception {
        CyclicBarrier b = new CyclicBarrier(3);
        AtomicReference<String> first = new AtomicReference<>();
        AtomicReference<String> second = new AtomicReference<>();
        AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        Thread f = new Thread(() -> first.set(outcome(b, 0)), "first");
        Thread s = new Thread(() -> {
            second.set(outcome(b, 0));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        }, "second");
        Threads.startAll(f, s);
        checks.check(waitingReaches(b, 2), "main sees two parties wait");
        s.interrupt();
        Threads.joinAll(f, s);
        checks.equal("the interrupted party", second.get(), "InterruptedException");
        checks.check(!stillInterrupted.get(), "InterruptedException cleared its interrupt");
        checks.equal("the other party", first.get(), "BrokenBarrierException");
        checks.check(b.isBroken(), "the interrupt broke the barrier");
        b.reset();

        // A thread that arrives interrupted breaks it too.
        AtomicReference<String> waiter = new AtomicReference<>();
        AtomicReference<String> interrupted = new AtomicReference<>();
        Thread w = new Thread(() -> waiter.set(outcome(b, 0)), "waiter");
        w.start();
        checks.check(waitingReaches(b, 1), "main sees the waiter");
        Thread i = new Thread(() -> {
            Thread.currentThread().interrupt();
            interrupted.set(outcome(b, 0));
        }, "arrives-interrupted");
        i.start();
        Threads.joinAll(w, i);
        checks.equal("the thread arriving interrupted", interrupted.get(), "InterruptedException");
        checks.equal("the waiter", waiter.get(), "BrokenBarrierException");
        b.reset();
    }

    static void aThrowingActionBreaksIt() throws Exception {
        CyclicBarrier b = new CyclicBarrier(2, () -> {
            throw new IllegalStateException("the action fails");
        });
        AtomicReference<String> waiter = new AtomicReference<>();
        Thread w = new Thread(() -> waiter.set(outcome(b, 0)), "waiter");
        w.start();
        checks.check(waitingReaches(b, 1), "main sees the waiter");
        AtomicReference<String> last = new AtomicReference<>();
        Thread l = new Thread(() -> last.set(outcome(b, 0)), "last");
        l.start();
        Threads.joinAll(w, l);
        checks.equal("the last party, which ran the action", last.get(),
                     "IllegalStateException: the action fails");
        checks.equal("the waiter", waiter.get(), "BrokenBarrierException");
        checks.check(b.isBroken(), "the failed action broke the barrier");
    }

    static void resetReleasesTheWaiters() throws Exception {
        CyclicBarrier b = new CyclicBarrier(3);
        AtomicReference<String> a = new AtomicReference<>();
        AtomicReference<String> c = new AtomicReference<>();
        Thread ta = new Thread(() -> a.set(outcome(b, 0)), "a");
        Thread tc = new Thread(() -> c.set(outcome(b, 0)), "c");
        Threads.startAll(ta, tc);
        checks.check(waitingReaches(b, 2), "main sees two parties wait");
        b.reset();
        Threads.joinAll(ta, tc);
        checks.equal("the parties a reset released", a.get() + " " + c.get(),
                     "BrokenBarrierException BrokenBarrierException");
        checks.check(!b.isBroken(), "after reset the barrier is whole");
        checks.equal("waiting after the reset", b.getNumberWaiting(), 0);
    }

    public static void main(String[] args) throws Exception {
        roundsWithAnAction();
        aTimeoutBreaksItForEveryone();
        anInterruptBreaksIt();
        aThrowingActionBreaksIt();
        resetReleasesTheWaiters();
        checks.done();
        System.out.println("BarrierSemanticsAcrossNodes: ok");
    }
}
