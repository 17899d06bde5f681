/*
 * @test
 * @summary Weak and soft references shared between nodes: get() on a thread server returns the
 *          referent main holds, even after that node's GC ran while the referent was reachable
 *          there only through the reference; clear() and enqueue() on one node are what
 *          get(), refersTo() and ReferenceQueue.poll() see on another; a WeakHashMap and an
 *          ArrayBlockingQueue whose iterators are in use on several nodes (its list of
 *          iterators is a list of weak references) work across nodes; and a phantom reference,
 *          which stays unshareable, fails with an error that names its class and the reason.
 * @library /lib
 * @run main/othervm SharedWeakReferences
 */
import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ArrayBlockingQueue;

public class SharedWeakReferences {
    static final Checks checks = new Checks("SharedWeakReferences");

    static final class Payload {
        final int id;

        Payload(int id) {
            this.id = id;
        }
    }

    static final class Holder {
        Payload strong;
        WeakReference<Payload> weak;
        SoftReference<Payload> soft;
        WeakReference<Payload> toClear;
        WeakReference<Payload> toEnqueue;
        ReferenceQueue<Payload> queue;
        Object phantomHolder;
    }

    static final class PhantomHolder {
        final PhantomReference<Payload> phantom;

        PhantomHolder(PhantomReference<Payload> phantom) {
            this.phantom = phantom;
        }
    }

    static int idOf(Reference<Payload> ref) {
        Payload p = ref.get();
        return p == null ? -1000 : p.id;
    }

    /** Runs body in a thread (on a thread server); returns what it threw, or null. */
    static Throwable runElsewhere(String name, Runnable body) throws InterruptedException {
        Throwable[] failure = new Throwable[1];
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                synchronized (failure) {
                    failure[0] = e;
                }
            }
        }, name);
        Threads.startAll(t);
        Threads.joinAll(t);
        synchronized (failure) {
            return failure[0];
        }
    }

    static void expectNone(String what, Throwable t) {
        if (t != null) {
            checks.fail(what + " threw " + t);
            t.printStackTrace();
        }
    }

    public static void main(String[] args) throws Exception {
        Holder h = new Holder();
        Payload kept = new Payload(7);
        Payload keptSoft = new Payload(8);
        h.weak = new WeakReference<>(kept);
        h.soft = new SoftReference<>(keptSoft);
        Payload toClear = new Payload(9);
        h.toClear = new WeakReference<>(toClear);
        Payload toEnqueue = new Payload(10);
        h.queue = new ReferenceQueue<>();
        h.toEnqueue = new WeakReference<>(toEnqueue, h.queue);

        // The referents are strongly reachable from main the whole time, so java never
        // clears these references. On the thread server their replicas are reachable only
        // through the references until the strong path is read: its GC must not clear them.
        int[] seen = new int[4];
        boolean[] same = new boolean[2];
        expectNone("the reader", runElsewhere("reader", () -> {
            WeakReference<Payload> weak = h.weak;
            SoftReference<Payload> soft = h.soft;
            // Brings both references and their referents here; then nothing on this node
            // but the references leads to the referents.
            int before = idOf(weak) + idOf(soft);
            for (int i = 0; i < 3; i++) {
                Churn.garbage(200_000);
                System.gc();
            }
            Payload w = weak.get();
            Payload s = soft.get();
            seen[0] = w == null ? -1 : w.id + before - 15;
            seen[1] = s == null ? -1 : s.id;
            seen[2] = weak.refersTo(null) ? 1 : 0;
            h.strong = new Payload(11);
            same[0] = w != null && h.weak.get() == w;
            same[1] = s != null && h.soft.get() == s;
            // Written here, read on main.
            h.toClear.clear();
            seen[3] = h.toEnqueue.enqueue() ? 1 : 0;
        }));
        checks.equal("the weak referent read on the thread server", seen[0], 7);
        checks.equal("the soft referent read on the thread server", seen[1], 8);
        checks.equal("refersTo(null) on the thread server", seen[2], 0);
        checks.check(same[0] && same[1], "get() gives the same object twice on the thread server");
        checks.check(h.weak.get() == kept, "main's weak referent is still its own object");
        checks.check(h.weak.refersTo(kept), "main's weak reference refers to its object");
        checks.check(h.soft.get() == keptSoft, "main's soft referent is still its own object");
        checks.check(h.strong != null && h.strong.id == 11, "the payload made on the thread server");
        checks.check(h.toClear.get() == null && h.toClear.refersTo(null),
                "a reference cleared on the thread server reads null on main");
        checks.equal("enqueue() on the thread server", seen[3], 1);
        Reference<? extends Payload> polled = h.queue.poll();
        checks.check(polled == h.toEnqueue, "main's poll() gives the reference enqueued elsewhere: " + polled);
        checks.check(h.toEnqueue.get() == null, "an enqueued reference reads null on main");
        checks.check(h.queue.poll() == null, "the queue then is empty");

        // A WeakHashMap filled on two nodes, its keys held strongly in a shared list.
        Map<Payload, Integer> map = new WeakHashMap<>();
        List<Payload> keys = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            Payload p = new Payload(100 + i);
            keys.add(p);
            map.put(p, i);
        }
        int[] remoteSum = new int[1];
        expectNone("the map's user", runElsewhere("map user", () -> {
            System.gc();
            int sum = 0;
            for (Payload p : keys) {
                Integer v = map.get(p);
                sum += v == null ? -1000 : v;
            }
            remoteSum[0] = sum;
            for (int i = 0; i < 50; i++) {
                Payload p = new Payload(200 + i);
                synchronized (keys) {
                    keys.add(p);
                }
                synchronized (map) {
                    map.put(p, 50 + i);
                }
            }
        }));
        checks.equal("the sum the thread server read from the WeakHashMap", remoteSum[0], 49 * 50 / 2);
        checks.equal("the WeakHashMap's size on main", map.size(), 100);
        int sum = 0;
        for (Payload p : keys) {
            Integer v = map.get(p);
            sum += v == null ? -1000 : v;
        }
        checks.equal("the sum of the 100 values main reads", sum, 99 * 100 / 2);

        // An ArrayBlockingQueue iterated on two nodes while elements leave it: its iterators
        // are registered in a list of weak references that both nodes sweep.
        ArrayBlockingQueue<Integer> q = new ArrayBlockingQueue<>(64);
        for (int i = 0; i < 64; i++) {
            q.add(i);
        }
        Iterator<Integer> mainIt = q.iterator();
        int first = mainIt.next();
        long[] remote = new long[2];
        expectNone("the queue's user", runElsewhere("queue user", () -> {
            Iterator<Integer> it = q.iterator();
            long s = 0;
            int n = 0;
            while (it.hasNext()) {
                s += it.next();
                n++;
                if (n % 8 == 0) {
                    q.poll();  // elements leave while both nodes' iterators are live
                    q.iterator();
                }
            }
            remote[0] = n;
            remote[1] = s;
        }));
        checks.check(remote[0] >= 56 && remote[0] <= 64, "the thread server's iterator saw "
                + remote[0] + " elements (64 less those polled ahead of it)");
        int mainCount = 1;
        int last = first;
        boolean ascending = true;
        while (mainIt.hasNext()) {
            int v = mainIt.next();
            ascending &= v > last;
            last = v;
            mainCount++;
        }
        checks.check(ascending, "main's iterator gives the elements in order");
        checks.equal("the last element main's iterator gives", last, 63);
        checks.equal("the queue's size after the polls", q.size(), 64 - remote[0] / 8);

        // A phantom reference cannot be shared: reading one on another node says why.
        h.phantomHolder = new PhantomHolder(new PhantomReference<>(kept, new ReferenceQueue<>()));
        String[] message = new String[1];
        Throwable t = runElsewhere("phantom reader", () -> {
            try {
                PhantomReference<Payload> p = ((PhantomHolder) h.phantomHolder).phantom;
                message[0] = "none: refersTo(null) gave " + p.refersTo(null);
            } catch (IllegalStateException expected) {
                message[0] = expected.getMessage();
            }
        });
        expectNone("the phantom reader", t);
        checks.check(message[0] != null && message[0].contains("java.lang.ref.PhantomReference")
                && message[0].contains("phantom reference"),
                "reading a phantom reference elsewhere fails naming it and why: " + message[0]);
        checks.done();
    }
}
