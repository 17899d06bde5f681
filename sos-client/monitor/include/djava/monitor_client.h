/* C ABI of the monitor client: Java monitors on shared objects, for the
 * patched JVM (HotSpot builds without exceptions and RTTI: nothing of either
 * crosses this boundary) and for test programs.
 *
 * One client per process (= per node), shared by all its Java threads; every
 * function is thread-safe. A Java thread is named cluster-wide by
 * (program, thread): its program id and a key the node gives it, unique
 * among the cluster's live threads and fixed while the thread lives (the
 * JVM's is its node number and kernel thread id, dsoMonitors.cpp).
 *
 * Blocking calls (enter, wait) can be ended from another thread with
 * djava_monitor_cancel (the JVM's way out of a blocked call, e.g. VM exit),
 * and end by themselves with DJAVA_MON_FAILED if the program fails or with
 * DJAVA_MON_IO if the monitor service goes away: they never block forever
 * because of another node's death.
 */
#ifndef DJAVA_MONITOR_CLIENT_H_
#define DJAVA_MONITOR_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct djava_monitor_client djava_monitor_client;

enum djava_monitor_status {
  DJAVA_MON_OK = 0,           /* done; for wait: notified */
  DJAVA_MON_TIMED_OUT = 1,    /* wait: timeout elapsed (monitor re-acquired) */
  DJAVA_MON_INTERRUPTED = 2,  /* wait: interrupted (monitor re-acquired): throw IE */
  DJAVA_MON_NOT_OWNER = 3,    /* IllegalMonitorStateException */
  DJAVA_MON_CANCELLED = 4,    /* djava_monitor_cancel ended the call, or a timed wait in
                                 line reached its deadline; monitor not held */
  DJAVA_MON_FAILED = 5,       /* the program failed; see djava_monitor_last_error */
  DJAVA_MON_IO = 6,           /* the monitor service is unreachable */
  DJAVA_MON_BAD_ARGUMENT = 7,
  DJAVA_MON_WAITING = 8,      /* wait_polled/wait_more: still in the wait set;
                                 enter_polled/enter_more: still queued */
  DJAVA_MON_BUSY = 9,         /* try_enter: owned or entered by another thread;
                                 nothing held, nothing queued */
  DJAVA_MON_BARRIER_LAST = 10, /* arrive: the last arrival at a barrier with an
                                  action: run it, then DJAVA_BARRIER_TRIP/BREAK */
  DJAVA_MON_BROKEN = 11       /* arrive: the barrier is broken */
};

/* The key djava_monitor_state gives the threads queued to enter. */
#define DJAVA_MON_ENTERING_KEY UINT64_MAX

/* Connects to the monitor service of every sos-server shard ("host:port",
 * comma-separated, in shard order) and authenticates with the cluster secret
 * read from `secret_file`. `sos_node` is this node's number in the first
 * shard's sos directory (djava_sos_node; 0: no cache): a monitor handed to
 * this node then brings its object's modified chunk along. On failure
 * returns NULL and writes why to err. */
djava_monitor_client* djava_monitor_connect(const char* shards, const char* secret_file,
                                            uint32_t sos_node, char* err, size_t err_len);
/* Closes the connections; calls still blocked return DJAVA_MON_IO. */
void djava_monitor_close(djava_monitor_client* c);
/* Closes the connections but keeps the client allocated: calls blocked now
 * or made later return DJAVA_MON_IO. For a process that leaves while other
 * threads may still be in the client (a JVM between leaving and halting). */
void djava_monitor_disconnect(djava_monitor_client* c);

/* djava_monitor_enter_polled with no Thread object, no timeout, no polls. */
int djava_monitor_enter(djava_monitor_client* c, uint64_t object, uint64_t program,
                        uint64_t thread);
/* monitorenter of a Java monitor (synchronized), which promises no order:
 * as djava_monitor_enter, but the service may grant it together with this
 * node's other such enters and woken Object.wait waiters queued for the
 * monitor, ahead of other nodes' requests, and the monitor then passes
 * among them in this node without a message between them (node hand-offs).
 * Not for a synchronizer's monitor, whose order is a fair lock's. */
int djava_monitor_enter_grouped(djava_monitor_client* c, uint64_t object, uint64_t program,
                                uint64_t thread);
/* monitorenter for java.util.concurrent's locks on shared objects.
 * `java_thread` is the shared id of the entering thread's Thread object (0:
 * none), which djava_monitor_state reports for the owner and for queued
 * enters. timeout_ms > 0: once that long has passed with the thread still
 * queued, the client gives the enter up itself (as djava_monitor_cancel:
 * a grant already on its way is handed back) and returns
 * DJAVA_MON_TIMED_OUT, monitor not held; 0 = no timeout. poll_ms >= 0:
 * returns DJAVA_MON_WAITING every poll_ms while still queued, so that the
 * caller can look at its interrupt status; it stays queued and continues
 * with djava_monitor_enter_more (the deadline of this call still applies)
 * or gives up with djava_monitor_cancel. poll_ms < 0: no polls. Re-entry
 * and enters under this node's lease return OK at once, with no message.
 * flags: DJAVA_MON_ENTER_BARGING for a lock that lets a thread take it
 * ahead of queued ones (a non-fair ReentrantLock): the thread's release
 * may then be kept back a moment, as a grouped enter's is (see
 * djava_monitor_set_hand_over); the service still queues it in order. */
#define DJAVA_MON_ENTER_BARGING 1u
int djava_monitor_enter_polled(djava_monitor_client* c, uint64_t object, uint64_t program,
                               uint64_t thread, uint64_t java_thread, int64_t timeout_ms,
                               int64_t poll_ms, uint32_t flags);
/* Continues an enter_polled that returned DJAVA_MON_WAITING; same results
 * (poll_ms < 0: until it ends). After djava_monitor_cancel it returns
 * DJAVA_MON_CANCELLED once (the cancelled enter's result), then, as for a
 * thread with no enter in progress, DJAVA_MON_BAD_ARGUMENT. */
int djava_monitor_enter_more(djava_monitor_client* c, uint64_t program, uint64_t thread,
                             int64_t poll_ms);
/* ReentrantLock.tryLock: DJAVA_MON_OK (held now: re-entry, this node's
 * lease with no thread here owning it, or the service granted it at once)
 * or DJAVA_MON_BUSY (owned by another thread or a lease, or someone is
 * queued: nothing is held and nothing stays queued). Decided here when the
 * node knows (re-entry; another thread here owns it; its lease, recalled
 * or not), else one round trip. Never queues, never recalls a lease. */
int djava_monitor_try_enter(djava_monitor_client* c, uint64_t object, uint64_t program,
                            uint64_t thread, uint64_t java_thread);
int djava_monitor_exit(djava_monitor_client* c, uint64_t object, uint64_t program,
                       uint64_t thread);
/* Data leaves with the release (monitor.proto, Wanted). mark(context) says
 * where the node's exclusive chunks stand (djava_sos_exclusive_mark); it is
 * asked, without blocking, as a thread here sends an enter or a wait (what
 * arrives after it, data moved with the grant included, is the tenure's).
 * Unset (the default), no release hands data over. */
void djava_monitor_set_mark_source(djava_monitor_client* c, uint64_t (*mark)(void* context),
                                   void* context);
/* What a release kept back a moment hands over when it goes (the JVM's
 * djava_sos_hand_over): given the monitor, the tenure's mark and the
 * program, write home what the tenure took and put its ids in out (at most
 * max); returns how many. Called on the client's own thread, with no lock
 * of the client held. Set, a thread that exits a monitor it enters grouped
 * (or barging) and enters it again at once, time after time, keeps it for
 * a moment after its exit (no message if it enters within it); unset (the
 * default), no release is kept back. */
void djava_monitor_set_hand_over(djava_monitor_client* c,
                                 size_t (*hand_over)(void* context, uint64_t object,
                                                     uint64_t since, uint64_t program,
                                                     uint64_t* out, size_t max),
                                 void* context);
/* 1 if the thread's next release of the monitor (its last exit; with
 * `whole`, a wait) leaves it to a thread of another node that is queued for
 * it, with no thread of this node to hand it on to: then *since is the
 * mark the tenure began at (djava_sos_hand_over's `since`). Otherwise 0. */
int djava_monitor_release_wanted(djava_monitor_client* c, uint64_t object, uint64_t program,
                                 uint64_t thread, int whole, uint64_t* since);
/* The chunks the node wrote home for the thread's coming release of the
 * monitor (djava_sos_hand_over): its Exit or Wait names them, and the
 * service grants them to the monitor's next holder with it. Copied. */
void djava_monitor_note_released(djava_monitor_client* c, uint64_t object, uint64_t program,
                                 uint64_t thread, const uint64_t* ids, size_t n);
/* Object.wait(timeout_ms); 0 = no timeout. Releases the monitor fully and
 * re-acquires it with the same re-entry count before returning OK,
 * TIMED_OUT or INTERRUPTED. */
int djava_monitor_wait(djava_monitor_client* c, uint64_t object, uint64_t program,
                       uint64_t thread, int64_t timeout_ms);
/* The same wait, returning every poll_ms (>= 0) with DJAVA_MON_WAITING while
 * the thread is still in the wait set, so that the caller can look at its
 * own state (its interrupt status, set on another node) in between; it stays
 * in the wait set, so no notification is missed meanwhile. The caller then
 * continues with djava_monitor_wait_more until another status, or ends the
 * wait with djava_monitor_cancel (or djava_monitor_interrupt of itself). */
int djava_monitor_wait_polled(djava_monitor_client* c, uint64_t object, uint64_t program,
                              uint64_t thread, int64_t timeout_ms, int64_t poll_ms);
int djava_monitor_wait_more(djava_monitor_client* c, uint64_t program, uint64_t thread,
                            int64_t poll_ms);
int djava_monitor_notify(djava_monitor_client* c, uint64_t object, uint64_t program,
                         uint64_t thread, int all);
/* Wait sets other than the object's own, on the same monitor: a wait with
 * key K != 0 is woken only by a notify or signal with key K (and by
 * interrupt and its timeout). java.util.concurrent's synchronizers on shared
 * objects use them for their acquirers and their conditions
 * (dso/dsoSynchronizers.cpp); key 0 is Object.wait's set. `java_thread` is
 * the shared id of the waiting thread's Thread object (0: none), which
 * djava_monitor_queue reports. Otherwise as djava_monitor_wait_polled (go on
 * with djava_monitor_wait_more). */
int djava_monitor_wait_keyed(djava_monitor_client* c, uint64_t object, uint64_t program,
                             uint64_t thread, uint64_t key, uint64_t java_thread,
                             int64_t timeout_ms, int64_t poll_ms);
/* The same wait for an acquirer, in the monitor's line at `place`
 * (DJAVA_MON_NEW_PLACE: a new one at the end of the line; otherwise the
 * place djava_monitor_last_place reported when its last wait ended): a
 * woken acquirer that waits again keeps its place ahead of threads that
 * started waiting after it (as an AQS queue node stays queued until its
 * thread acquires). A timed wait in line is timed by the client: at its
 * deadline it ends without the monitor (DJAVA_MON_CANCELLED) unless the
 * monitor is back by then, as one the caller ends with djava_monitor_cancel
 * does (an interrupted acquirer's). An acquirer needs the monitor back only
 * to look at the synchronizer again, and its holder may keep it long. */
#define DJAVA_MON_NEW_PLACE UINT64_MAX
int djava_monitor_wait_in_line(djava_monitor_client* c, uint64_t object, uint64_t program,
                               uint64_t thread, uint64_t key, uint64_t java_thread,
                               int64_t timeout_ms, int64_t poll_ms, uint64_t place);
/* The place in line the calling thread's last wait ended with (0: it was
 * not in line), and in *first_in_line whether no thread with an earlier
 * place was waiting or queued to re-enter when it got the monitor. */
uint64_t djava_monitor_last_place(int* first_in_line);
/* notify/notifyAll of the wait set `key` (0: Object.notify's). */
int djava_monitor_notify_keyed(djava_monitor_client* c, uint64_t object, uint64_t program,
                               uint64_t thread, uint64_t key, int all);
/* Notify (key, all) in the monitor's next free turn, without the caller
 * owning the monitor or waiting for anything: so a waiter that checked its
 * condition while owning the monitor and then waits cannot miss it. At most
 * one message; none when this node holds the monitor's lease and no thread
 * here owns it (a lease is granted only while nobody waits, and a wait
 * gives it back, so then no thread anywhere waits on it). The service may
 * leave the lease with this node afterwards. With to_key other than 0 the
 * waiters are not woken but moved to the end of wait set to_key, signalled:
 * no deadline or interrupt wakes them any more, only a notify or signal of
 * to_key (a condition's signal moving its waiters to its lock's acquirers). */
int djava_monitor_signal(djava_monitor_client* c, uint64_t object, uint64_t program,
                         uint64_t thread, uint64_t key, int all, uint64_t to_key);
/* The monitor's waiters in wait sets with a key other than 0, longest
 * waiting first: writes up to `cap` of them as (keys[i], java_threads[i])
 * and returns how many there are (possibly more than cap), or -1 with
 * djava_monitor_last_error set. A round trip to the service, except when
 * this node holds the lease (then nobody waits: 0). */
int64_t djava_monitor_queue(djava_monitor_client* c, uint64_t object, uint64_t program,
                            uint64_t thread, uint64_t* keys, uint64_t* java_threads,
                            size_t cap);
/* The monitor's owner and queues (ReentrantLock.isLocked, getQueueLength,
 * hasWaiters...), needing no ownership. *owned = 1 if a thread owns it (or
 * another node's lease holds it, whose owner is unknown here); then
 * *owner_java_thread is the owner's Thread object (0: unknown or none).
 * Then writes up to `cap` entries (keys[i], java_threads[i]), *count = how
 * many there are (possibly more than cap): first the threads queued to
 * enter (enters and woken waiters re-entering, not signals), first to be
 * served first, with key DJAVA_MON_ENTERING_KEY; then the keyed waiters as
 * djava_monitor_queue lists them. A round trip to the service, except when
 * this node holds the lease, unrecalled, and none of its threads has an
 * enter in flight (then nobody waits or is queued: answered here). Any of
 * owned, owner_java_thread and count may be NULL. */
int djava_monitor_state(djava_monitor_client* c, uint64_t object, uint64_t program,
                        uint64_t thread, int* owned, uint64_t* owner_java_thread,
                        uint64_t* keys, uint64_t* java_threads, size_t cap, int64_t* count);
/* CyclicBarrier.await at a shared barrier: `object` names the barrier at
 * the service (the JVM's is its id with the top bit flipped), `parties`
 * its parties (the same in every arrival), `command` whether it has a
 * barrier action; timed: await(timeout_ns), which breaks the barrier when
 * it passes; interrupted: the thread arrives interrupted, which breaks a
 * whole barrier (DJAVA_MON_INTERRUPTED) as dowait does. Returns
 * DJAVA_MON_OK once the barrier tripped, or
 * DJAVA_MON_BARRIER_LAST (this thread runs the action, then sends
 * djava_monitor_barrier_op TRIP, or BREAK if it threw; the parties wait
 * for it), DJAVA_MON_BROKEN, DJAVA_MON_TIMED_OUT, DJAVA_MON_INTERRUPTED
 * (the barrier is broken now); djava_monitor_barrier_index then gives the
 * arrival's index (parties - 1 for the first, 0 for the last). poll_ms >=
 * 0: DJAVA_MON_WAITING every poll_ms while waiting, as for
 * djava_monitor_wait_keyed (go on with djava_monitor_wait_more; an
 * interrupt through djava_monitor_interrupt, and djava_monitor_cancel,
 * break the barrier). One message; the trip wakes every party at once. */
int djava_monitor_arrive(djava_monitor_client* c, uint64_t object, uint64_t program,
                         uint64_t thread, uint32_t parties, int command, int timed,
                         uint64_t timeout_ns, int interrupted, uint64_t java_thread,
                         int64_t poll_ms);
/* The arrival index of the calling thread's last djava_monitor_arrive. */
uint32_t djava_monitor_barrier_index(void);
#define DJAVA_BARRIER_TRIP 1   /* the last arrival's action ran: wake the parties */
#define DJAVA_BARRIER_BREAK 2  /* break it (the action threw; an interrupted arrival) */
#define DJAVA_BARRIER_RESET 3  /* CyclicBarrier.reset() */
#define DJAVA_BARRIER_QUERY 4  /* isBroken(), getNumberWaiting() */
/* A barrier op, one round trip (longer while another thread's action
 * runs: ops wait for it, as for the barrier's lock in Java). Then *broken
 * and *waiting (either may be NULL) are the barrier's state after it. */
int djava_monitor_barrier_op(djava_monitor_client* c, uint64_t object, uint64_t program,
                             uint64_t thread, int op, int* broken, uint32_t* waiting);
/* Thread.interrupt() of (program, thread): if it waits on a shared monitor it
 * leaves the wait set and its wait returns INTERRUPTED. */
int djava_monitor_interrupt(djava_monitor_client* c, uint64_t program, uint64_t thread);
/* What the thread `thread` (a key, of any program) looks at between polls
 * changed (its interrupt status): its polled enter, wait or arrive returns
 * DJAVA_MON_WAITING now instead of at the poll's end, still queued; if it
 * is between two polls, or about to make its first, that one returns at
 * once. Never blocks, sends nothing; callable from any thread. */
void djava_monitor_poke(djava_monitor_client* c, uint64_t thread);
/* Ends a blocked enter/wait (also one between polls) of a local thread
 * with DJAVA_MON_CANCELLED. */
int djava_monitor_cancel(djava_monitor_client* c, uint64_t program, uint64_t thread);
/* The program ended: free its monitors everywhere. */
int djava_monitor_free_program(djava_monitor_client* c, uint64_t program);
/* One request/response round trip to shard 0 (benchmarks, liveness). */
int djava_monitor_ping(djava_monitor_client* c);
/* What the client sent to the service and received from it, by kind:
 * "sent enter 12, exit 9; received granted 12" (monitor.proto's names),
 * into out (at most max bytes with the NUL; NULL/0: only the length).
 * Returns the text's length. */
size_t djava_monitor_traffic(djava_monitor_client* c, char* out, size_t max);
/* Re-entry count of the thread on the object (0: not owner). */
int djava_monitor_count(djava_monitor_client* c, uint64_t object, uint64_t program,
                        uint64_t thread);
/* The message of the calling thread's last non-OK status. */
const char* djava_monitor_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DJAVA_MONITOR_CLIENT_H_ */
