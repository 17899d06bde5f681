/*
 * djava: CyclicBarriers that are shared objects of a cluster.
 *
 * Compiled into java.base (lib/djava-java.base.jar, which a VM with
 * -XX:+DistributedJava puts in front of java.base) together with the hooks
 * in CyclicBarrier (patches/0036); the natives are VM functions
 * (dso/dsoBarriers.cpp).
 */
package java.util.concurrent;

/**
 * The operations of a {@link CyclicBarrier} that is a shared object and
 * has moved to the cluster's monitor service (CyclicBarrier.atService).
 *
 * <p>The barrier's count lives at the service: an await is one arrival
 * there, answered when the barrier trips (with the arrival's index) or
 * breaks, and a trip wakes every party in one step. A barrier with an
 * action has its last arrival answered first: that thread runs the action
 * on its own node while the others wait, then trips the barrier (or, if
 * the action threw, breaks it), as CyclicBarrier's last arrival does under
 * the lock. Memory effects are the coherent heap's: every write a party
 * made before its await was made under its node's exclusive grant, so
 * whatever a thread reads after the trip (from any node) is fetched after
 * it, through the same owner flush.
 *
 * <p>As dowait: a thread that arrives interrupted breaks the barrier
 * (InterruptedException; BrokenBarrierException if it was broken
 * already), and a party that times out or is interrupted while it waits
 * breaks it for every party (TimeoutException or InterruptedException for
 * it, BrokenBarrierException for the others), unless the barrier tripped
 * first: then its interrupt stays set for what it does next.
 */
final class SharedBarriers {
    private SharedBarriers() {}

    /** arrive0's outcomes (djava_monitor_status), in its low byte; the index above. */
    private static final int TRIPPED = 0, TIMED_OUT = 1, INTERRUPTED = 2, LAST = 10, BROKEN = 11;
    private static final int INDEX_SHIFT = 8;
    /** op0's ops (monitor.proto, BarrierOpKind). */
    private static final int TRIP = 1, BREAK = 2, RESET = 3, QUERY = 4;
    /** In op0's answer: the barrier is broken; below, how many parties wait. */
    private static final long BROKEN_BIT = 1L << 32;

    private static native void registerNatives();
    /**
     * Arrives at the barrier (timed: within nanos) and waits for its trip;
     * an outcome above, and the arrival's index above INDEX_SHIFT.
     */
    private static native long arrive0(CyclicBarrier b, int parties, boolean command,
                                       boolean timed, long nanos, boolean interrupted);
    /** A barrier op; the barrier's state after it (BROKEN_BIT, parties waiting). */
    private static native long op0(CyclicBarrier b, int op);

    static {
        registerNatives();
    }

    static int await(CyclicBarrier b, int parties, Runnable command, boolean timed, long nanos)
            throws InterruptedException, BrokenBarrierException, TimeoutException {
        long r = arrive0(b, parties, command != null, timed, nanos,
                         Thread.currentThread().isInterrupted());
        int index = (int) (r >>> INDEX_SHIFT);
        switch ((int) r & 0xff) {
            case TRIPPED:
                return index;
            case LAST:
                boolean ran = false;
                try {
                    command.run();
                    ran = true;
                } finally {
                    op0(b, ran ? TRIP : BREAK);
                }
                return 0;
            case BROKEN:
                throw new BrokenBarrierException();
            case TIMED_OUT:
                throw new TimeoutException();
            case INTERRUPTED:
                throw new InterruptedException();  // the VM cleared the interrupt
            default:
                throw new InternalError("djava: a barrier arrival ended with " + r);
        }
    }

    static boolean isBroken(CyclicBarrier b) {
        return (op0(b, QUERY) & BROKEN_BIT) != 0L;
    }

    static int numberWaiting(CyclicBarrier b) {
        return (int) op0(b, QUERY);
    }

    static void reset(CyclicBarrier b) {
        op0(b, RESET);
    }
}
