/* C ABI of the thread-manager client, for the patched JVM (launcher and
 * thread-server roles) and for test programs. Thread-safe. HotSpot builds
 * without exceptions and RTTI: nothing of either crosses this boundary.
 *
 * Launcher:      connect, register_program, submit (Thread.start),
 *                watch / wait_thread (join, isAlive), next_event (state
 *                changes, PROGRAM_FAILED, RESOURCE_REQUEST -> answer_resource,
 *                CONSOLE, EXIT -> end the program), gather_statistics,
 *                program_end (or just close).
 * Thread server: connect, register_server (heartbeats are then sent by a
 *                background thread), next_event (ASSIGN = dt_get_thread,
 *                DROP_PROGRAM, STATISTICS_REQUEST -> answer_statistics),
 *                thread_ended.
 * Any node:      submit / watch for any registered program; fetch_resource
 *                (class files), console (System.out/err), program_exit
 *                (System.exit) for the program's launcher; unpark of a
 *                thread another node runs (UNPARK there).
 */
#ifndef DJAVA_TM_CLIENT_H_
#define DJAVA_TM_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct djava_tm_client djava_tm_client;

enum djava_tm_event_kind {
  DJAVA_TM_EV_ASSIGN = 1,          /* to a server: run (program, thread) */
  DJAVA_TM_EV_STATE = 2,           /* a thread's state changed */
  DJAVA_TM_EV_PROGRAM_FAILED = 3,  /* the program cannot continue; detail says why */
  DJAVA_TM_EV_DROP_PROGRAM = 4,    /* to a server: forget the program */
  DJAVA_TM_EV_ERROR = 5,           /* the manager rejected a request; detail says why */
  DJAVA_TM_EV_DISCONNECTED = 6,    /* the manager is gone; detail says why */
  /* To the launcher: a node wants resource `data` (the name; also in detail,
   * truncated) of `program`. Answer with djava_tm_answer_resource(request_id). */
  DJAVA_TM_EV_RESOURCE_REQUEST = 7,
  /* To the launcher: `data` was written by `thread` of `program` on `stream`
   * (a djava_tm_stream); in order per sending node. */
  DJAVA_TM_EV_CONSOLE = 8,
  /* To the launcher: System.exit(`status`) was called somewhere in `program`
   * (detail: where). The first one only. The launcher ends the program. */
  DJAVA_TM_EV_EXIT = 9,
  /* To a thread server: the launcher of `program` wants this node's
   * statistics of it. Answer with djava_tm_answer_statistics(request_id). */
  DJAVA_TM_EV_STATISTICS_REQUEST = 10,
  /* To the node running `thread` of `program`: another node unparked it
   * (LockSupport.unpark; djava_tm_unpark), or interrupted it (`status` 1:
   * Thread.interrupt, which ends a sleep too). */
  DJAVA_TM_EV_UNPARK = 11,
  /* To the node running `thread` of `program`: another node asks its state
   * (Thread.getState). Answer with djava_tm_answer_thread_state(request_id,
   * reply_to, the thread's threadStatus here, or -1 if it does not run here).
   * `status` 1: its stack trace is wanted too (Thread.getStackTrace): answer
   * with djava_tm_answer_thread_stack instead. */
  DJAVA_TM_EV_STATE_QUERY = 12
};

/* OUT and ERR: the program's System.out and System.err, whatever the
 * launcher's System.out and err are now (a program may have replaced them);
 * STDOUT and STDERR: the launcher's own standard output and error, the
 * streams its System.out and err were when it started (a program kept one
 * before replacing System.out). */
enum djava_tm_stream {
  DJAVA_TM_STREAM_OUT = 1,
  DJAVA_TM_STREAM_ERR = 2,
  DJAVA_TM_STREAM_STDOUT = 3,
  DJAVA_TM_STREAM_STDERR = 4
};

/* Results of djava_tm_fetch_resource. */
enum djava_tm_fetch_result {
  DJAVA_TM_FETCH_FOUND = 0,      /* *out holds the resource */
  DJAVA_TM_FETCH_NOT_FOUND = 1,  /* the launcher has no such resource */
  DJAVA_TM_FETCH_ERROR = -1,     /* unknown or ended program, launcher gone, too large,
                                    unreadable, connection lost: djava_tm_last_error */
  DJAVA_TM_FETCH_TIMEOUT = -2    /* no answer within the timeout */
};

/* The largest resource that travels in one answer: the wire's 16 MiB frame
 * limit less 64 KiB for the rest of the message. */
#define DJAVA_TM_MAX_RESOURCE_BYTES ((size_t)((16u << 20) - (64u << 10)))

/* The longest statistics text of one server that travels; the manager cuts
 * a longer one (and says so in it). */
#define DJAVA_TM_MAX_STATISTICS_BYTES ((size_t)1 << 20)

/* Bytes allocated by the library (malloc). `data` is followed by one NUL
 * byte not counted in `len`, so that names and text are C strings too.
 * The receiver owns them and frees them with djava_tm_buffer_free. */
typedef struct djava_tm_buffer {
  uint8_t* data;
  size_t len;
} djava_tm_buffer;

enum djava_tm_thread_state {
  DJAVA_TM_QUEUED = 1,
  DJAVA_TM_RUNNING = 2,
  DJAVA_TM_ENDED = 3,
  DJAVA_TM_ENDED_BY_EXCEPTION = 4,
  DJAVA_TM_FAILED = 5
};

typedef struct djava_tm_event {
  int kind;
  uint64_t program;
  uint64_t thread;
  int state;                  /* DJAVA_TM_EV_STATE */
  uint64_t server_id;
  uint32_t live_non_daemon;   /* DJAVA_TM_EV_STATE: the program's unended non-daemon threads */
  char server_name[256];
  char detail[1024];          /* exception, failure reason, error (truncated) */
  char classpath[4096];       /* DJAVA_TM_EV_ASSIGN */
  char launch_node[256];      /* DJAVA_TM_EV_ASSIGN */
  /* (fields below were added with the resource, console and exit relays) */
  uint64_t request_id;        /* DJAVA_TM_EV_RESOURCE_REQUEST, _STATISTICS_REQUEST */
  int stream;                 /* DJAVA_TM_EV_CONSOLE */
  int status;                 /* DJAVA_TM_EV_EXIT: the exit status; _STATE_QUERY: 1 if the
                                 stack trace is wanted */
  /* RESOURCE_REQUEST: the resource name; CONSOLE: the bytes; else empty
   * ({NULL, 0}). Owned by the caller of djava_tm_next_event, who frees it
   * with djava_tm_buffer_free (always safe to call). */
  djava_tm_buffer data;
  /* DJAVA_TM_EV_ASSIGN: what Runtime.availableProcessors() answers in the
   * program (djava_tm_register_program_sized). */
  uint32_t processors;
  /* DJAVA_TM_EV_ASSIGN: the shared id of the thread's inheritable
   * thread-locals, an Object[] {key, value, ...}; 0 for none. */
  uint64_t inherited_locals;
  /* DJAVA_TM_EV_STATE_QUERY: the asker, for djava_tm_answer_thread_state. */
  uint64_t reply_to;
} djava_tm_event;

/* Connects to the thread manager at "host:port" and authenticates with the
 * cluster secret in `secret_file`. NULL on failure, with why in err. */
djava_tm_client* djava_tm_connect(const char* host_port, const char* secret_file, char* err,
                                  size_t err_len);
/* Closes the connection (for a launcher: its programs end). */
void djava_tm_close(djava_tm_client* c);

/* Each returns 0 or -1 (see djava_tm_last_error). Register calls wait for
 * the manager's answer. */
int djava_tm_register_program(djava_tm_client* c, uint64_t program, const char* launch_node,
                              const char* classpath);
/* As djava_tm_register_program, and fixes the program's processor count,
 * the same on every node for its life: `processors` if not 0 (an override),
 * else the capacities of the thread servers registered now added up, else
 * (none yet) `launcher_processors`. *program_processors (if not NULL) gets
 * it; thread servers get it with each ASSIGN. */
int djava_tm_register_program_sized(djava_tm_client* c, uint64_t program,
                                    const char* launch_node, const char* classpath,
                                    uint32_t processors, uint32_t launcher_processors,
                                    uint32_t* program_processors);
int djava_tm_register_server(djava_tm_client* c, const char* name, uint32_t capacity,
                             uint64_t* server_id);
/* Comma-separated sos-server addresses learnt at registration. */
int djava_tm_sos_servers(djava_tm_client* c, char* buf, size_t len);
int djava_tm_submit(djava_tm_client* c, uint64_t program, uint64_t thread, int daemon,
                    uint64_t inherited_locals);
int djava_tm_watch(djava_tm_client* c, uint64_t program, uint64_t thread);
int djava_tm_thread_ended(djava_tm_client* c, uint64_t program, uint64_t thread,
                          int by_exception, const char* detail);
int djava_tm_program_end(djava_tm_client* c, uint64_t program, const char* reason);

/* Next event: 1 = *ev filled, 0 = timeout, -1 = disconnected and drained.
 * timeout_ms < 0 waits forever. */
int djava_tm_next_event(djava_tm_client* c, djava_tm_event* ev, int64_t timeout_ms);
/* Last known state of a thread (from events seen by this client), or 0. */
int djava_tm_thread_state(djava_tm_client* c, uint64_t program, uint64_t thread);
/* join(): watches the thread and waits until it ended, failed, or its
 * program failed. Returns the final state, 0 on timeout, -1 if disconnected. */
int djava_tm_wait_thread(djava_tm_client* c, uint64_t program, uint64_t thread,
                         int64_t timeout_ms);
/* ---- relays (any node <-> the program's launcher) ---- */

/* Fetches resource `name` (e.g. "pkg/Foo.class") of `program` from its
 * launcher. Blocks until the answer, at most timeout_ms (< 0: no limit; the
 * manager answers every request, with an error if the launcher goes away).
 * Thread-safe: any number may be outstanding. Returns a
 * djava_tm_fetch_result; on DJAVA_TM_FETCH_FOUND *out holds the bytes (the
 * caller frees them with djava_tm_buffer_free), otherwise *out is {NULL, 0}
 * and djava_tm_last_error says why. */
int djava_tm_fetch_resource(djava_tm_client* c, uint64_t program, const char* name,
                            int64_t timeout_ms, djava_tm_buffer* out);
/* Launcher: answers DJAVA_TM_EV_RESOURCE_REQUEST `request_id`. found != 0:
 * `bytes`/`len` is the resource (copied; len may be 0). found == 0 with
 * error NULL or "": no such resource; with an error text: it could not be
 * read. A resource larger than DJAVA_TM_MAX_RESOURCE_BYTES is answered as an
 * error naming it, and the call returns -1 saying so. */
int djava_tm_answer_resource(djava_tm_client* c, uint64_t request_id, int found,
                             const void* bytes, size_t len, const char* error);
/* Sends console output (a djava_tm_stream) of `thread` to
 * the launcher of `program`. Does not wait for any answer (it blocks only
 * while the connection's send buffer is full); the launcher gets the bytes
 * of one client in the order sent, large writes split in pieces. Output
 * for an unknown program is dropped by the manager (and logged there). */
int djava_tm_console(djava_tm_client* c, uint64_t program, uint64_t thread, int stream,
                     const void* bytes, size_t len);
/* System.exit(status) on this node: the launcher of `program` gets
 * DJAVA_TM_EV_EXIT (the first exit of a program only) and ends it. */
int djava_tm_program_exit(djava_tm_client* c, uint64_t program, int32_t status,
                          const char* detail);
/* LockSupport.unpark of `thread` (its shared Thread's id) of `program`,
 * which runs on another node, or with `interrupt` nonzero the wake-up of
 * Thread.interrupt (whose flag is shared): the manager passes it to the
 * node running it (DJAVA_TM_EV_UNPARK), or to the launcher for a thread it
 * never placed; nothing happens for a thread queued or ended. Does not wait
 * for any answer. */
int djava_tm_unpark(djava_tm_client* c, uint64_t program, uint64_t thread, int interrupt);
/* Thread.getState of `thread` of `program`, which another node runs: the
 * manager asks that node (DJAVA_TM_EV_STATE_QUERY) and *status gets its
 * answer, java.lang.Thread's threadStatus there (-1: it does not run there,
 * or nowhere). Blocks at most timeout_ms; returns 0, or -1 without an answer
 * (see djava_tm_last_error). */
int djava_tm_query_thread_state(djava_tm_client* c, uint64_t program, uint64_t thread,
                                int64_t timeout_ms, int32_t* status);
/* The node running a thread answers a DJAVA_TM_EV_STATE_QUERY. */
int djava_tm_answer_thread_state(djava_tm_client* c, uint64_t request, uint64_t reply_to,
                                 int32_t status);
/* Thread.getStackTrace of `thread` of `program`, which another node runs:
 * as djava_tm_query_thread_state, and *stack gets the thread's frames there
 * (the text dso/dsoThrowables.hpp writes for a throwable's frames; empty if
 * it runs nowhere), freed with djava_tm_buffer_free. */
int djava_tm_query_thread_stack(djava_tm_client* c, uint64_t program, uint64_t thread,
                                int64_t timeout_ms, int32_t* status, djava_tm_buffer* stack);
/* The node running a thread answers a DJAVA_TM_EV_STATE_QUERY whose status
 * asked for the stack: `stack`/`len` are its frames (copied). */
int djava_tm_answer_thread_stack(djava_tm_client* c, uint64_t request, uint64_t reply_to,
                                 int32_t status, const void* stack, size_t len);
/* Launcher: the statistics (-XX:+PrintDistributedStatistics) of `program`
 * from every thread server that ran threads of it. Blocks at most
 * timeout_ms (< 0: no limit; the manager answers within its own limit of
 * 3 s even when a server does not). Returns 0 with *out holding the
 * servers' texts one after the other, ordered by server name; a server
 * with none adds the line "djava statistics of thread server 'NAME': none
 * (why)". *out is empty if no server ran the program's threads. -1 on
 * error or timeout (djava_tm_last_error), *out then {NULL, 0}. */
int djava_tm_gather_statistics(djava_tm_client* c, uint64_t program, int64_t timeout_ms,
                               djava_tm_buffer* out);
/* Thread server: answers DJAVA_TM_EV_STATISTICS_REQUEST `request_id` with
 * `len` bytes of `text`. */
int djava_tm_answer_statistics(djava_tm_client* c, uint64_t request_id, const char* text,
                               size_t len);
/* Frees b->data (allocated by this library) and empties *b. NULL-safe. */
void djava_tm_buffer_free(djava_tm_buffer* b);

/* Tests only: stop/resume the server's heartbeats (simulate a hung node). */
void djava_tm_pause_heartbeats(djava_tm_client* c, int paused);

const char* djava_tm_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DJAVA_TM_CLIENT_H_ */
