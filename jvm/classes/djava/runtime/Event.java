/*
 * djava: an event from the thread manager (thread-manager/include/djava/
 * tm_client.h, djava_tm_event), as the VM's Node.nextEvent hands it over.
 */
package djava.runtime;

final class Event {
    static final int ASSIGN = 1;
    static final int STATE = 2;
    static final int PROGRAM_FAILED = 3;
    static final int DROP_PROGRAM = 4;
    static final int ERROR = 5;
    static final int DISCONNECTED = 6;
    static final int RESOURCE_REQUEST = 7;
    static final int CONSOLE = 8;
    static final int EXIT = 9;
    static final int STATISTICS_REQUEST = 10;
    static final int UNPARK = 11;
    static final int STATE_QUERY = 12;

    // STATE: the thread states of tm_client.h (djava_tm_thread_state).
    static final int THREAD_ENDED = 3;
    static final int THREAD_ENDED_BY_EXCEPTION = 4;

    static final int STREAM_OUT = 1;
    static final int STREAM_ERR = 2;
    /** The launcher's own standard output and error (StandardStreams), whatever System.out is now. */
    static final int STREAM_STDOUT = 3;
    static final int STREAM_STDERR = 4;

    /** Whether stream is the launcher's own stdout or stderr, not the program's System.out or err. */
    static boolean isLaunchersOwn(int stream) {
        return stream == STREAM_STDOUT || stream == STREAM_STDERR;
    }

    final int kind;
    final long program;
    final long thread;
    final int state;
    final long serverId;
    final int liveNonDaemon;
    final long requestId;
    final int stream;
    /** EXIT: the exit status; UNPARK: 1 for an interrupt; STATE_QUERY: 1 if the stack is wanted. */
    final int status;
    final String serverName;
    final String detail;
    final String classpath;
    final String launchNode;
    /** RESOURCE_REQUEST: the name (UTF-8); CONSOLE: the bytes. */
    final byte[] data;
    /** ASSIGN: what availableProcessors() answers in the program. */
    final int processors;
    /** ASSIGN: the shared Object[] of the thread's inheritable thread-locals, or 0. */
    final long inheritedLocals;
    /** STATE_QUERY: the asker, for the answer. */
    final long replyTo;

    Event(int kind, long program, long thread, int state, long serverId, int liveNonDaemon,
          long requestId, int stream, int status, String serverName, String detail,
          String classpath, String launchNode, byte[] data, int processors, long inheritedLocals,
          long replyTo) {
        this.kind = kind;
        this.program = program;
        this.thread = thread;
        this.state = state;
        this.serverId = serverId;
        this.liveNonDaemon = liveNonDaemon;
        this.requestId = requestId;
        this.stream = stream;
        this.status = status;
        this.serverName = serverName;
        this.detail = detail;
        this.classpath = classpath;
        this.launchNode = launchNode;
        this.data = data;
        this.processors = processors;
        this.inheritedLocals = inheritedLocals;
        this.replyTo = replyTo;
    }
}
