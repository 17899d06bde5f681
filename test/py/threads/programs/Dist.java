// Distributed-thread scenarios, one per argument (test/py/threads runs each
// under djava on a local cluster of two thread servers). Every scenario
// checks its own result and prints it; threads print where they ran.
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.TreeSet;

public class Dist {
    static long pid() { return ProcessHandle.current().pid(); }

    // ---- where threads run -------------------------------------------------
    static class Square extends Thread {
        final long[] out; final int k;
        Square(long[] out, int k) { this.out = out; this.k = k; }
        @Override public void run() {
            out[k] = (long) k * k;
            out[4 + k] = pid();
        }
    }

    static void placement() throws Exception {
        long[] out = new long[8];
        Square[] ts = new Square[4];
        for (int i = 0; i < 4; i++) { ts[i] = new Square(out, i); ts[i].start(); }
        for (Square t : ts) t.join();
        TreeSet<Long> pids = new TreeSet<>();
        for (int i = 4; i < 8; i++) pids.add(out[i]);
        System.out.println("squares " + out[0] + "," + out[1] + "," + out[2] + "," + out[3]);
        System.out.println("launcher " + pid() + " workers " + pids);
    }

    // ---- statics ------------------------------------------------------------
    static int counter;
    static final int[] slots = new int[4];
    static final String stamp = "stamp-" + System.nanoTime();

    static synchronized void bump() { counter++; }

    static class Bumper extends Thread {
        final int k;
        Bumper(int k) { this.k = k; }
        @Override public void run() {
            for (int i = 0; i < 500; i++) bump();
            slots[k] = k + 10;
            System.out.println("bumper " + k + " saw " + stamp);
        }
    }

    static void statics() throws Exception {
        System.out.println("main saw " + stamp);
        Bumper[] ts = new Bumper[4];
        for (int i = 0; i < 4; i++) { ts[i] = new Bumper(i); ts[i].start(); }
        for (Bumper t : ts) t.join();
        System.out.println("counter " + counter + " slots " + Arrays.toString(slots));
    }

    // ---- a shared counter under synchronized -----------------------------
    static class Counter { long n; }

    static class Adder extends Thread {
        final Counter c;
        Adder(Counter c) { this.c = c; }
        @Override public void run() {
            for (int i = 0; i < 300; i++) {
                synchronized (c) { c.n++; }
            }
        }
    }

    static void counter() throws Exception {
        Counter c = new Counter();
        Adder[] ts = new Adder[4];
        for (int i = 0; i < 4; i++) { ts[i] = new Adder(c); ts[i].start(); }
        for (Adder t : ts) t.join();
        synchronized (c) { System.out.println("total " + c.n); }
    }

    // ---- a thread started while the starter holds its thread group ----------
    // The server fetches the thread from this node, whose shared-object
    // cache then calls back into this VM for the first time; its thread
    // must not need the group this thread holds (ThreadGroup.enumerate and
    // other group methods hold it while they read threads' fields).
    static void groupLocked() throws Exception {
        ThreadGroup group = Thread.currentThread().getThreadGroup();
        int[] box = new int[1];
        Thread t = new Thread(() -> { box[0] = 42; });
        synchronized (group) {
            // Until the thread has run: its server fetches it meanwhile. It
            // cannot end before the group is free (Thread.exit takes the
            // group's monitor, on java too), so the join comes after.
            t.start();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (box[0] != 42 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        }
        t.join(60_000);
        System.out.println("group-locked start " + (t.isAlive() ? "still running" : "ended")
                           + ", box " + box[0]);
    }

    // ---- threads whose starter keeps no reference to them -------------------
    // A thread on a server starts threads it does not keep (as
    // CompletableFuture's per-task executor does) while GCs run; the manager
    // places some back on the same server, which must find each Thread
    // object again although GC took the one it published.
    static void unreferencedStarts() throws Exception {
        final int n = 120;
        java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(n);
        Thread starter = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                new Thread(ran::countDown).start();
                if (i % 8 == 0) {
                    System.gc();
                }
            }
        });
        starter.start();
        starter.join();
        boolean all = ran.await(90, java.util.concurrent.TimeUnit.SECONDS);
        System.out.println("unreferenced starts: " + (all ? "all ran" : ran.getCount() + " never ran"));
    }

    // ---- producer / consumer with wait and notifyAll --------------------------
    static class Buffer {
        final ArrayDeque<Integer> items = new ArrayDeque<>();
        synchronized void put(int v) throws InterruptedException {
            while (items.size() >= 3) wait();
            items.add(v);
            notifyAll();
        }
        synchronized int take() throws InterruptedException {
            while (items.isEmpty()) wait();
            int v = items.poll();
            notifyAll();
            return v;
        }
    }

    static class Producer extends Thread {
        final Buffer b; final int from;
        Producer(Buffer b, int from) { this.b = b; this.from = from; }
        @Override public void run() {
            try { for (int i = 0; i < 50; i++) b.put(from + i); } catch (InterruptedException e) { throw new RuntimeException(e); }
        }
    }

    static class Consumer extends Thread {
        final Buffer b; final long[] sum; final int k;
        Consumer(Buffer b, long[] sum, int k) { this.b = b; this.sum = sum; this.k = k; }
        @Override public void run() {
            try { for (int i = 0; i < 50; i++) sum[k] += b.take(); } catch (InterruptedException e) { throw new RuntimeException(e); }
        }
    }

    static void buffer() throws Exception {
        Buffer b = new Buffer();
        long[] sum = new long[2];
        Thread[] ts = { new Producer(b, 0), new Producer(b, 1000), new Consumer(b, sum, 0), new Consumer(b, sum, 1) };
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        long expect = 0;
        for (int i = 0; i < 50; i++) expect += i + 1000 + i;
        System.out.println("consumed " + (sum[0] + sum[1]) + " expected " + expect);
    }

    // ---- lifecycle ---------------------------------------------------------
    static class Boom extends Thread {
        Boom() { super("boomer"); }
        @Override public void run() { throw new IllegalStateException("boom on a thread server"); }
    }

    static void uncaught() throws Exception {
        Boom t = new Boom();
        t.start();
        t.join();
        System.out.println("after boom alive=" + t.isAlive());
    }

    static class Exiter extends Thread {
        @Override public void run() {
            System.out.println("exiting with 7");
            System.exit(7);
        }
    }

    static void exit() throws Exception {
        Exiter t = new Exiter();
        t.start();
        t.join();  // as in java, the exiting thread never ends before the program
        System.out.println("main after join: the exiting thread ended first");
        Thread.sleep(30_000);
        System.out.println("still here: the exit did not reach the launcher");
    }

    // main waits on a shared monitor nobody notifies; a remote thread
    // exits the program once main is surely waiting.
    static void exitWhileWaiting() throws Exception {
        Object never = new Object();
        Thread t = new Thread(() -> {
            synchronized (never) { }  // the lock is shared: this ran remotely
            try { Thread.sleep(1_000); } catch (InterruptedException e) { }
            System.out.println("exiting with 9");
            System.exit(9);
        });
        t.start();
        synchronized (never) {
            never.wait();
        }
        System.out.println("still here: the exit did not reach the launcher");
    }

    // ---- JDK values with node-local identity travel by name --------------------
    static class Holder {
        Object unit, yes, small, empty, big1, big2;
        Thread.State state;
    }

    static void named() throws Exception {
        Holder h = new Holder();
        h.unit = java.util.concurrent.TimeUnit.SECONDS;
        h.yes = Boolean.TRUE;
        h.small = Integer.valueOf(42);
        h.empty = java.util.Collections.emptyList();
        Integer big = 100_000;
        h.big1 = big;
        h.big2 = big;
        h.state = Thread.State.RUNNABLE;
        long launcher = pid();
        String[] seen = new String[1];
        Thread t = new Thread(() -> {
            seen[0] = "remote " + (pid() != launcher)
                    + " unit " + (h.unit == java.util.concurrent.TimeUnit.SECONDS)
                    + " yes " + (h.yes == Boolean.TRUE)
                    + " small " + (h.small == Integer.valueOf(42))
                    + " empty " + (h.empty == java.util.Collections.emptyList())
                    + " big " + (h.big1 == h.big2) + " " + h.big1
                    + " state " + (h.state == Thread.State.RUNNABLE);
            h.unit = java.util.concurrent.TimeUnit.MINUTES;
            h.small = Integer.valueOf(-7);
        });
        t.start();
        t.join();
        System.out.println(seen[0]);
        System.out.println("back " + (h.unit == java.util.concurrent.TimeUnit.MINUTES) + " "
                + (h.small == Integer.valueOf(-7)));
    }

    static class Talker extends Thread {
        final int k;
        Talker(int k) { this.k = k; }
        @Override public void run() {
            for (int i = 0; i < 20; i++) System.out.println("talker " + k + " line " + i);
            System.err.println("talker " + k + " done");
        }
    }

    static void console() throws Exception {
        Talker[] ts = new Talker[3];
        for (int i = 0; i < 3; i++) { ts[i] = new Talker(i); ts[i].start(); }
        for (Talker t : ts) t.join();
        System.out.println("console done");
    }

    static class Sleeper extends Thread {
        @Override public void run() {
            try { Thread.sleep(60_000); } catch (InterruptedException e) { }
        }
    }

    static void alive() throws Exception {
        Sleeper t = new Sleeper();
        System.out.println("before start alive=" + t.isAlive());
        t.setDaemon(true);
        t.start();
        Thread.sleep(500);
        System.out.println("started alive=" + t.isAlive());
        // main ends; the daemon does not hold the program up
    }

    static void linger() throws Exception {
        Sleeper t = new Sleeper();
        t.start();
        System.out.println("lingering");
        t.join();
        System.out.println("the sleeper ended");
    }

    // ---- java.util.concurrent across nodes (park/unpark) ----------------------
    static class Counted extends Thread {
        final java.util.concurrent.CountDownLatch start, done;
        final java.util.concurrent.atomic.AtomicLong sum;
        final int k;
        Counted(java.util.concurrent.CountDownLatch start, java.util.concurrent.CountDownLatch done,
                java.util.concurrent.atomic.AtomicLong sum, int k) {
            this.start = start; this.done = done; this.sum = sum; this.k = k;
        }
        @Override public void run() {
            try { start.await(); } catch (InterruptedException e) { throw new RuntimeException(e); }
            for (int i = 0; i < 100; i++) sum.addAndGet(k);
            done.countDown();
        }
    }

    static void latch() throws Exception {
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(4);
        java.util.concurrent.atomic.AtomicLong sum = new java.util.concurrent.atomic.AtomicLong();
        for (int i = 1; i <= 4; i++) new Counted(start, done, sum, i).start();
        Thread.sleep(300);
        start.countDown();
        done.await();
        System.out.println("latched sum " + sum.get());
    }

    // ---- a queue between two nodes: its final fields read where it is not -
    // ArrayBlockingQueue.put and take read `this.lock` before they take the
    // lock, while the queue's object is with the other node (the last
    // holder wrote its count and indices): a kept final field is read from
    // the replica (DsoInterpreter::keeps_finals_of), and the queue's object
    // moves with the lock instead of on a miss of its own.
    // With "lbq", a LinkedBlockingQueue: each message is a new node and a
    // new Integer that the producer's node made, which travel along with
    // the chunk that names them when the consumer's node asks for it.
    static void queue(String kind) throws Exception {
        int n = 400;
        java.util.concurrent.BlockingQueue<Integer> q = kind.equals("lbq")
            ? new java.util.concurrent.LinkedBlockingQueue<>()
            : new java.util.concurrent.ArrayBlockingQueue<>(8);
        java.util.concurrent.atomic.AtomicLong sum = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicReference<String> wrong =
            new java.util.concurrent.atomic.AtomicReference<>();
        Thread producer = new Thread(() -> {
            try {
                for (int i = 0; i < n; i++) q.put(i);
            } catch (InterruptedException e) {
                wrong.set("producer interrupted");
            }
        });
        Thread consumer = new Thread(() -> {
            try {
                for (int i = 0; i < n; i++) {
                    int v = q.take();
                    if (v != i) wrong.compareAndSet(null, "took " + v + " where " + i + " was due");
                    sum.addAndGet(v);
                }
            } catch (InterruptedException e) {
                wrong.set("consumer interrupted");
            }
        });
        producer.start();
        consumer.start();
        producer.join();
        consumer.join();
        System.out.println("queue: " + (wrong.get() == null ? "in order" : wrong.get()) +
                           ", sum " + sum.get() + ", left " + q.size());
    }

    // ---- rows of a matrix fetched ahead ------------------------------------
    // main makes a double[256][64]; a reader on one thread server sums every
    // row in order, then a writer on the other doubles every row in order
    // (its first access to each row a write), and main checks them. Each row
    // arrives at a thread server as a replica that never had bytes there,
    // named by an element of the matrix: a walk over the rows asks for them
    // several at a time (docs/HEAP.md, "Rows fetched ahead").
    static void rows() throws Exception {
        int n = 256, m = 64;
        double[][] rows = new double[n][m];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) rows[i][j] = i * m + j;
        }
        double[] sum = new double[1];
        Thread reader = new Thread(() -> {
            double s = 0;
            for (double[] row : rows) {
                for (double v : row) s += v;
            }
            sum[0] = s;
        });
        reader.start();
        reader.join();
        Thread writer = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                double[] row = rows[i];
                for (int j = 0; j < m; j++) row[j] = 2 * (i * m + j);
            }
        });
        writer.start();
        writer.join();
        int wrong = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
                if (rows[i][j] != 2 * (i * m + j)) wrong++;
            }
        }
        double expected = (double) n * m * (n * m - 1) / 2;
        System.out.println("rows: " + (sum[0] == expected && wrong == 0 ? "right"
                           : "sum " + sum[0] + " where " + expected + " was due, " + wrong
                             + " elements wrong"));
    }

    // Two threads, one a thread server, sweep the bands of a grid main made
    // in place, red and black points in turn with a barrier between (SOR's
    // shape: each reads its neighbour's edge row, which the neighbour
    // writes). Compared with the same sweeps in main.
    static void grid() throws Exception {
        int n = 256, m = 64, iterations = 2;
        double[][] g = gridOf(n, m), expected = gridOf(n, m);
        java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(2);
        Thread[] bands = new Thread[2];
        for (int t = 0; t < 2; t++) {
            int from = 1 + (n - 2) * t / 2, to = 1 + (n - 2) * (t + 1) / 2;
            bands[t] = new Thread(() -> {
                try {
                    // Both bands begin together. The second thread server
                    // may start its thread tens of ms after the first (its
                    // first use of the program's classes), and a band that
                    // starts its first row while its neighbour is at its last
                    // makes the two edge rows change node at every point of
                    // the row (red and black points share a row: docs/
                    // BENCHMARKS.md, "SOR's critical path on 1 and on 2
                    // servers"), which this test does not measure.
                    barrier.await();
                    for (int it = 0; it < iterations; it++) {
                        sweep(g, from, to, 0);
                        barrier.await();
                        sweep(g, from, to, 1);
                        barrier.await();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            bands[t].start();
        }
        for (Thread b : bands) b.join();
        for (int it = 0; it < iterations; it++) {
            sweep(expected, 1, n - 1, 0);
            sweep(expected, 1, n - 1, 1);
        }
        int wrong = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
                if (g[i][j] != expected[i][j]) wrong++;
            }
        }
        System.out.println("grid: " + (wrong == 0 ? "right" : wrong + " points wrong"));
    }

    // A thread on a thread server sums a large array main made (1,024 blocks
    // of 8 KiB), then doubles every element.
    static void scan() throws Exception {
        double[] a = new double[1 << 20];
        for (int i = 0; i < a.length; i++) a[i] = i % 1000;
        double[] sum = new double[1];
        Thread t = new Thread(() -> {
            double s = 0;
            for (double v : a) s += v;
            sum[0] = s;
            for (int i = 0; i < a.length; i++) a[i] *= 2;
        });
        t.start();
        t.join();
        double expected = 0;
        int wrong = 0;
        for (int i = 0; i < a.length; i++) {
            expected += i % 1000;
            if (a[i] != 2 * (i % 1000)) wrong++;
        }
        System.out.println("scan: " + (sum[0] == expected && wrong == 0 ? "right"
                           : "sum " + sum[0] + " where " + expected + " was due, " + wrong
                             + " elements wrong"));
    }

    // Rounds of threads started from main and joined: each ends on a thread
    // server, and main's group lists only main after each round.
    static void starts() throws Exception {
        ThreadGroup group = Thread.currentThread().getThreadGroup();
        int wrong = 0;
        long[] sum = new long[4];
        for (int round = 0; round < 5; round++) {
            Thread[] ts = new Thread[4];
            for (int t = 0; t < ts.length; t++) {
                final int k = t;
                ts[t] = new Thread(() -> { sum[k] += k; });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
                if (t.getThreadGroup() != null) wrong++;
            }
            Thread[] listed = new Thread[8];
            int n = group.enumerate(listed, false);
            if (n != 1 || listed[0] != Thread.currentThread()) wrong++;
        }
        System.out.println("starts: " + (wrong == 0 && sum[3] == 15 ? "right" : wrong + " wrong"));
    }

    static double[][] gridOf(int n, int m) {
        double[][] g = new double[n][m];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) g[i][j] = (i * 31 + j * 17) % 101;
        }
        return g;
    }

    static void sweep(double[][] g, int from, int to, int colour) {
        for (int i = from; i < to; i++) {
            double[] row = g[i], up = g[i - 1], down = g[i + 1];
            for (int j = 1 + (i + colour) % 2; j < row.length - 1; j += 2) {
                row[j] += 1.25 * ((up[j] + down[j] + row[j - 1] + row[j + 1]) / 4 - row[j]);
            }
        }
    }

    // ---- LockSupport.park / unpark across nodes ----------------------------
    // Each round main unparks the parked thread (on a thread server), which
    // unparks main in turn (on the launcher): every wake-up is another node's.
    static class Parked extends Thread {
        final Thread main; final int rounds;
        volatile int go, done;
        Parked(Thread main, int rounds) { this.main = main; this.rounds = rounds; }
        @Override public void run() {
            for (int r = 1; r <= rounds; r++) {
                while (go < r) java.util.concurrent.locks.LockSupport.park(this);
                done = r;
                java.util.concurrent.locks.LockSupport.unpark(main);
            }
        }
    }

    static void unpark() throws Exception {
        int rounds = 20;
        Parked p = new Parked(Thread.currentThread(), rounds);
        p.start();
        for (int r = 1; r <= rounds; r++) {
            p.go = r;
            java.util.concurrent.locks.LockSupport.unpark(p);
            while (p.done < r) java.util.concurrent.locks.LockSupport.park(p);
        }
        p.join();
        System.out.println("unparked " + rounds + " rounds");
        // Thread.interrupt wakes a sleeper on another node the same way.
        String[] seen = new String[1];
        Thread sleeper = new Thread(() -> {
            try {
                Thread.sleep(60_000);
                seen[0] = "slept through";
            } catch (InterruptedException e) {
                seen[0] = "interrupted";
            }
        });
        sleeper.start();
        Thread.sleep(500);
        sleeper.interrupt();
        sleeper.join(30_000);
        System.out.println("sleeper " + seen[0]);
    }

    // ---- interrupting a thread that waits on another node -----------------
    static class Waiter extends Thread {
        final Object lock; final String[] seen;
        Waiter(Object lock, String[] seen) { this.lock = lock; this.seen = seen; }
        @Override public void run() {
            synchronized (lock) {
                try {
                    lock.wait();
                    seen[0] = "notified";
                } catch (InterruptedException e) {
                    seen[0] = "interrupted";
                }
            }
        }
    }

    static void interrupt() throws Exception {
        Object lock = new Object();
        String[] seen = new String[1];
        Waiter w = new Waiter(lock, seen);
        w.start();
        Thread.sleep(1000);
        w.interrupt();
        w.join(20_000);
        System.out.println("waiter " + seen[0] + " alive=" + w.isAlive());
    }

    // Thread.sleep interrupted from another node, both ways: main interrupts
    // a sleeper on a server; a thread on a server interrupts sleeping main.
    static void interruptSleep() throws Exception {
        String[] seen = new String[1];
        long launcher = pid();
        Thread sleeper = new Thread(() -> {
            long start = System.nanoTime();
            try {
                Thread.sleep(60_000);
                seen[0] = "slept through";
            } catch (InterruptedException e) {
                seen[0] = "interrupted remote=" + (pid() != launcher) + " quick="
                        + ((System.nanoTime() - start) / 1_000_000 < 20_000)
                        + " cleared=" + !Thread.currentThread().isInterrupted();
            }
        });
        sleeper.start();
        Thread.sleep(1000);
        sleeper.interrupt();
        sleeper.join(30_000);
        System.out.println("sleeper " + seen[0] + " alive=" + sleeper.isAlive());

        Thread main = Thread.currentThread();
        Thread waker = new Thread(() -> {
            try { Thread.sleep(1000); } catch (InterruptedException e) { }
            main.interrupt();
        });
        waker.start();
        long start = System.nanoTime();
        try {
            Thread.sleep(60_000);
            System.out.println("main slept through");
        } catch (InterruptedException e) {
            System.out.println("main interrupted quick="
                    + ((System.nanoTime() - start) / 1_000_000 < 20_000));
        }
        waker.join();
    }

    // getState() of a thread that runs on another node: NEW, then alive
    // (RUNNABLE: the exact state is its own node's), TERMINATED after join.
    static void state() throws Exception {
        Object lock = new Object();
        Thread t = new Thread(() -> {
            synchronized (lock) { try { lock.wait(2000); } catch (InterruptedException e) { } }
        });
        String before = t.getState().toString();
        t.start();
        Thread.sleep(500);
        String during = t.getState() + " alive=" + t.isAlive();
        t.join();
        System.out.println("state " + before + ", " + during + ", " + t.getState() + " alive="
                + t.isAlive());
    }

    // System properties: a thread on a server sees the launcher's -D and
    // setProperty (made before it started), and its node's own JDK keys.
    static void properties() throws Exception {
        System.setProperty("dist.set.in.main", "yes");
        String launcherHome = System.getProperty("java.home");
        String[] seen = new String[1];
        Thread t = new Thread(() -> {
            System.setProperty("dist.set.remotely", "here only");
            seen[0] = "remote=" + (pid() != launcherPid) + " cmdline=" + System.getProperty("dist.cmdline")
                    + " main=" + System.getProperty("dist.set.in.main")
                    + " own=" + System.getProperty("dist.set.remotely")
                    + " javaHome=" + (System.getProperty("java.home") != null);
        });
        t.start();
        t.join();
        System.out.println("properties " + seen[0] + " back=" + System.getProperty("dist.set.remotely"));
    }
    static final long launcherPid = pid();

    // ---- a volatile flag spun on from another node ---------------------------
    static class Flag { volatile boolean up; volatile long seenAt; }

    static class Spinner extends Thread {
        final Flag f;
        Spinner(Flag f) { this.f = f; }
        @Override public void run() {
            long spins = 0;
            while (!f.up) spins++;
            f.seenAt = spins + 1;
        }
    }

    static void spin() throws Exception {
        Flag f = new Flag();
        Spinner s = new Spinner(f);
        s.start();
        Thread.sleep(500);
        f.up = true;
        s.join(20_000);
        System.out.println("spinner saw the flag " + (f.seenAt > 0) + " alive=" + s.isAlive());
    }

    // ---- a thread pool: its workers are shipped threads -----------------------
    static void pool() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        java.util.List<java.util.concurrent.Future<long[]>> futures = new java.util.ArrayList<>();
        for (int n = 0; n < 40; n++) {
            final long k = n;
            futures.add(pool.submit(() -> new long[] {k * k, pid()}));
        }
        long sum = 0;
        TreeSet<Long> workers = new TreeSet<>();
        for (java.util.concurrent.Future<long[]> f : futures) {
            long[] r = f.get(60, java.util.concurrent.TimeUnit.SECONDS);
            sum += r[0];
            workers.add(r[1]);
        }
        pool.shutdown();
        boolean terminated = pool.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS);
        System.out.println("pool sum " + sum + " terminated " + terminated + " launcher " + pid()
                + " workers " + workers);
    }

    // ---- joins of threads that end at all moments of the joiner's wait ------
    static class Napper extends Thread {
        final int ms;
        Napper(int ms) { this.ms = ms; }
        @Override public void run() {
            try { Thread.sleep(ms); } catch (InterruptedException e) { }
        }
    }

    static void joins() throws Exception {
        int joined = 0, total = 0;
        for (int round = 0; round < 24; round++) {
            Napper a = new Napper((round * 7) % 60), b = new Napper((round * 13) % 90);
            a.start();
            b.start();
            for (Napper t : new Napper[] {a, b}) {
                total++;
                t.join(20_000);  // bounded: a lost wake-up shows as a count, not a hang
                if (!t.isAlive()) joined++;
            }
        }
        System.out.println("joined " + joined + " of " + total);
    }

    // ---- threads left on the servers when the launcher dies -------------------
    static void stranded() throws Exception {
        Object lock = new Object();
        Sleeper sleeper = new Sleeper();
        Thread waiter = new Thread(() -> {
            synchronized (lock) {
                try { lock.wait(); } catch (InterruptedException e) { }
            }
        });
        sleeper.start();
        waiter.start();
        Thread.sleep(500);
        System.out.println("stranded");
        sleeper.join();
    }

    // ---- main waits for a lock a thread on a server holds -------------------
    // The holder keeps the lock until the file named by `release` exists, so
    // that the test can dump main's threads (jcmd) while main is parked on a
    // java.util.concurrent lock whose owner runs on another node.
    static volatile boolean held;

    static void lockedElsewhere(String release) throws Exception {
        java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        Thread holder = new Thread(() -> {
            lock.lock();
            try {
                held = true;
                while (!java.nio.file.Files.exists(java.nio.file.Path.of(release))) {
                    Thread.sleep(20);
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            } finally {
                lock.unlock();
            }
        }, "holder");
        holder.start();
        while (!held) Thread.onSpinWait();
        System.out.println("waiting for the lock, holder alive " + holder.isAlive());
        lock.lock();
        System.out.println("main has the lock");
        lock.unlock();
        holder.join();
        System.out.println("holder ended");
    }

    // ---- a thread whose class no thread server can load ---------------------
    static void neverRan(String classFile) throws Exception {
        byte[] bytes = java.nio.file.Files.readAllBytes(java.nio.file.Path.of(classFile));
        Class<?> c = java.lang.invoke.MethodHandles.lookup().defineClass(bytes);
        Thread t = (Thread) c.getDeclaredConstructor().newInstance();
        t.start();
        long start = System.nanoTime();
        t.join(60_000);
        System.out.println("joined alive=" + t.isAlive() + " state=" + t.getState() + " quick="
                + ((System.nanoTime() - start) / 1_000_000 < 30_000));
    }

    // The same, started by a thread on a thread server: the launcher never
    // saw the thread, yet the starter's join must end.
    static void neverRanNested(String classFile) throws Exception {
        byte[] bytes = java.nio.file.Files.readAllBytes(java.nio.file.Path.of(classFile));
        Thread outer = new Thread(() -> {
            try {
                Class<?> c = java.lang.invoke.MethodHandles.lookup().defineClass(bytes);
                Thread t = (Thread) c.getDeclaredConstructor().newInstance();
                t.start();  // to the least loaded server: the other one
                long start = System.nanoTime();
                t.join(60_000);
                System.out.println("joined alive=" + t.isAlive() + " state=" + t.getState()
                        + " quick=" + ((System.nanoTime() - start) / 1_000_000 < 30_000));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "outer");
        outer.start();
        outer.join();
    }

    // ---- the JDK's process-wide settings, set by a thread on a server -------
    static final class AllowAll extends java.security.Policy {
        @Override public boolean implies(java.security.ProtectionDomain d, java.security.Permission p) {
            return true;
        }
    }

    /** Allows everything but its own removal, which the server must do anyway. */
    @SuppressWarnings("removal")
    static final class KeepsItself extends SecurityManager {
        @Override public void checkPermission(java.security.Permission p) {
            if (p.getName().equals("setSecurityManager")) {
                throw new SecurityException("this security manager stays");
            }
        }
    }

    @SuppressWarnings("removal")
    static String settings(boolean install) throws Exception {
        if (install) {
            java.security.Policy.setPolicy(new AllowAll());
            try {
                System.setSecurityManager(new KeepsItself());
            } catch (SecurityException e) {
                // Another thread of this program installed it on this node.
                if (!(System.getSecurityManager() instanceof KeepsItself)) throw e;
            }
            Thread.setDefaultUncaughtExceptionHandler((t, e) -> { });
        }
        java.security.Policy policy = System.getSecurityManager() == null ? null : java.security.Policy.getPolicy();
        Thread.UncaughtExceptionHandler h = Thread.getDefaultUncaughtExceptionHandler();
        return "sm=" + (System.getSecurityManager() != null)
                + " programPolicy=" + (policy instanceof AllowAll)
                + " handler=" + (h != null);
    }

    /** Four threads at once (both servers), each setting or reporting the settings. */
    static void settings(String mode) throws Exception {
        boolean install = mode.equals("install");
        String[] seen = new String[4];
        java.util.concurrent.CountDownLatch all = new java.util.concurrent.CountDownLatch(4);
        Thread[] ts = new Thread[4];
        for (int i = 0; i < 4; i++) {
            int k = i;
            ts[i] = new Thread(() -> {
                all.countDown();
                try {
                    all.await();
                    seen[k] = pid() + " " + settings(install);
                } catch (Exception e) {
                    seen[k] = pid() + " " + e;
                }
            });
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        for (String line : seen) System.out.println("settings " + line);
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "settings": settings(args[1]); break;
            case "placement": placement(); break;
            case "statics": statics(); break;
            case "counter": counter(); break;
            case "group-locked": groupLocked(); break;
            case "unreferenced-starts": unreferencedStarts(); break;
            case "buffer": buffer(); break;
            case "uncaught": uncaught(); break;
            case "exit": exit(); break;
            case "named": named(); break;
            case "exit-while-waiting": exitWhileWaiting(); break;
            case "console": console(); break;
            case "alive": alive(); break;
            case "linger": linger(); break;
            case "latch": latch(); break;
            case "queue": queue(args.length > 1 ? args[1] : "abq"); break;
            case "rows": rows(); break;
            case "grid": grid(); break;
            case "scan": scan(); break;
            case "starts": starts(); break;
            case "unpark": unpark(); break;
            case "interrupt": interrupt(); break;
            case "state": state(); break;
            case "properties": properties(); break;
            case "interrupt-sleep": interruptSleep(); break;
            case "spin": spin(); break;
            case "pool": pool(); break;
            case "joins": joins(); break;
            case "stranded": stranded(); break;
            case "locked-elsewhere": lockedElsewhere(args[1]); break;
            case "never-ran": neverRan(args[1]); break;
            case "never-ran-nested": neverRanNested(args[1]); break;
            default: throw new IllegalArgumentException(args[0]);
        }
    }
}
