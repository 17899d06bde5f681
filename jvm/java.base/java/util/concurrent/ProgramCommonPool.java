/*
 * djava: the ForkJoin common pool of the calling thread's program.
 *
 * Compiled into java.base (lib/djava-java.base.jar, which a VM with
 * -XX:+DistributedJava puts in front of java.base) together with the hooks
 * in ForkJoinPool, ForkJoinTask and CompletableFuture (patches/0027); the
 * natives are VM functions (dso/dsoProgramValues.cpp).
 */
package java.util.concurrent;

/**
 * Which pool {@link ForkJoinPool#commonPool()} is for the calling thread, and which scheduler
 * CompletableFuture's delays use.
 *
 * <p>A program's common pool is its launcher's: sized by the cluster's
 * processors, its workers placed on the thread servers. A thread server's
 * JDK, statics included, is shared by every program it runs, so its own
 * {@code ForkJoinPool.common} belongs to no program (it has no workers).
 * On a thread server, a thread of a program therefore gets the launcher's
 * pool as a shared object, fetched from the launcher the first time one of
 * the program's threads there asks; a thread of no program (the server's
 * own) gets the server's. On a launcher, and without a cluster, this JVM's
 * own pool is the program's, and asking costs one static read.
 */
final class ProgramCommonPool {
    private ProgramCommonPool() {}

    private static native void registerNatives();
    /** This VM is a thread server. */
    private static native boolean onThreadServer();
    /** The calling thread's program's common pool; null for a thread of no program. */
    private static native ForkJoinPool of0();
    /** The same for CompletableFuture's delay scheduler. */
    private static native ScheduledThreadPoolExecutor delayer0();

    private static final boolean ON_THREAD_SERVER;
    static {
        registerNatives();
        ON_THREAD_SERVER = onThreadServer();
    }

    /** The program's common pool if it is not this JVM's own, else null. */
    static ForkJoinPool of() {
        return ON_THREAD_SERVER ? of0() : null;
    }

    /**
     * The program's scheduler of CompletableFuture's delays (orTimeout, delayedExecutor) if it
     * is not this JVM's own, else null: on a thread server, its launcher's, as for the pool.
     */
    static ScheduledThreadPoolExecutor delayer() {
        return ON_THREAD_SERVER ? delayer0() : null;
    }

    /** On a launcher: its program's delay scheduler, this JVM's own (the VM calls this for a thread server). */
    static ScheduledThreadPoolExecutor launcherDelayer() {
        return CompletableFuture.Delayer.delayer;
    }
}
