/*
 * djava: synchronizers that are shared objects of a cluster.
 *
 * Compiled into java.base (lib/djava-java.base.jar, which a VM with
 * -XX:+DistributedJava puts in front of java.base) together with the hooks
 * in AbstractQueuedSynchronizer (patches/0024); the natives are VM
 * functions (dso/dsoSynchronizers.cpp).
 */
package java.util.concurrent.locks;

import java.util.ArrayList;
import java.util.Collection;
import jdk.internal.misc.Unsafe;

/**
 * Blocking and waking of an {@link AbstractQueuedSynchronizer} that is a
 * shared object: through the cluster's monitor service, instead of queue
 * nodes and park/unpark on the shared heap (each queue node a coherence
 * transaction of its own, and one published per await).
 *
 * <p>The synchronizer's state stays in the object, coherent like any field;
 * tryAcquire and tryRelease run as written. What moves to the service is
 * waiting: each shared synchronizer has a monitor there of its own (not its
 * Java monitor), whose wait sets are keyed: {@link #EXCLUSIVE} and
 * {@link #SHARED} hold the threads waiting to acquire, and a condition's
 * id the threads awaiting it.
 *
 * <p>No wake-up is lost: an acquirer holds the monitor from its failed
 * tryAcquire until it is in the wait set, and a release or a condition's
 * signal is applied by the service in the monitor's next free turn
 * (djava_monitor_signal), so it finds every thread whose check it could
 * have changed already waiting. An uncontended synchronizer costs no
 * message: a node that holds the monitor's lease while nobody waits
 * signals locally, and the fast paths (a CAS on the state) do not use the
 * monitor at all.
 *
 * <p>Acquirers wait in line at the service, each at a place it keeps until
 * it acquires, as an AQS queue node stays queued: a woken acquirer that
 * fails its check waits again at its place, ahead of threads that waited
 * while it re-entered, and a fair synchronizer lets only the first in line
 * take its turn (hasQueuedPredecessors).
 *
 * <p>Threads that queued on the synchronizer's own queue before it became
 * shared stay there, and releases and signals serve them as before.
 */
final class SharedSynchronizers {
    private SharedSynchronizers() {}

    /** Wait keys of the acquirers; a condition's key is its id (never 1 or 2). */
    static final long EXCLUSIVE = 1, SHARED = 2;

    /** What a wait in the service ended with (djava_monitor_status). */
    private static final int NOTIFIED = 0, TIMED_OUT = 1, INTERRUPTED = 2, LEFT_LINE = 3;

    private static native void registerNatives();
    private static native boolean enabled();
    private static native boolean isShared0(Object o);
    /**
     * The object's cluster id; if it is not shared, 0, or its id once
     * published (0 if it cannot be shared: a thread the JDK runs for its
     * node's own work).
     */
    private static native long idOf(Object o, boolean publish);
    private static native Object objectOf(long id);
    /** Enters or exits the synchronizer's monitor at the service. */
    private static native void enter(Object sync);
    private static native void exit(Object sync);
    /**
     * Waits in the wait set `key` (millis 0: no timeout). An acquirer waits
     * in the service's line at `place` (NEW_PLACE: a new one at its end;
     * 0: not in line), so a woken acquirer that waits again keeps its place
     * ahead of those that came after it, as an AQS queue node stays queued
     * until its thread acquires. Returns a status above (the low two bits),
     * FIRST_IN_LINE if no earlier place waits or re-enters (always, for a
     * wait in no line), and the waiter's place in line above PLACE_SHIFT
     * (0: none). A timed or interruptible wait in line may end at its
     * deadline or interrupt without the monitor: LEFT_LINE.
     */
    private static native long await0(Object sync, long key, long thread, long millis,
                                      boolean interruptible, long place);
    private static final long NEW_PLACE = -1L;
    private static final long STATUS_BITS = 3L, FIRST_IN_LINE = 4L;
    private static final int PLACE_SHIFT = 3;

    /** The place in line await0's result reports, else the one the waiter had. */
    private static long placeAfter(long woken, long place) {
        long at = woken >>> PLACE_SHIFT;
        return at != 0L ? at : place;
    }
    /** Wakes the waiters of `key` (all or the longest), or moves them to wait set toKey (not 0). */
    private static native void signal0(Object sync, long key, boolean all, long toKey);
    /** The service's waiters, longest first: key, thread id, key, thread id, ... */
    private static native long[] queue0(Object sync);
    /**
     * Enters the synchronizer's monitor for a lock (millis 0: no timeout):
     * NOTIFIED (0) if held now, TIMED_OUT or INTERRUPTED if not. barging:
     * the lock lets a thread take it ahead of queued ones (not fair), so
     * a thread that takes it again right after its unlock may keep it a
     * moment past the unlock, as a monitor's owner does.
     */
    private static native int enterLock0(Object sync, long thread, long millis,
                                         boolean interruptible, boolean reportQueued,
                                         boolean barging);

    /** A non-fair lock: its releases may be kept back (enterLock0). */
    private static boolean barging(ReentrantLock.Sync s) {
        return !(s instanceof ReentrantLock.FairSync);
    }
    /**
     * With reportQueued, enterLock0 returns WAITING once the thread is
     * queued at the service (still queued); it goes on here, to the
     * results above.
     */
    private static native int enterLockMore0(Object sync, boolean interruptible, boolean timed);
    private static final int WAITING = 8;
    /** Enters the monitor if that needs no wait; false if another thread owns it or is queued. */
    private static native boolean tryEnter0(Object sync, long thread);
    /** The current thread's entries into the synchronizer's monitor (0: it does not own it). */
    private static native int count0(Object sync);
    /** The synchronizer is shared and the current thread does not own its monitor. */
    private static native boolean entersMonitor0(Object sync);
    /** notify (all: notifyAll) of the wait set `key`, by the monitor's owner. */
    private static native void notify0(Object sync, long key, boolean all);
    /** The Thread ids of the threads queued to enter the monitor, first served first. */
    private static native long[] entering0(Object sync);

    private static final boolean ENABLED;
    /**
     * AbstractQueuedSynchronizer.sharedWaiters, changed atomically: by a
     * waiter under the synchronizer's monitor at the service, and by a
     * condition's signaller, which holds the synchronizer but not that
     * monitor.
     */
    private static final Unsafe U = Unsafe.getUnsafe();
    private static final long WAITERS =
        U.objectFieldOffset(AbstractQueuedSynchronizer.class, "sharedWaiters");

    private static void addWaiters(AbstractQueuedSynchronizer s, int delta) {
        U.getAndAddInt(s, WAITERS, delta);
    }
    /** The synchronizer a thread re-acquires after waiting (fair locks' turn). */
    private static final ThreadLocal<AbstractQueuedSynchronizer> REACQUIRING;
    /** The synchronizer a thread checks again right after counting itself a waiter. */
    private static final ThreadLocal<AbstractQueuedSynchronizer> COUNTED;
    static {
        registerNatives();
        ENABLED = enabled();
        REACQUIRING = ENABLED ? new ThreadLocal<>() : null;
        COUNTED = ENABLED ? new ThreadLocal<>() : null;
    }

    static boolean isShared(Object o) {
        return ENABLED && isShared0(o);
    }

    // ---- ReentrantLock: its holder holds the synchronizer's monitor --------
    //
    // A shared ReentrantLock is taken by entering its synchronizer's monitor
    // at the service first and then acquiring the state as usual; the
    // holder keeps the monitor until its last unlock. The state stays the
    // lock's truth (isLocked, getOwner, getHoldCount read it; a thread that
    // took the lock through the state alone, before the lock was shared,
    // holds it as well as any, and a monitor owner waits for it as an
    // acquirer waits above); the monitor adds what the service does for a
    // monitor: a hand-off between nodes is the holder's exit and the next
    // holder's grant, queued FIFO, with the data the holder wrote under it
    // moved along (docs/SOS.md, "Data following its lock"); a lock used on
    // one node only is leased to it and costs no message; a condition's
    // waiters wait in the monitor's wait set of the condition's key and are
    // notified by the holder, and a notified waiter re-enters like any
    // acquirer. No field of the lock is read before its monitor is held,
    // so the lock's data moves once per tenure.

    /**
     * Whether the current thread takes this lock at the service: the lock
     * is shared and the thread does not own its monitor yet (an owner's
     * lock is a re-entry; a thread holding the state alone enters first).
     * Asked only of a lock whose `shared` field the VM set as it published
     * the lock: a lock never shared pays a field read.
     */
    static boolean entersMonitor(ReentrantLock.Sync s) {
        return ENABLED && entersMonitor0(s);
    }

    /** The current thread owns the monitor: take the state (a re-entry, or free). */
    private static boolean acquireHeld(ReentrantLock.Sync s, int arg) {
        // A fair lock's tryAcquire asks hasQueuedPredecessors: the waiters
        // counted (for a holder from before the sharing), not the monitor's
        // queue, which this thread left when it got the monitor.
        return s.getState() != 0 ? s.tryLock() && grow(s, arg - 1) : s.tryAcquire(arg);
    }

    /** A re-entry that took one hold takes the rest of `more` too (an await's saved state). */
    private static boolean grow(ReentrantLock.Sync s, int more) {
        if (more > 0) {
            int c = s.getState() + more;
            if (c < 0) {
                throw new Error("Maximum lock count exceeded");
            }
            s.setState(c);
        }
        return true;
    }

    /**
     * lock(), lockInterruptibly() and tryLock(timeout) of a shared lock
     * whose monitor the thread does not own: false if the deadline passed.
     */
    static boolean lock(ReentrantLock.Sync s, boolean interruptible, boolean timed,
                        long deadline) throws InterruptedException {
        long millis = 0L;
        if (timed && (millis = millisUntil(deadline)) == 0L) {
            return tryLock(s);
        }
        int status = enterLock0(s, currentThreadId(), millis, interruptible, true, barging(s));
        boolean parked = status == WAITING;
        if (parked) {
            // Still waiting: parked on the lock, as an AQS acquirer is once
            // it is queued (isQueued counts it queued from here on). It
            // stays parked on it until it holds the lock or gives up, as an
            // AQS node stays queued: the monitor granted, it may still wait
            // for the state below, and an inspector that saw it parked must
            // not see it unqueued on its way to the service's wait set.
            LockSupport.setCurrentBlocker(s);
            status = enterLockMore0(s, interruptible, timed);
        }
        if (status == TIMED_OUT || status == INTERRUPTED) {
            if (parked) {
                LockSupport.setCurrentBlocker(null);
            }
            if (status == TIMED_OUT) {
                return false;
            }
            throw new InterruptedException();
        }
        boolean held = false;
        try {
            if (acquireHeld(s, 1)) {
                held = true;
            } else {
                // A thread holds the state without the monitor (it took the
                // lock before it was shared): wait for its release, as any
                // acquirer of a shared synchronizer does.
                int r = acquire(s, 1, false, interruptible, timed, deadline);
                if (r < 0) {
                    throw new InterruptedException();
                }
                held = r > 0;
            }
        } finally {
            if (parked) {
                LockSupport.setCurrentBlocker(null);
            }
            if (!held && count0(s) > 0) {  // an acquire that left its line holds nothing
                exit(s);
            }
        }
        return held;
    }

    static void lock(ReentrantLock.Sync s) {
        try {
            lock(s, false, false, 0L);
        } catch (InterruptedException cannotHappen) {
            throw new InternalError(cannotHappen);
        }
    }

    /**
     * tryLock() of a shared lock whose monitor the thread does not own. A
     * monitor that another node holds leased, or that is being handed
     * over, while the state says free, is waited for, but only for as long
     * as the state stays free: tryLock takes a free lock.
     */
    static boolean tryLock(ReentrantLock.Sync s) {
        long me = currentThreadId();
        if (!tryEnter0(s, me)) {
            boolean entered = false;
            while (s.getState() == 0) {
                if (enterLock0(s, me, 1L, false, false, barging(s)) == NOTIFIED) {
                    entered = true;
                    break;
                }
            }
            if (!entered) {
                return false;
            }
        }
        if (s.tryLock()) {  // barging, as ReentrantLock.tryLock is; the monitor is owned now
            return true;
        }
        exit(s);
        return false;
    }

    /** A shared lock's last unlock: its holder leaves the monitor it entered for it. */
    static void unlocked(ReentrantLock.Sync s) {
        if (ENABLED && count0(s) > 0) {
            exit(s);
        }
    }

    /**
     * A condition's await on a ReentrantLock, which the thread holds (its
     * monitor too, unless it took the lock before the lock was shared: then
     * it enters for the wait). The thread waits in the monitor's wait set of
     * the condition's key, releasing the monitor in the same step as it
     * joins the set, so a signaller (who must hold the lock, and so its
     * monitor) comes after; a notified, timed-out or interrupted waiter
     * re-enters the monitor and takes its saved holds back.
     */
    private static boolean awaitLock(ReentrantLock.Sync s,
                                     AbstractQueuedSynchronizer.ConditionObject c,
                                     boolean interruptible, boolean timed, long deadline)
            throws InterruptedException {
        if (!s.isHeldExclusively()) {
            throw new IllegalMonitorStateException();
        }
        long key = idOf(c, true);  // its id names its wait set
        long me = currentThreadId();
        boolean entered = count0(s) == 0;
        if (entered) {
            enter(s);
        }
        boolean signalled = true, interrupted = false, cancelled = false;
        c.sharedWaiters++;  // under the lock, which a signaller holds too
        try {
            int savedState = s.getState();
            if (!s.release(savedState)) {
                throw new IllegalMonitorStateException();
            }
            long millis = timed ? millisUntil(deadline) : 0L;
            if (timed && millis == 0L) {
                signalled = false;
            } else {
                LockSupport.setCurrentBlocker(c);
                long woken = await0(s, key, me, millis, interruptible, 0L);
                LockSupport.setCurrentBlocker(null);
                int status = (int) (woken & STATUS_BITS);
                if (status == TIMED_OUT) {
                    signalled = false;
                } else if (status == INTERRUPTED) {
                    if (interruptible) {
                        cancelled = true;
                    } else {
                        interrupted = true;
                    }
                }
            }
            // The monitor is held again; so is the state, unless a thread
            // that took the lock before it was shared has it now.
            if (!acquireHeld(s, savedState) &&
                acquire(s, savedState, false, false, false, 0L) <= 0) {
                throw new InternalError("djava: an uninterruptible re-acquire gave up");
            }
        } finally {
            c.sharedWaiters--;
            if (entered) {
                exit(s);
            }
        }
        if (cancelled) {
            throw new InterruptedException();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return signalled;
    }

    /**
     * The current thread's cluster id, for the service to report it as a
     * waiter: its Thread is published (once) if it is not shared yet, as a
     * thread that never left its node's is not, so that queue inspections
     * on every node can name it (0 for a thread of the JDK's own work,
     * which cannot be shared: no inspection names it).
     */
    private static long currentThreadId() {
        return idOf(Thread.currentThread(), true);
    }

    /**
     * tryAcquire(Shared); `woken`: the thread is back from a wait, first in
     * line (nobody that waited longer waits still or re-enters before it).
     */
    private static boolean tryAcquire(AbstractQueuedSynchronizer s, int arg, boolean shared,
                                      boolean woken) {
        if (!woken) {
            return shared ? s.tryAcquireShared(arg) >= 0 : s.tryAcquire(arg);
        }
        REACQUIRING.set(s);
        try {
            return shared ? s.tryAcquireShared(arg) >= 0 : s.tryAcquire(arg);
        } finally {
            REACQUIRING.remove();
        }
    }

    private static long millisUntil(long deadline) {
        long nanos = deadline - System.nanoTime();
        return nanos <= 0L ? 0L : Math.max(1L, (nanos + 999_999L) / 1_000_000L);
    }

    /**
     * AbstractQueuedSynchronizer.acquire for a shared synchronizer:
     * positive if acquired, 0 if timed out, negative if interrupted.
     */
    static int acquire(AbstractQueuedSynchronizer s, int arg, boolean shared,
                       boolean interruptible, boolean timed, long time) {
        long me = 0L;  // its id, published once it waits
        long key = shared ? SHARED : EXCLUSIVE;
        boolean interrupted = false, waited = false, counted = false, left = false;
        long place = NEW_PLACE;
        int result = 1;
        enter(s);
        try {
            for (;;) {
                if (tryAcquire(s, arg, shared, waited)) {
                    break;
                }
                long millis = 0L;
                if (timed && (millis = millisUntil(time)) == 0L) {
                    result = 0;
                    break;
                }
                if (!s.sharedContended) {
                    s.sharedContended = true;  // a write only once: it is a shared field
                }
                if (!counted) {
                    // Counted until the thread leaves this loop, as an AQS
                    // queue node stays queued until its thread acquires:
                    // a fair synchronizer's newcomer then queues behind a
                    // woken waiter that has not re-checked yet. Announced,
                    // then checked again: a release that wrote the state
                    // before this count sees no waiter and sends no signal,
                    // but then this check sees its state (both volatile:
                    // Dekker's argument).
                    addWaiters(s, 1);
                    counted = true;
                    COUNTED.set(s);
                    try {
                        if (tryAcquire(s, arg, shared, waited)) {
                            break;
                        }
                    } finally {
                        COUNTED.remove();
                    }
                }
                if (me == 0L) {
                    me = currentThreadId();
                    // Parked on the synchronizer until it leaves this loop,
                    // as its AQS node stays queued: a wake-up it does not
                    // take leaves it queued while it checks again.
                    LockSupport.setCurrentBlocker(s);
                }
                long woken = await0(s, key, me, millis, interruptible, place);
                int status = (int) (woken & STATUS_BITS);
                if (status == LEFT_LINE) {
                    // Timed out or interrupted without the monitor, which
                    // a lock's holder may keep for long: as AQS's cancelled
                    // node, it gives up without looking again.
                    left = true;
                    result = interruptible && Thread.interrupted() ? -1 : 0;
                    break;
                }
                place = placeAfter(woken, place);
                waited = (woken & FIRST_IN_LINE) != 0L;
                if (status == INTERRUPTED) {
                    if (interruptible) {
                        result = -1;
                        break;
                    }
                    interrupted = true;
                }
            }
        } finally {
            if (me != 0L) {
                LockSupport.setCurrentBlocker(null);
            }
            if (counted) {
                addWaiters(s, -1);
                if (result <= 0 && (place != NEW_PLACE || left) && s.sharedWaiters != 0) {
                    // It gives up its place in line without acquiring: those
                    // behind it, woken while it was ahead, wait again; wake
                    // them to check (as AQS's cancelAcquire signals the next).
                    // One that left at once may have been woken on its way.
                    signal0(s, EXCLUSIVE, false, 0L);
                    signal0(s, SHARED, true, 0L);
                }
            }
            if (!left) {
                exit(s);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return result;
    }

    /**
     * A release succeeded: if a thread waits at the service, wake one
     * exclusive and every shared acquirer. The count is 0 in a synchronizer
     * never shared, so a local one pays a field read and no native call.
     */
    static void released(AbstractQueuedSynchronizer s) {
        if (ENABLED && s.sharedWaiters != 0 && isShared0(s)) {
            signal0(s, EXCLUSIVE, false, 0L);
            signal0(s, SHARED, true, 0L);
        }
    }

    /**
     * ConditionObject's awaits for a shared synchronizer: true unless the
     * deadline passed first. The caller holds the synchronizer exclusively.
     *
     * A signal moves its waiters to the synchronizer's acquirers at the
     * service (as AQS moves a condition's nodes to its queue), so that they
     * wake once, when a release lets one in, and queue inspections see them
     * queued at once. The counts, both changed by threads that hold the
     * synchronizer: c.sharedWaiters, the waiters no signal has moved yet;
     * a signal turns those it moves into acquirers (s.sharedWaiters), so
     * that the next release wakes one. A waiter that left the condition's
     * wait set by itself (timed out, interrupted) takes its own slot back
     * once it holds the synchronizer again, or, if a signal counted it as
     * moved meanwhile, the acquirer slot that signal made for it.
     */
    static boolean await(AbstractQueuedSynchronizer s,
                         AbstractQueuedSynchronizer.ConditionObject c,
                         boolean interruptible, boolean timed, long deadline)
            throws InterruptedException {
        if (s instanceof ReentrantLock.Sync rs) {
            return awaitLock(rs, c, interruptible, timed, deadline);
        }
        if (!s.isHeldExclusively()) {
            throw new IllegalMonitorStateException();
        }
        long key = idOf(c, true);  // its id names its wait set
        long me = currentThreadId();
        boolean signalled = true, interrupted = false, cancelled = false;
        boolean moved = false, counted = false, first = false;
        long place = NEW_PLACE;
        c.sharedWaiters++;
        enter(s);
        try {
            int savedState = s.getState();
            // Its signal to acquirers waits behind this thread's hold of
            // the monitor, so they run only once this thread is waiting.
            if (!s.release(savedState)) {
                throw new IllegalMonitorStateException();
            }
            long millis = timed ? millisUntil(deadline) : 0L;
            if (timed && millis == 0L) {
                signalled = false;
            } else {
                LockSupport.setCurrentBlocker(c);
                long woken = await0(s, key, me, millis, interruptible, 0L);
                LockSupport.setCurrentBlocker(null);
                int status = (int) (woken & STATUS_BITS);
                place = placeAfter(woken, place);  // a signal moved it into the line
                first = (woken & FIRST_IN_LINE) != 0L;
                if (status == TIMED_OUT) {
                    signalled = false;
                } else if (status == INTERRUPTED) {
                    if (interruptible) {
                        cancelled = true;
                    } else {
                        interrupted = true;
                    }
                } else {
                    // Moved by a signal, then woken by a release: an
                    // acquirer the signal counted, at its place in line.
                    moved = counted = true;
                }
            }
            // Re-acquire with the saved state, whatever ended the wait.
            boolean waited = moved && first;
            try {
                for (;;) {
                    if (tryAcquire(s, savedState, false, waited)) {
                        break;
                    }
                    if (!s.sharedContended) {
                        s.sharedContended = true;  // a write only once: it is a shared field
                    }
                    if (!counted) {  // counted and checked again, as in acquire
                        addWaiters(s, 1);
                        counted = true;
                        COUNTED.set(s);
                        try {
                            if (tryAcquire(s, savedState, false, waited)) {
                                break;
                            }
                        } finally {
                            COUNTED.remove();
                        }
                    }
                    long woken = await0(s, EXCLUSIVE, me, 0L, false, place);
                    if ((woken & STATUS_BITS) == INTERRUPTED) {
                        interrupted = true;
                    }
                    place = placeAfter(woken, place);
                    waited = (woken & FIRST_IN_LINE) != 0L;
                }
            } finally {
                if (counted) {
                    addWaiters(s, -1);
                }
            }
            if (!moved) {
                // Held again: this thread's slot in the condition, or the
                // acquirer slot a signal made of it.
                if (c.sharedWaiters > 0) {
                    c.sharedWaiters--;
                } else {
                    addWaiters(s, -1);
                }
            }
        } finally {
            exit(s);
        }
        if (cancelled) {
            throw new InterruptedException();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return signalled;
    }

    /**
     * A condition's signal or signalAll for a shared synchronizer, by the
     * thread that holds it: the waiters not yet moved become acquirers.
     */
    static void signal(AbstractQueuedSynchronizer s,
                       AbstractQueuedSynchronizer.ConditionObject c, boolean all) {
        int waiting = c.sharedWaiters;
        if (ENABLED && waiting != 0 && isShared0(s) && s instanceof ReentrantLock.Sync) {
            // The lock's holder owns its monitor (one that took the lock
            // before it was shared enters for the notify): its waiters are
            // woken, and wait for the monitor as any acquirer.
            boolean entered = count0(s) == 0;
            if (entered) {
                enter(s);
            }
            try {
                notify0(s, idOf(c, false), all);
            } finally {
                if (entered) {
                    exit(s);
                }
            }
        } else if (ENABLED && waiting != 0 && isShared0(s)) {
            int moving = all ? waiting : 1;
            c.sharedWaiters = waiting - moving;
            addWaiters(s, moving);
            signal0(s, idOf(c, false), all, EXCLUSIVE);
        }
    }

    // ---- queue inspection: the service's waiters ----------------------------

    /**
     * isQueued(thread) of a shared synchronizer. A thread parks on the
     * synchronizer only once it counts as queued (an acquirer counted, or
     * a lock's enter still waiting after queued_report_ms), as an AQS
     * acquirer parks only once its node is linked; but its wait may still
     * be on its way to the service, whose listing would miss it. So a
     * thread seen parked on the synchronizer is queued, whatever the
     * listing says: an inspector that saw the blocker (as a thread dump or
     * a test does) sees the thread queued too. And, as with AQS, the
     * listings (getQueuedThreads, getQueueLength) agree from then on: this
     * waits, while the thread stays parked here, until the service lists
     * it (its wait is one message away; bounded by QUEUED_WAIT_NS).
     */
    static boolean isQueued(AbstractQueuedSynchronizer s, Thread t) {
        if (waiting(s, 0L).contains(t)) {
            return true;
        }
        if (LockSupport.getBlocker(t) != s) {
            return false;
        }
        long start = System.nanoTime();
        while (System.nanoTime() - start < QUEUED_WAIT_NS) {
            Thread.yield();
            if (waiting(s, 0L).contains(t)) {
                return true;
            }
            if (LockSupport.getBlocker(t) != s) {
                break;  // no longer parked here: woken, or gone
            }
        }
        return true;  // it was parked here when asked
    }
    private static final long QUEUED_WAIT_NS = 2_000_000_000L;

    /** The service's waiters of the synchronizer with key (0: both acquirer keys). */
    static Collection<Thread> waiting(AbstractQueuedSynchronizer s, long key) {
        ArrayList<Thread> list = new ArrayList<>();
        if (!mayWait(s, key)) {
            return list;
        }
        if (enters(s, key)) {
            for (long id : entering0(s)) {
                if (id != 0L && objectOf(id) instanceof Thread t) {
                    list.add(t);
                }
            }
            if (s.sharedWaiters == 0) {
                return list;
            }
        }
        long[] q = isAcquirerKey(key) ? queue0(s) : conditionQueue(s);
        for (int i = 0; i + 1 < q.length; i += 2) {
            boolean match = key == 0L ? (q[i] == EXCLUSIVE || q[i] == SHARED) : q[i] == key;
            if (match && q[i + 1] != 0L && objectOf(q[i + 1]) instanceof Thread t) {
                list.add(t);
            }
        }
        return list;
    }

    /**
     * Whether the threads queued to enter the synchronizer's monitor are
     * among its acquirers of `key`: a shared ReentrantLock's are (they wait
     * for its monitor, as an AQS node for its turn).
     */
    private static boolean enters(AbstractQueuedSynchronizer s, long key) {
        return (key == 0L || key == EXCLUSIVE) && s instanceof ReentrantLock.Sync;
    }

    private static boolean isAcquirerKey(long key) {
        return key == 0L || key == EXCLUSIVE || key == SHARED;
    }

    /**
     * The service's waiters, asked by a thread that holds the synchronizer
     * to inspect a condition's. A thread that awaits the condition counts
     * itself and enters the service monitor before it lets the
     * synchronizer go, and holds that monitor until its wait is at the
     * service. The inspector took the synchronizer after that release, so
     * passing through the monitor once orders the question after every
     * such wait: no awaiting thread is missed between its release and its
     * wait (while a node holds the monitor's lease it would answer "nobody"
     * without asking). No owner of the monitor waits for the synchronizer
     * while it holds the monitor (await0 lets it go), so this cannot
     * deadlock.
     */
    private static long[] conditionQueue(AbstractQueuedSynchronizer s) {
        enter(s);
        try {
            return queue0(s);
        } finally {
            exit(s);
        }
    }

    /**
     * Whether a thread may wait at the service with key (0: an acquirer
     * key): only if it counted itself, so a synchronizer nobody waits for
     * is inspected without a message. (A condition's count is read under
     * the synchronizer, which its waiters hold when they count.)
     */
    private static boolean mayWait(AbstractQueuedSynchronizer s, long key) {
        if (!ENABLED) {
            return false;
        }
        if (isAcquirerKey(key)) {
            return (s.sharedWaiters != 0 || enters(s, key)) && isShared0(s);
        }
        return isShared0(s);  // a condition's: its waiters are counted in the condition
    }

    /**
     * How many threads wait with key (0: both acquirer keys), named or not.
     * The acquirers are the ones counted: a thread is queued from its
     * count until it acquires or gives up, as an AQS node is, including
     * while a wake-up it does not take (a release it loses, or a queued
     * thread ahead of it giving up) has it re-enter and check again; the
     * service's wait set misses it then.
     */
    static int waitingCount(AbstractQueuedSynchronizer s, long key) {
        if (!mayWait(s, key)) {
            return 0;
        }
        if (key == 0L) {
            // A ReentrantLock's acquirers queued for its monitor are not
            // counted: they read no field of the lock before they own it.
            return Math.max(0, s.sharedWaiters) + (enters(s, key) ? entering0(s).length : 0);
        }
        long[] q = isAcquirerKey(key) ? queue0(s) : conditionQueue(s);
        int n = 0;
        for (int i = 0; i + 1 < q.length; i += 2) {
            if (key == 0L ? (q[i] == EXCLUSIVE || q[i] == SHARED) : q[i] == key) {
                n++;
            }
        }
        return n;
    }

    /** The key of the first acquirer waiting at the service, or 0. */
    static long firstAcquirerKey(AbstractQueuedSynchronizer s) {
        if (!mayWait(s, 0L)) {
            return 0L;
        }
        long[] q = queue0(s);
        for (int i = 0; i + 1 < q.length; i += 2) {
            if (q[i] == EXCLUSIVE || q[i] == SHARED) {
                return q[i];
            }
        }
        return 0L;
    }

    /** The first acquirer waiting at the service, or null. */
    static Thread firstAcquirer(AbstractQueuedSynchronizer s) {
        if (!mayWait(s, 0L)) {
            return null;
        }
        long[] q = queue0(s);
        for (int i = 0; i + 1 < q.length; i += 2) {
            if ((q[i] == EXCLUSIVE || q[i] == SHARED) && q[i + 1] != 0L) {
                return objectOf(q[i + 1]) instanceof Thread t ? t : null;
            }
        }
        return null;
    }

    /**
     * hasQueuedPredecessors for a shared synchronizer: another thread waits
     * to acquire at the service, and the current thread is not the one the
     * service woke for its turn (it left the wait set, first in line).
     */
    static boolean hasQueuedPredecessors(AbstractQueuedSynchronizer s) {
        if (!ENABLED || REACQUIRING.get() == s) {
            return false;
        }
        // The acquirers counted, less this thread if it is one of them.
        return s.sharedWaiters > (COUNTED.get() == s ? 1 : 0) && isShared0(s);
    }

    /** The shared wait key of a condition, or 0 if no thread ever awaited it at the service. */
    static long conditionKey(AbstractQueuedSynchronizer.ConditionObject c) {
        return ENABLED && c.sharedWaiters != 0 ? idOf(c, false) : 0L;
    }
}
