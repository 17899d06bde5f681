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

    // ---- for djava's own runtime (Launcher, ThreadServer) ----

    /** The next event from the thread manager; null after timeoutMs (< 0: wait). */
    static native Event nextEvent(long timeoutMs);

    /** Answers the launcher's request for this node's statistics of {@code program}. */
    static native void answerStatistics(long requestId, long program);

    /** Answers a thread server's request for a class file or resource (null: none). */
    static native void answerResource(long requestId, byte[] bytes, String error);

    /** How long a class file or resource may take to come (ms). */
    static final int RESOURCE_TIMEOUT_MS = 60_000;

    /**
     * A class file or resource of {@code program} from its launcher; null if
     * it has none. {@code timeoutMs} &lt; 0: no limit (the thread manager
     * answers every request, with an error if the launcher goes away).
     *
     * @throws java.io.IOException if the launcher cannot be asked, or does not answer in time
     */
    static native byte[] fetchResource(long program, String name, int timeoutMs)
            throws java.io.IOException;

    /**
     * Sends console output of a remote thread to its program's launcher. b must be this node's
     * own array: its bytes are read as they are here.
     */
    static native void console(long program, long thread, int stream, byte[] b, int off, int len);

    /**
     * A thread server meets a program: the class loader of its classes here,
     * and what Runtime.availableProcessors() answers to its threads (the
     * thread manager's count, the same on every node of the program).
     */
    static native void registerProgram(long program, ClassLoader loader, int processors);

    /**
     * A program ended: this node stops serving it. Its class loader goes first, before its
     * threads here are stopped, so that one of them ends without dispatching its uncaught
     * exception: the handler (its thread group) went with the program.
     */
    static native void endProgram(long program);

    /**
     * Forgets an ended program (endProgram, then its threads here were stopped): its shared
     * objects, once those threads are gone. Returns what was done, for the server's log.
     */
    static native String dropProgram(long program);

    /**
     * Runs the (attached) replica of a shipped thread on this node, in the thread group its starter
     * put it in (a shared object), with the inheritable
     * thread-locals it got at construction (the shared Object[] inheritedLocals, 0 for none).
     */
    static native void startThread(Thread t, ClassLoader loader, long inheritedLocals);

    /** The program a shipped thread belongs to; 0 for a thread of this node. */
    static native long programOf(Thread t);

    public static native boolean isThreadServer();

    /** Sends ThreadDeath to a thread that runs on this VM (not the caller),
     *  reading none of its Thread's shared fields; false if it does not. */
    static native boolean stopThread(Thread t);

    /** Sets System's security manager to none, whatever the installed one would say. */
    static native void clearSecurityManager();

    /** This node's name in messages: host:pid. */
    public static native String nodeName();

    /** On a launcher: its program's default locales and time zone (a java.util.ProgramDefaults). */
    static native Object programDefaults();

    /** On a launcher: its program's CompletableFuture delay scheduler. */
    static native java.util.concurrent.ScheduledThreadPoolExecutor programDelayer();

    /** A shipped thread that could not start here ends with this reason. */
    static native void threadFailed(long program, long thread, String detail);

    /** A shipped thread ended (on the launcher; on a thread server, one it started): settles one
     *  that never ran. */
    static native void settleEnded(long thread, String detail);

    /** What a thread server asks the launcher when a thread it shipped ends, followed by the
     *  Thread's id in hex: that the launcher takes it out of its group (dso/dsoThreads.cpp). */
    static final String LEAVE_GROUP_PREFIX = "djava:leave-group:";

    /** Between {@link #LEAVE_GROUP_PREFIX} and the id: answer once the console output that came
     *  before is written (the thread printed). */
    static final String AFTER_WRITTEN = "written:";

    /** On a launcher: takes the thread it shipped out of the group it joined there; false if
     *  this launcher did not ship it. */
    static native boolean leaveGroup(long thread);

    /**
     * Answers another node's question about a thread's state (an Event.STATE_QUERY), with its
     * stack trace if {@code stack} (the event's status 1).
     */
    static native void answerThreadState(long request, long replyTo, long thread, boolean stack);

    /**
     * On a launcher: its module options (--add-opens and kin), each "KIND VALUE" with KIND one
     * of addopens, addexports, addreads, addmods, as the java launcher gave them to the VM.
     */
    static native String[] moduleOptions();

    /** Opens (or exports) package {@code pn} of {@code m} to {@code target}. */
    static native void openPackage(Module m, String pn, Module target, boolean open);

    /** Makes {@code m} read {@code target}. */
    static native void addReads(Module m, Module target);

    /** Another node unparked the thread whose shared Thread is {@code thread}
     *  (LockSupport.unpark, through the thread manager), or interrupted it. */
    static native void unpark(long thread, boolean interrupt);
}
