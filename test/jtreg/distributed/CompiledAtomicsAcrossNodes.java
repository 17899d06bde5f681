/*
 * @test
 * @summary Atomics, VarHandles and Unsafe buffers in hot, compiled code: each of 4 threads on
 *          the thread servers first runs the same methods on objects of its own until the JIT
 *          compiles them, then on shared ones (an AtomicInteger, an AtomicLongArray, a
 *          VarHandle's instance and static fields, a LongAdder); every total is exact. Direct
 *          and heap ByteBuffers (Unsafe with and without a base object) and a class's own
 *          reflection data (a mirror's own fields, by CAS) work in the same compiled code.
 * @library /lib
 * @run main/othervm CompiledAtomicsAcrossNodes
 */
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

public class CompiledAtomicsAcrossNodes {
    static final int THREADS = 4;
    static final int WARM_UP = 30_000;  // past C2's thresholds, tiered or alone
    static final int SHARED = 400;      // per thread, on the shared objects
    static final int SLOTS = 8;

    static final class Holder {
        volatile int value;
    }

    static final VarHandle VALUE;
    static final VarHandle TOTAL;
    static final VarHandle[] OWN_TOTALS = new VarHandle[THREADS];
    static long total;
    static long total0, total1, total2, total3;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            VALUE = lookup.findVarHandle(Holder.class, "value", int.class);
            TOTAL = lookup.findStaticVarHandle(CompiledAtomicsAcrossNodes.class, "total", long.class);
            for (int t = 0; t < THREADS; t++) {
                OWN_TOTALS[t] = lookup.findStaticVarHandle(CompiledAtomicsAcrossNodes.class, "total" + t,
                                                           long.class);
            }
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // One step on each kind of target: the methods the JIT compiles.
    static void step(AtomicInteger counter, AtomicLongArray slots, Holder holder, VarHandle statics,
                     LongAdder adder, int i) {
        counter.incrementAndGet();
        slots.getAndIncrement(i % SLOTS);
        int v;
        do {
            v = (int) VALUE.getVolatile(holder);
        } while (!VALUE.compareAndSet(holder, v, v + 1));
        statics.getAndAdd(1L);
        adder.increment();
    }

    // Unsafe with no base object (a direct buffer: native memory) and with
    // one (a heap buffer: its array), in the same compiled code.
    static long buffers(ByteBuffer direct, ByteBuffer heap, int i) {
        direct.putInt((i % 16) * 4, i);
        heap.putLong((i % 8) * 8, (long) i << 20);
        return direct.getInt((i % 16) * 4) + (heap.getLong((i % 8) * 8) >> 20);
    }

    public static void main(String[] args) throws Exception {
        AtomicInteger counter = new AtomicInteger();
        AtomicLongArray slots = new AtomicLongArray(SLOTS);
        Holder holder = new Holder();
        LongAdder adder = new LongAdder();
        CountDownLatch done = new CountDownLatch(THREADS);
        String[] failures = new String[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int k = t;
            new Thread(() -> {
                try {
                    // Warm-up on objects of this thread's own, and a static
                    // field nobody else writes.
                    AtomicInteger myCounter = new AtomicInteger();
                    AtomicLongArray mySlots = new AtomicLongArray(SLOTS);
                    Holder myHolder = new Holder();
                    LongAdder myAdder = new LongAdder();
                    ByteBuffer direct = ByteBuffer.allocateDirect(64);
                    ByteBuffer heap = ByteBuffer.allocate(64);
                    long sum = 0;
                    for (int i = 0; i < WARM_UP; i++) {
                        step(myCounter, mySlots, myHolder, OWN_TOTALS[k], myAdder, i);
                        long got = buffers(direct, heap, i);
                        if (got != 2L * i) {
                            failures[k] = "buffers gave " + got + " for " + i;
                            return;
                        }
                        if (i % 1000 == 0) {
                            // A mirror's own field (its reflection data, set by CAS).
                            sum += CompiledAtomicsAcrossNodes.class.getDeclaredField("total").getModifiers();
                        }
                    }
                    long slotSum = 0;
                    for (int s = 0; s < SLOTS; s++) {
                        slotSum += mySlots.get(s);
                    }
                    long own = (long) OWN_TOTALS[k].getVolatile();
                    if (myCounter.get() != WARM_UP || slotSum != WARM_UP || myHolder.value != WARM_UP
                            || own != WARM_UP || myAdder.sum() != WARM_UP || sum == 0) {
                        failures[k] = "warm-up totals " + myCounter.get() + ", " + slotSum + ", "
                                + myHolder.value + ", " + own + ", " + myAdder.sum() + " (each should be "
                                + WARM_UP + ")";
                        return;
                    }
                    for (int i = 0; i < SHARED; i++) {
                        step(counter, slots, holder, TOTAL, adder, i);
                    }
                } catch (Throwable e) {
                    failures[k] = e.toString();
                } finally {
                    done.countDown();
                }
            }, "compiled-atomics-" + t).start();
        }
        Checks c = new Checks("CompiledAtomicsAcrossNodes");
        boolean finished = done.await(240, TimeUnit.SECONDS);
        c.check(finished, "the threads did not end within 240 s (" + done.getCount() + " left)");
        for (int t = 0; t < THREADS; t++) {
            c.check(failures[t] == null, "thread " + t + ": " + failures[t]);
        }
        if (finished) {
            long expected = (long) THREADS * SHARED;
            c.equal("counter.get()", (long) counter.get(), expected);
            long slotSum = 0;
            for (int s = 0; s < SLOTS; s++) {
                slotSum += slots.get(s);
                c.equal("slots.get(" + s + ")", slots.get(s), expected / SLOTS);
            }
            c.equal("the slots' sum", slotSum, expected);
            c.equal("holder.value (VarHandle compareAndSet)", (long) holder.value, expected);
            c.equal("total (a static's VarHandle getAndAdd)", total, expected);
            c.equal("adder.sum()", adder.sum(), expected);
        }
        c.done();
    }
}
