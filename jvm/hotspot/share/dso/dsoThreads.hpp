/*
 * djava: Java threads of a distributed program.
 *
 * Thread.start() of an application thread on a cluster node ships the
 * thread: its Thread object becomes shared and the thread manager places it
 * on a thread server, which materializes the same Thread object and runs
 * it there; Thread.currentThread() is that object on every node. Threads
 * the JDK starts for itself (the system thread group, InnocuousThread) and
 * djava's own stay local.
 *
 * A Thread's fields are shared except those that describe it on one node
 * (its thread group and context class loader there, thread-locals, state,
 * blockers): the marshalling leaves those alone (is_node_local_field).
 * eetop, HotSpot's pointer to the native thread, stays shared as "alive":
 * the launcher sets it to 1 when it ships the thread, the server writes its
 * own pointer when the thread starts and zero when it ends, both under a
 * write access, so isAlive() (eetop != 0) and join() work from any node.
 * On the wire a live thread's eetop is 1, never a pointer (another VM may
 * have a thread of its own at that address, which interrupt() or unpark()
 * there would then reach), and the node running the thread keeps its own.
 */

#ifndef SHARE_DSO_DSOTHREADS_HPP
#define SHARE_DSO_DSOTHREADS_HPP

#include "jni.h"
#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "runtime/handles.hpp"
#include "utilities/exceptions.hpp"

class JavaThread;
class stringStream;
class Klass;

class DsoThreads : AllStatic {
 public:
  // After the node joined: where Thread's node-local fields are.
  static void initialize();

  // JVM_StartThread: ships the thread if it belongs to the program and
  // reaches nothing that cannot be shared (else it runs here). True if it
  // was shipped, or failed with an exception pending.
  static bool ship(JavaThread* current, jobject jthread);

  // On a thread server: runs the replica of a shipped thread here (in the
  // shared thread group its starter put it in), with the context class
  // loader given, and the
  // inheritable thread-locals of the shared snapshot inherited_locals (0:
  // none; dsoInheritedLocals.hpp).
  static void start_shipped(JavaThread* current, Handle thread, Handle loader,
                            uint64_t inherited_locals, TRAPS);

  // JavaThread::exit, before Thread.exit(): whether an exception ended it.
  // False if its uncaught exception must not be dispatched: the thread's
  // program ended on this thread server, which stopped the thread.
  static bool thread_exiting(JavaThread* thread, oop uncaught_exception);
  // On the launcher: takes the shipped thread `id` out of the group it kept
  // for it when it shipped it, as the thread's Thread.exit() would have
  // where it ran. False if it kept none (a thread another node started).
  static bool leave_kept_group(JavaThread* current, uint64_t id);
  // ensure_join, before the joiners are notified: a shipped thread's end
  // becomes visible everywhere and the thread manager learns of it.
  static void thread_ended(JavaThread* thread, Handle thread_obj);
  // ensure_join for a shipped thread on its thread server: all of it but
  // the hold of the Thread's monitor, whose waiters a signal at the monitor
  // service wakes. False (nothing done) for any other thread.
  static bool end_without_monitor(JavaThread* thread, Handle thread_obj);
  // The calling thread sent output to its program's System.out or err,
  // which reaches the launcher through the thread manager: its end waits
  // until the launcher wrote it (thread_ended).
  static void console_sent();
  // When the thread manager reports that a shipped thread ended (to the
  // launcher, and to the thread server that started it): if it never ran
  // (a server could not start it: its alive marker, eetop, was never
  // cleared), it is made dead, its joiners are woken and the launcher says
  // why on stderr, and its thread group lets it go. A thread that ran has
  // done all that itself. The launcher makes a replica of a thread it never
  // saw; where it cannot (its class exists only where it was started), the
  // starting server settles it.
  static void settle_never_ran(JavaThread* current, uint64_t id, const char* detail);

  // Thread.getState of a thread another node runs reads Thread.threadStatus,
  // a node-local field: the interpreter's read of it on a shared Thread
  // (offset thread_status_offset) asks that node first (through the thread
  // manager, bounded), so the state is the running node's. Leaves the
  // (possibly moved) object in vm_result. In VM state (the interpreters
  // call it through DsoInterpreter).
  static int thread_status_offset() { return _thread_status_offset; }
  static const int* thread_status_offset_addr() { return &_thread_status_offset; }
  static void refresh_remote_state(JavaThread* current, oopDesc* obj);
  // The answer to such a question here: threadStatus of the thread with
  // shared id `id` if it runs on this node, else -1.
  static int32_t local_status(JavaThread* current, uint64_t id);

  // Thread.getStackTrace and getAllStackTraces across nodes: a thread's
  // frames are where it runs. JVM_DumpThreads (patches/0029) asks the node
  // running each thread of `threads` that runs elsewhere for its frames
  // (a state query that wants the stack, through the thread manager,
  // bounded) and puts them in `traces`, made as a throwable's frames are on
  // arrival (DsoThrowables); a thread that runs nowhere keeps its null.
  static void add_remote_stack_traces(JavaThread* current, objArrayHandle threads,
                                      objArrayHandle traces, TRAPS);
  // JVM_GetAllThreads: `local`, this node's live threads, as the calling
  // thread's program sees them: on a thread server without the other
  // programs' threads, and with the program's threads that run on other
  // nodes (its thread groups, shared objects, list them).
  static objArrayOop program_threads(JavaThread* current, objArrayHandle local, TRAPS);
  // The answer to a stack query here: as local_status, and the frames of
  // the thread in *frames if it runs here (taken in a handshake with it).
  static int32_t local_stack_trace(JavaThread* current, uint64_t id, stringStream* frames);

  // Threads::destroy_vm on the launching node: main and every local
  // non-daemon thread have ended; wait for the program's remote ones.
  static void await_remote_threads(JavaThread* current);
  // The launcher's event pump saw the program's count of live non-daemon
  // threads.
  static void note_live_non_daemon(uint64_t program, uint32_t count);

  // Shutdown.beforeHalt (System.exit, Runtime.halt) on a thread server, in
  // a shipped thread: the program ends with that status, everywhere; the
  // server does not. Throws ThreadDeath to end the calling thread.
  static void before_halt(JavaThread* current, TRAPS);

  // Whether a Thread is the program's (it ships) rather than one the JDK
  // or djava started for the node's own work.
  static bool belongs_to_program(oop thread);
  // How long a program's thread may block before it looks again at state
  // another node may have changed (its park permit, its interrupt status).
  static const jlong poll_interval_ms = 50;

  // Unsafe.park of a program's thread on a cluster node: at most a poll
  // interval. An unpark from another node comes through the thread manager
  // (unpark_elsewhere, unpark_here); the bound is there for one lost with a
  // node, and for park's callers, which re-check their condition.
  static void bound_park(JavaThread* current, jboolean* is_absolute, jlong* time);
  // Unsafe.unpark of a shared Thread that does not run on this node: sent
  // to the node that runs it, through the thread manager; true if so (the
  // caller then does nothing more), false for a thread of this node.
  // With `interrupt`, for Thread.interrupt (the flag itself is the shared
  // Thread's field): a sleep or monitor wait there ends too.
  static bool unpark_elsewhere(JavaThread* current, oop thread_obj, bool interrupt);
  // Another node unparked (or interrupted) the thread whose shared Thread is
  // `id`: if it runs here, its park returns (or its next one does).
  static void unpark_here(JavaThread* current, uint64_t id, bool interrupt);
  // A thread server stops a thread of a program that ended (Thread.stop's
  // ThreadDeath, as JVM_StopThread sends it) without reading the Thread
  // object's shared fields, which may be gone with the program's launcher;
  // false if the thread does not run here.
  static bool stop_here(JavaThread* current, Handle thread_obj);
  // Unparks this node sent to threads elsewhere, and received for its own
  // threads (PrintDistributedStatistics).
  static uint64_t unparks_sent_count();
  static uint64_t unparks_received_count();
  // How long Thread.sleep may park before it reads its interrupt status
  // again (patches/0014): a poll interval when another node can interrupt
  // the thread (its Thread object is shared), else all of millis.
  static jlong sleep_slice(JavaThread* current, jlong millis);
  // Whether a Thread object's native thread (eetop) is one of this VM's: a
  // shipped thread's eetop may name another node's.
  static bool runs_here(oop thread_obj);
  // The JavaThread behind a Thread object if it runs on this VM, else NULL
  // (not started, ended, or alive on another node). For the VM's own walks
  // from a java.util.concurrent lock to its owner at a safepoint (deadlock
  // detection, thread dumps: patches/0016), which follow eetop without a
  // ThreadsList check and would take another node's "alive" for a thread.
  static JavaThread* thread_here_at_safepoint(oop thread_obj);
  // The thread's interrupt status, read (and cleared) coherently when its
  // Thread object is shared: another node may have set it.
  static bool is_interrupted(JavaThread* current, bool clear);
  // JavaThread::interrupt of `target`, which runs here (patches/0037): a
  // wait, enter or barrier arrival of it at the monitor service looks at its
  // interrupt status now rather than at its next poll, and sends the
  // interrupt there. Takes no lock of the VM, never blocks.
  static void interrupted(JavaThread* target);

  // How many threads this node shipped, and how many program threads it
  // started here because they reach what cannot be shared
  // (PrintDistributedStatistics).
  static size_t shipped_count();
  static size_t kept_local_count();
  // The program a shipped thread belongs to; 0 for a node-local thread.
  static uint64_t program_of(oop thread_obj);
  // The program whose console, properties and exit a thread here uses: as
  // program_of, and for a thread that a shipped thread started on a thread
  // server and that stays there (it reaches what cannot be shared), the
  // program of its thread group. Such a thread is not the thread manager's
  // (it never placed it), so program_of stays 0 for it.
  static uint64_t program_served(oop thread_obj);
  // The program objects made by the current thread belong to.
  static uint64_t current_program(JavaThread* current);
  // Waits up to timeout_ms for the program's threads on this node to end
  // (a program that ended: its threads were stopped); returns how many
  // still run.
  static int await_program_threads(JavaThread* current, uint64_t program, jlong timeout_ms);

  // A Thread replica just installed, of a thread that does not run here:
  // its node-local status (what getState() reads) follows what the shared
  // fields say: RUNNABLE while it lives elsewhere, TERMINATED once it ended.
  // The node it runs on keeps the exact status.
  static void refresh_status_of_remote(oop thread_obj);
  // A Thread's eetop on the wire: 1 in place of a pointer (see above).
  // block holds the fields from byte offset base of the object.
  static void eetop_to_wire(oop thread_obj, u1* block, int base);
  // Whether installing bytes into this Thread replica must keep its eetop
  // (this VM runs the thread); then *offset is where eetop is.
  static bool keeps_eetop(oop thread_obj, int* offset);

  // A Thread replica made here: the node-local fields Thread's own methods
  // need whatever node calls them (blockerLock, which interrupt() locks).
  static void init_node_local_fields(JavaThread* current, Handle thread, TRAPS);

  // Whether the field at offset of an instance of k describes its object
  // on one node only (it neither leaves nor is overwritten).
  static bool is_node_local_field(Klass* k, int offset, int* size);
 private:
  static int _thread_status_offset;
};

#endif // SHARE_DSO_DSOTHREADS_HPP
