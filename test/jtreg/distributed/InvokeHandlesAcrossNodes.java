/*
 * @test
 * @summary VarHandles, direct MethodHandles and MethodTypes kept in a program's statics work
 *          in threads on every node (issue 25): compareAndSet and getAndAdd through field,
 *          static-field and array-element VarHandles (one with exact invocation), an
 *          AtomicIntegerFieldUpdater, invokeExact of static, virtual and constructor handles,
 *          and a MethodType that is the node's own interned one. A handle that has no name
 *          (an adapted one) fails loudly with its class and the reason, never silently.
 * @library /lib
 * @run main/othervm InvokeHandlesAcrossNodes
 */
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

public class InvokeHandlesAcrossNodes {
    static final int THREADS = 4;
    static final int ROUNDS = 300;

    static final VarHandle COUNT;
    static final VarHandle TOTAL;
    static final VarHandle SLOTS;
    static final VarHandle NAMES;
    static final VarHandle EXACT_COUNT;
    static final MethodHandle ADD;
    static final MethodHandle TWICE;
    static final MethodHandle MAKE_BOX;
    static final MethodHandle ADD_ONE;  // adapted: no name, cannot travel
    static final MethodType ADD_TYPE = MethodType.methodType(int.class, int.class, int.class);
    static final long DEFINING_PID = ProcessHandle.current().pid();  // where the handles were made
    static final AtomicIntegerFieldUpdater<Counters> UPDATED =
            AtomicIntegerFieldUpdater.newUpdater(Counters.class, "updated");

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            COUNT = lookup.findVarHandle(Counters.class, "count", int.class);
            EXACT_COUNT = COUNT.withInvokeExactBehavior();
            TOTAL = lookup.findStaticVarHandle(InvokeHandlesAcrossNodes.class, "total", long.class);
            SLOTS = MethodHandles.arrayElementVarHandle(long[].class);
            NAMES = MethodHandles.arrayElementVarHandle(String[].class);
            ADD = lookup.findStatic(InvokeHandlesAcrossNodes.class, "add", ADD_TYPE);
            TWICE = lookup.findVirtual(Box.class, "twice", MethodType.methodType(int.class));
            MAKE_BOX = lookup.findConstructor(Box.class, MethodType.methodType(void.class, int.class));
            ADD_ONE = MethodHandles.insertArguments(ADD, 0, 1);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static class Base {
        volatile int count;
    }

    static final class Counters extends Base {
        volatile int updated;
        final long[] slots = new long[THREADS];
        final String[] names = new String[THREADS];
    }

    static final class Box {
        final int value;

        Box(int value) {
            this.value = value;
        }

        int twice() {
            return 2 * value;
        }
    }

    static volatile long total;
    static volatile boolean sameType;

    static int add(int a, int b) {
        return a + b;
    }

    public static void main(String[] args) throws Throwable {
        Counters counters = new Counters();
        Thread[] workers = new Thread[THREADS];
        Throwable[] failure = new Throwable[1];
        // Each worker's node and what the adapted handle did there: a
        // worker may run where the handles were made (one that reaches a
        // node-local object stays there), so the pairs are kept apart.
        long[] adaptedPids = new long[THREADS];
        String[] adaptedResults = new String[THREADS];
        for (int i = 0; i < THREADS; i++) {
            final int slot = i;
            workers[i] = new Thread(() -> {
                try {
                    for (int r = 0; r < ROUNDS; r++) {
                        int seen;
                        do {
                            seen = (int) COUNT.getVolatile(counters);
                        } while (!COUNT.compareAndSet(counters, seen, seen + 1));
                        int unused = (int) EXACT_COUNT.getAndAdd((Counters) counters, 0);
                        UPDATED.incrementAndGet(counters);
                        TOTAL.getAndAdd(1L);
                        SLOTS.getAndAdd(counters.slots, slot, 1L);
                        int sum = (int) ADD.invokeExact(r, 1);
                        Box box = (Box) MAKE_BOX.invokeExact(r);
                        int doubled = (int) TWICE.invokeExact(box);
                        if (sum != r + 1 || doubled != 2 * r) {
                            throw new AssertionError("handles computed " + sum + " and " + doubled);
                        }
                    }
                    NAMES.setVolatile(counters.names, slot, "worker " + slot);
                    sameType = ADD_TYPE == MethodType.methodType(int.class, int.class, int.class)
                            && ADD.type() == ADD_TYPE;
                    String adapted;
                    try {
                        int three = (int) ADD_ONE.invokeExact(2);
                        adapted = "none: it returned " + three;
                    } catch (IllegalStateException expected) {
                        adapted = expected.getMessage();
                    }
                    synchronized (adaptedResults) {
                        adaptedPids[slot] = ProcessHandle.current().pid();
                        adaptedResults[slot] = adapted;
                    }
                } catch (Throwable t) {
                    synchronized (failure) {
                        failure[0] = t;
                    }
                }
            }, "worker " + i);
        }
        Threads.startAll(workers);
        Threads.joinAll(workers);
        synchronized (failure) {
            if (failure[0] != null) {
                throw new AssertionError("a worker failed", failure[0]);
            }
        }
        int expected = THREADS * ROUNDS;
        if (counters.count != expected || counters.updated != expected || total != expected) {
            throw new AssertionError("count " + counters.count + ", updated " + counters.updated
                    + ", total " + total + "; expected " + expected + " each");
        }
        long[] perSlot = new long[THREADS];
        Arrays.fill(perSlot, ROUNDS);
        if (!Arrays.equals(counters.slots, perSlot)) {
            throw new AssertionError("slots " + Arrays.toString(counters.slots));
        }
        for (int i = 0; i < THREADS; i++) {
            if (!("worker " + i).equals(counters.names[i])) {
                throw new AssertionError("names " + Arrays.toString(counters.names));
            }
        }
        if (!sameType) {
            throw new AssertionError("a MethodType that arrived is not the node's own interned one");
        }
        synchronized (adaptedResults) {
            for (int i = 0; i < THREADS; i++) {
                String adapted = adaptedResults[i];
                if (adaptedPids[i] != DEFINING_PID) {
                    // Used on another node than the one that made it.
                    if (adapted == null || !adapted.contains("MethodHandle") || !adapted.contains("cannot")) {
                        throw new AssertionError("an adapted handle on another node (worker " + i + "): "
                                + adapted);
                    }
                } else if (!"none: it returned 3".equals(adapted)) {
                    throw new AssertionError("an adapted handle where it was made (worker " + i + "): "
                            + adapted);
                }
            }
        }
        System.out.println("ok: " + expected + " updates per handle; adapted handle: "
                + Arrays.toString(adaptedResults));
    }
}
