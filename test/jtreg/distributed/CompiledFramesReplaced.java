/*
 * @test
 * @summary Compiled code's accesses of shared objects stay coherent while the VM
 *          replaces compiled frames: loops that run long inside synchronized on a
 *          shared object (on-stack replacement moves the held lock into compiled
 *          code), and writers whose compiled code class loading invalidates while
 *          they write fields another node writes too (a frame deoptimized in the
 *          middle of an access must neither lose the write nor leave the copy
 *          pinned, which would stall every later transfer of it). Whether a
 *          writer is inside an access when its code goes is up to timing; the
 *          counts must hold either way.
 * @run main/othervm CompiledFramesReplaced
 */
public class CompiledFramesReplaced {
    static final int THREADS = 4;
    static final int ROUNDS = 3;
    static final int INNER = 200_000;   // past C1's back-edge threshold: OSR
    static final int WRITES = 200_000;

    static class Counter {
        long value;
    }

    // Each writer increments its own field; they share one object, so
    // writers on different nodes take it from each other on every write.
    static class Fields {
        int a;
        int b;
        int c;
        int d;
    }

    // Until Twice is loaded no class overrides Step's methods, so compiled
    // code inlines them with a dependency on that (class hierarchy analysis).
    static class Step {
        int next(int v) {
            return v + 1;
        }
        int excess() {
            return 0;
        }
    }

    // Loaded on a node while its writers run: their compiled code, which
    // inlined Step's methods, is invalidated (deoptimized).
    static final class Twice extends Step {
        @Override
        int next(int v) {
            return v + 2;
        }
        @Override
        int excess() {
            return 1;
        }
    }

    static volatile Step step = new Step();

    // One writer's loop, compiled (OSR) while it runs. Each iteration reads
    // `step`: the first read of the Twice the main thread stores loads that
    // class on this node, in the read's slow path, and invalidates this code
    // (it inlined Step's methods) and the other writers' on
    // this node, which may be waiting in a write's slow path.
    static int write(Fields f, int which) {
        int sawTwice = 0;
        for (int i = 0; i < WRITES; i++) {
            Step s = step;
            switch (which) {
                case 0: f.a = s.next(f.a) - s.excess(); break;
                case 1: f.b = s.next(f.b) - s.excess(); break;
                case 2: f.c = s.next(f.c) - s.excess(); break;
                default: f.d = s.next(f.d) - s.excess(); break;
            }
            sawTwice += s.excess();
        }
        return sawTwice;
    }

    public static void main(String[] args) throws Exception {
        Counter counter = new Counter();
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            threads[t] = new Thread(() -> {
                for (int r = 0; r < ROUNDS; r++) {
                    synchronized (counter) {
                        for (int i = 0; i < INNER; i++) {
                            counter.value++;
                        }
                    }
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        long expected = (long) THREADS * ROUNDS * INNER;
        if (counter.value != expected) {
            throw new AssertionError("counter is " + counter.value + ", expected " + expected);
        }
        // After the loops the monitor is free: this thread takes it at once.
        synchronized (counter) {
            counter.value = 0;
        }

        Fields fields = new Fields();
        int[] sawTwice = new int[THREADS];
        for (int t = 0; t < THREADS; t++) {
            int which = t;
            threads[t] = new Thread(() -> sawTwice[which] = write(fields, which));
            threads[t].start();
        }
        while (fields.a + fields.b + fields.c + fields.d < WRITES && threads[0].isAlive()) {
            Thread.sleep(10);
        }
        step = new Twice();
        for (Thread t : threads) {
            t.join();
        }
        int[] got = { fields.a, fields.b, fields.c, fields.d };
        for (int t = 0; t < THREADS; t++) {
            if (got[t] != WRITES) {
                throw new AssertionError("writer " + t + "'s field is " + got[t] + ", expected "
                                         + WRITES + ": a write was lost");
            }
        }
        System.out.println("counter " + expected + "; writes after Twice was stored: "
                           + java.util.Arrays.toString(sawTwice));
    }
}
