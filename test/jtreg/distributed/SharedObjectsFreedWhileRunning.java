/*
 * @test
 * @summary The distributed garbage collector never frees what a program can still reach:
 *          objects handed between nodes while the last other reference dies, held only by a
 *          parked thread's stack, only by a static, only by a monitor's waiter, weakly
 *          referenced on one node and strongly on another, resurrected by a finalizer, and
 *          rings of objects; each read back intact while the nodes collect (System.gc on
 *          every node, so that replicas die and the cache releases their chunks).
 * @library /lib
 * @run main/othervm SharedObjectsFreedWhileRunning
 */
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

public class SharedObjectsFreedWhileRunning {
    /** A value whose fields say whether it arrived whole. */
    static class Box {
        final int value;
        final int[] data;
        Box next;

        Box(int value) {
            this.value = value;
            this.data = new int[] {value, value * 2, value * 3};
        }

        boolean intact() {
            return data != null && data.length == 3 && data[0] == value && data[1] == value * 2
                && data[2] == value * 3;
        }
    }

    /** Resurrects itself where it is finalized. */
    static final class Phoenix extends Box {
        static final ConcurrentLinkedQueue<Phoenix> risen = new ConcurrentLinkedQueue<>();

        Phoenix(int value) {
            super(value);
        }

        @Override
        @SuppressWarnings("removal")
        protected void finalize() {
            risen.add(this);
        }
    }

    static volatile Box viaStatic;
    static volatile boolean released;
    static final List<String> failures = new ArrayList<>();

    static synchronized void fail(String why) {
        failures.add(why);
    }

    static void expectIntact(String what, Box b, int value) {
        if (b == null) {
            fail(what + ": null");
        } else if (b.value != value || !b.intact()) {
            fail(what + ": value " + b.value + ", data " + (b.data == null ? "null" : b.data.length)
                 + " elements, expected " + value);
        }
    }

    /** Garbage and a full collection on as many nodes as threads: replicas die everywhere. */
    static void collectEverywhere(int rounds) throws InterruptedException {
        for (int r = 0; r < rounds; r++) {
            Thread[] gcs = new Thread[2];
            for (int i = 0; i < gcs.length; i++) {
                gcs[i] = new Thread(() -> {
                    Churn.garbage(20_000);
                    System.gc();
                }, "gc-" + r + "-" + i);
            }
            Threads.startAll(gcs);
            Threads.joinAll(gcs);
            System.gc();
            Thread.sleep(300);  // the reclaim threads release; the server collects
        }
    }

    /**
     * Two threads on two nodes pass boxes each way, each through its own slot: a sender drops
     * its box once the slot names it, and the receiver's copy comes from the slot's bytes.
     */
    static void handOffs() throws InterruptedException {
        final int n = 1000;
        @SuppressWarnings("unchecked")
        AtomicReference<Box>[] slots = new AtomicReference[] {new AtomicReference<Box>(),
                                                              new AtomicReference<Box>()};
        Thread[] sides = new Thread[2];
        for (int s = 0; s < 2; s++) {
            final int side = s;
            sides[s] = new Thread(() -> {
                AtomicReference<Box> out = slots[side], in = slots[1 - side];
                int sent = 0, received = 0;
                while (sent < n || received < n) {
                    if (sent < n && out.get() == null) {
                        out.set(new Box(side * n + sent));  // the slot names it; nothing else
                        sent++;
                    }
                    Box got = in.getAndSet(null);
                    if (got != null) {
                        expectIntact("a box handed across", got, (1 - side) * n + received);
                        received++;
                        if (received % 250 == 0) {
                            Churn.garbage(5000);
                            System.gc();
                        }
                    } else {
                        Thread.yield();
                    }
                }
            }, "hand-off-" + s);
        }
        Threads.startAll(sides);
        Threads.joinAll(120, sides);
    }

    public static void main(String[] args) throws Exception {
        Checks c = new Checks("SharedObjectsFreedWhileRunning");

        handOffs();

        // Held only by a parked thread's stack on another node.
        CountDownLatch parked = new CountDownLatch(1);
        AtomicReference<Box> give = new AtomicReference<>(new Box(7));
        Thread sleeper = new Thread(() -> {
            Box mine = give.getAndSet(null);
            parked.countDown();
            while (!released) {
                LockSupport.parkNanos(20_000_000L);
            }
            expectIntact("a box held only by a parked thread", mine, 7);
        }, "parked");
        sleeper.start();
        parked.await();

        // Held only by a monitor's waiter.
        CountDownLatch waiting = new CountDownLatch(1);
        AtomicReference<Box> lockBox = new AtomicReference<>(new Box(11));
        Thread waiter = new Thread(() -> {
            Box mine = lockBox.getAndSet(null);
            synchronized (mine) {
                waiting.countDown();
                while (!released) {
                    try {
                        mine.wait(20);
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }
            }
            expectIntact("a box held only by its monitor's waiter", mine, 11);
        }, "waiter");
        waiter.start();
        waiting.await();

        // Only a static names a ring of boxes (a cycle); another ring nothing names.
        Box first = new Box(100);
        Box last = first;
        for (int i = 101; i < 120; i++) {
            last.next = new Box(i);
            last = last.next;
        }
        last.next = first;
        viaStatic = first;
        Box lost = new Box(200);
        lost.next = new Box(201);
        lost.next.next = lost;
        AtomicReference<Box> lostRing = new AtomicReference<>(lost);
        lost = null;
        Thread touch = new Thread(() -> {
            expectIntact("a ring, before", viaStatic, 100);
            expectIntact("a ring nothing names, before", lostRing.getAndSet(null), 200);
        }, "touch");
        touch.start();
        touch.join();
        first = last = null;

        // Weakly here, strongly on a server until told.
        List<Box> strong = new ArrayList<>();
        for (int i = 300; i < 340; i++) {
            strong.add(new Box(i));
        }
        AtomicReference<List<Box>> handed = new AtomicReference<>(strong);
        CountDownLatch holding = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            List<Box> kept = handed.getAndSet(null);
            holding.countDown();
            while (!released) {
                LockSupport.parkNanos(20_000_000L);
            }
            for (int i = 0; i < kept.size(); i++) {
                expectIntact("a box weakly referenced elsewhere", kept.get(i), 300 + i);
            }
        }, "holder");
        holder.start();
        holding.await();
        Map<Box, Integer> weak = new WeakHashMap<>();
        for (Box b : strong) {
            weak.put(b, b.value);
        }
        strong = null;

        // Finalizers that resurrect their objects where they die.
        AtomicReference<Phoenix[]> phoenixes = new AtomicReference<>();
        Thread maker = new Thread(() -> {
            Phoenix[] ps = new Phoenix[50];
            for (int i = 0; i < ps.length; i++) {
                ps[i] = new Phoenix(500 + i);
            }
            phoenixes.set(ps);
        }, "maker");
        maker.start();
        maker.join();
        Phoenix[] ps = phoenixes.getAndSet(null);
        for (Phoenix p : ps) {
            expectIntact("a phoenix, before", p, p.value);
        }
        ps = null;

        collectEverywhere(6);

        for (Map.Entry<Box, Integer> e : new ArrayList<>(weak.entrySet())) {
            expectIntact("a weak map's key", e.getKey(), e.getValue());
        }
        int risen = 0;
        for (Phoenix p : Phoenix.risen) {
            expectIntact("a phoenix risen here", p, p.value);
            risen++;
        }
        Thread walker = new Thread(() -> {
            Box b = viaStatic;
            for (int i = 0; i < 20; i++) {
                expectIntact("the ring a static names", b, 100 + i);
                b = b.next;
            }
            if (b != viaStatic) {
                fail("the ring is not a ring");
            }
        }, "walker");
        walker.start();
        walker.join();
        released = true;
        Threads.joinAll(sleeper, waiter, holder);
        collectEverywhere(2);
        for (Map.Entry<Box, Integer> e : new ArrayList<>(weak.entrySet())) {
            expectIntact("a weak map's key, after its holder let go", e.getKey(), e.getValue());
        }

        synchronized (SharedObjectsFreedWhileRunning.class) {
            for (String f : failures) {
                c.fail(f);
            }
        }
        System.out.println("phoenixes risen on the launcher: " + risen + "; weak keys left: " + weak.size());
        c.done();
    }
}
