/* C ABI of the thread-manager client, for the patched JVM (launcher and
 * thread-server roles) and for test programs. Thread-safe. HotSpot builds
 * without exceptions and RTTI: nothing of either crosses this boundary.
 *
 * Launcher:      connect, register_program, submit (Thread.start),
 *                watch / wait_thread (join, isAlive), next_event (state
 *                changes, PROGRAM_FAILED), program_end (or just close).
 * Thread server: connect, register_server (heartbeats are then sent by a
 *                background thread), next_event (ASSIGN = dt_get_thread,
 *                DROP_PROGRAM), thread_ended.
 * Any node:      submit / watch for any registered program.
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
  DJAVA_TM_EV_DISCONNECTED = 6     /* the manager is gone; detail says why */
};

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
} djava_tm_event;

/* Connects to the thread manager at "host:port" and authenticates with the
 * cluster secret in `secret_file`. NULL on failure, with why in err. */
/* NOT YET DEFINED: waits for thread-manager/src/wire_adapter.cc on proto/wire; until then
 * only the in-process channels of the tests reach the service. */
djava_tm_client* djava_tm_connect(const char* host_port, const char* secret_file, char* err,
                                  size_t err_len);
/* Closes the connection (for a launcher: its programs end). */
void djava_tm_close(djava_tm_client* c);

/* Each returns 0 or -1 (see djava_tm_last_error). Register calls wait for
 * the manager's answer. */
int djava_tm_register_program(djava_tm_client* c, uint64_t program, const char* launch_node,
                              const char* classpath);
int djava_tm_register_server(djava_tm_client* c, const char* name, uint32_t capacity,
                             uint64_t* server_id);
/* Comma-separated sos-server addresses learnt at registration. */
int djava_tm_sos_servers(djava_tm_client* c, char* buf, size_t len);
int djava_tm_submit(djava_tm_client* c, uint64_t program, uint64_t thread, int daemon);
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
/* Tests only: stop/resume the server's heartbeats (simulate a hung node). */
void djava_tm_pause_heartbeats(djava_tm_client* c, int paused);

const char* djava_tm_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DJAVA_TM_CLIENT_H_ */
