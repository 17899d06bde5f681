// Drives one node's side of the shared heap from stdin, one command a line,
// one answer a line (test/py/jvm/test_shared_heap.py runs two of these):
//   publish            makes a Box graph shared; "id N"
//   attach N           takes shared object N as the root; "attached CLASS"
//   show               the root's fields, as one line
//   write K            sets every kind of field from K; "wrote K"
//   incr N             root.i += 1, N times; "i V"
//   gc                 churns the young generation and collects; "gc"
//   share-thread       tries to share a Thread; the exception's message
//   locked-incr T N    T threads each do N times synchronized (root) { i++ };
//                      "i V" once all are done
//   await K            synchronized (root) { while (root.i < K) root.wait(); }
//   bump               synchronized (root) { root.i++; root.notifyAll(); }
//   timed-wait MS      synchronized (root) { root.wait(MS); }: "waited E" (ms)
//   interrupt-wait     a thread waits on root, this one interrupts it: what
//                      the waiter saw
//   holds              Thread.holdsLock(root) outside and inside synchronized
//   unowned-wait       root.wait() without the monitor
//   foreign-set        root.handle = a FileDescriptor of /dev/null (cannot be shared)
//   foreign-use        uses root.handle: "valid V same S" or "refused MSG"
// A failing command answers "error " and the exception.
import djava.runtime.Node;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Arrays;

public class HeapProbe {
    static java.io.FileDescriptor opened;  // foreign-set's, on its node
    static class Box {
        boolean z; byte b; char c; short s; int i; long j; float f; double d;
        String text; String interned; Box other; Class<?> type;
        int[] ints; long[] longs; double[] doubles; char[] chars; Object[] objs;
        Object handle;
    }

    static Box root;
    static Object sink;

    static Box fresh() {
        Box box = new Box();
        box.z = true; box.b = -7; box.c = 'q'; box.s = -300; box.i = 41;
        box.j = Long.MIN_VALUE + 3; box.f = 1.5f; box.d = Math.PI;
        box.text = new String("héllo wörld ☃");
        box.interned = "interned literal";
        box.other = new Box();
        box.other.i = 42;
        box.other.other = box;
        box.type = Box.class;
        box.ints = new int[] {1, 2, 3};
        box.longs = new long[] {Long.MAX_VALUE, -1};
        box.doubles = new double[] {Double.NaN, -0.0, 1e300};
        box.chars = "chars".toCharArray();
        box.objs = new Object[] {"s", box.other, null, new int[] {9}};
        return box;
    }

    static String compact(String s) {
        return s.replace(" ", "");
    }

    static String show(Box x) {
        return "z=" + x.z + " b=" + x.b + " c=" + x.c + " s=" + x.s + " i=" + x.i + " j=" + x.j
            + " f=" + x.f + " d=" + x.d + " text=" + x.text.replace(" ", "_")
            + " interned=" + (x.interned == "interned literal")
            + " other.i=" + x.other.i + " cycle=" + (x.other.other == x)
            + " type=" + x.type.getName() + " ints=" + compact(Arrays.toString(x.ints))
            + " longs=" + compact(Arrays.toString(x.longs))
            + " doubles=" + compact(Arrays.toString(x.doubles))
            + " chars=" + new String(x.chars) + " objs0=" + x.objs[0]
            + " objs1=" + (x.objs[1] == x.other) + " objs2=" + x.objs[2]
            + " objs3=" + ((int[]) x.objs[3])[0]
            + " hash=" + System.identityHashCode(x);
    }

    static String run(String[] w) {
        switch (w[0]) {
            case "publish":
                root = fresh();
                return "id " + Node.publish(root);
            case "attach":
                root = (Box) Node.attach(Long.parseLong(w[1]));
                return "attached " + root.getClass().getName();
            case "show":
                return show(root);
            case "write": {
                int k = Integer.parseInt(w[1]);
                root.i = k; root.j = ((long) k) << 33; root.d = k / 3.0; root.c = (char) ('a' + k % 26);
                root.text = "t" + k;
                root.ints[1] = k;
                root.longs[0] = -k;
                root.objs[0] = "o" + k;
                root.other.i = k + 1;
                root.type = (k % 2 == 1) ? String.class : int.class;
                Box extra = new Box();  // a new local object becomes reachable
                extra.i = k * 10;
                extra.other = root;
                root.objs[2] = extra;
                return "wrote " + k;
            }
            case "incr": {
                int n = Integer.parseInt(w[1]);
                for (int x = 0; x < n; x++) root.i += 1;
                return "i " + root.i;
            }
            case "extra": {
                Box extra = (Box) root.objs[2];
                return "extra " + extra.i + " " + (extra.other == root);
            }
            case "gc":
                for (int x = 0; x < 200_000; x++) sink = new long[16];
                System.gc();
                return "gc";
            case "share-thread":
                // A thread the JDK started for this node's own work.
                Thread system = null;
                for (Thread t : Thread.getAllStackTraces().keySet()) {
                    if (t.getThreadGroup() != null && t.getThreadGroup().getParent() == null) {
                        system = t;
                    }
                }
                try {
                    Node.publish(system);
                    return "shared a thread";
                } catch (IllegalArgumentException e) {
                    return "refused " + e.getMessage();
                }
            case "locked-incr": {
                int threads = Integer.parseInt(w[1]);
                int n = Integer.parseInt(w[2]);
                Box box = root;
                Thread[] ts = new Thread[threads];
                for (int t = 0; t < threads; t++) {
                    ts[t] = new Thread(() -> {
                        for (int x = 0; x < n; x++) {
                            synchronized (box) {
                                box.i++;
                            }
                        }
                    });
                    ts[t].start();
                }
                for (Thread t : ts) {
                    try { t.join(); } catch (InterruptedException e) { throw new RuntimeException(e); }
                }
                synchronized (box) {
                    return "i " + box.i;
                }
            }
            case "await": {
                int k = Integer.parseInt(w[1]);
                synchronized (root) {
                    while (root.i < k) {
                        try { root.wait(); } catch (InterruptedException e) { return "interrupted"; }
                    }
                    return "i " + root.i;
                }
            }
            case "bump":
                synchronized (root) {
                    root.i++;
                    root.notifyAll();
                    return "i " + root.i;
                }
            case "timed-wait": {
                long ms = Long.parseLong(w[1]);
                synchronized (root) {
                    long t0 = System.nanoTime();
                    try { root.wait(ms); } catch (InterruptedException e) { return "interrupted"; }
                    return "waited " + (System.nanoTime() - t0) / 1_000_000;
                }
            }
            case "interrupt-wait": {
                Box box = root;
                String[] seen = new String[1];
                Thread waiter = new Thread(() -> {
                    synchronized (box) {
                        try {
                            box.wait();
                            seen[0] = "notified";
                        } catch (InterruptedException e) {
                            seen[0] = "interrupted holds=" + Thread.holdsLock(box)
                                + " flag=" + Thread.currentThread().isInterrupted();
                        }
                    }
                });
                waiter.start();
                try {
                    Thread.sleep(300);
                    waiter.interrupt();
                    waiter.join(10_000);
                } catch (InterruptedException e) { throw new RuntimeException(e); }
                return "waiter " + seen[0];
            }
            case "holds": {
                boolean outside = Thread.holdsLock(root);
                synchronized (root) {
                    return "holds " + outside + " " + Thread.holdsLock(root);
                }
            }
            case "unowned-wait":
                try {
                    root.wait();
                    return "waited without the monitor";
                } catch (IllegalMonitorStateException e) {
                    return "refused " + e.getMessage();
                } catch (InterruptedException e) {
                    return "interrupted";
                }
            case "foreign-set":
                // not FileDescriptor.out: a JDK singleton travels by name
                try {
                    opened = new java.io.FileInputStream("/dev/null").getFD();
                    root.handle = opened;
                } catch (java.io.IOException e) {
                    return "error " + e;
                }
                return "set";
            case "foreign-use": {
                java.io.FileDescriptor fd = (java.io.FileDescriptor) root.handle;
                try {
                    return "valid " + fd.valid() + " same " + (fd == opened);
                } catch (IllegalStateException e) {
                    return "refused " + e.getMessage();
                }
            }
            default:
                return "unknown command " + w[0];
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String answer;
            try {
                answer = run(line.trim().split(" "));
            } catch (Throwable t) {
                answer = "error " + t;
            }
            System.out.println(answer);
            System.out.flush();
        }
    }
}
