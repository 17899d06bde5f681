/*
 * djava: this JVM as a node of a djava cluster, seen from Java.
 *
 * Loaded from lib/djava-runtime.jar, which a VM started with
 * -XX:+DistributedJava puts on its boot class path; the natives are the
 * VM's own (HotSpot's dso/dsoRuntime.cpp). Programs never need this class:
 * their objects become shared when they escape. The thread servers and
 * djava's own tests use it.
 */
package djava.runtime;

public final class Node {
    private static native void registerNatives();

    static {
        registerNatives();
    }

    private Node() {}

    /** Whether this VM joined a cluster (-XX:+DistributedJava). */
    public static native boolean isMember();

    /** The program this VM runs (the launcher's), or 0. */
    public static native long program();

    /**
     * Makes {@code o} shared and returns its cluster-wide id (0 for a
     * String or Class, which travel by value and by name). Objects it
     * references become shared when its bytes first leave this node.
     *
     * @throws IllegalArgumentException if o cannot be shared (a thread, a
     *         class loader, a file descriptor, ...)
     * @throws IllegalStateException if this VM is not a cluster node
     */
    public static native long publish(Object o);

    /**
     * The object with cluster-wide id {@code id}, fetched if this node has
     * no replica of it yet.
     */
    public static native Object attach(long id);

    /** The id of a shared object, 0 for a local one. */
    public static native long idOf(Object o);
}
