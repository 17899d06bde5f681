/*
 * djava: Java monitors on shared objects (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoMonitors.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "runtime/atomic.hpp"
#include "runtime/basicLock.hpp"
#include "dso/dsoThreads.hpp"
#include "logging/log.hpp"
#include "memory/resourceArea.hpp"
#include "oops/oop.inline.hpp"
#include "code/nmethod.hpp"
#include "runtime/frame.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/objectMonitor.inline.hpp"
#include "runtime/synchronizer.hpp"
#include "runtime/threadSMR.hpp"
#include "runtime/os.inline.hpp"
#include "runtime/osThread.hpp"
#include "runtime/thread.inline.hpp"
#include "services/threadService.hpp"
#include "utilities/exceptions.hpp"

djava_monitor_client* DsoMonitors::_client = NULL;

uint64_t DsoMonitors::thread_key(JavaThread* thread) {
  // The thread's name in the monitor service: this node and the thread's
  // kernel id, unique among the node's live threads, in a range no object id
  // uses (the top bit). It must not change while the thread holds a monitor,
  // so it does not depend on whether the thread's Thread object is shared
  // (a shipped thread's closure may publish its starter's Thread, as a
  // lambda capturing Thread.currentThread() does). A thread runs on one node
  // only, so no other node ever needs its key.
  uint64_t tid = (uint64_t)thread->osthread()->thread_id();
  return (UCONST64(1) << 63) | ((uint64_t)DsoNode::node_number() << 32) | (tid & 0xffffffff);
}

void DsoMonitors::throw_for(JavaThread* current, int status, const char* what, oop obj, TRAPS) {
  DsoNode::stop_if_left(current);
  ResourceMark rm(current);
  const char* why = DsoNode::lib().djava_monitor_last_error();
  if (status == DJAVA_MON_IO) {
    DsoNode::cluster_lost(current, why);
  }
  switch (status) {
    case DJAVA_MON_NOT_OWNER:
      THROW_MSG(vmSymbols::java_lang_IllegalMonitorStateException(), "current thread is not owner");
    case DJAVA_MON_BAD_ARGUMENT:
      THROW_MSG(vmSymbols::java_lang_IllegalArgumentException(), why);
    default:
      THROW_MSG(vmSymbols::java_lang_InternalError(),
                err_msg("djava: %s the monitor of shared object " UINT64_FORMAT_X " (%s): %s",
                        what, DsoHeap::id_of(obj), obj->klass()->external_name(), why));
  }
}

int DsoMonitors::enter_index(JavaThread* current, uint index) {
  DsoReplica* e = DsoReplicaTable::entry(index);
  uint64_t id = e->_global_id;
  uint64_t program = DsoThreads::current_program(current);
  uint64_t key = thread_key(current);
  int status;
  jlong start = os::javaTimeNanos();
  {
    // Waiting for the service's grant is waiting for the monitor:
    // Thread.getState says BLOCKED meanwhile (a leased re-enter is local
    // and short).
    JavaThreadStatusChanger blocked(current, JavaThreadStatus::BLOCKED_ON_MONITOR_ENTER);
    ThreadToNativeFromVM in_native(current);
    // A Java monitor promises no order: this node's threads queued for it
    // may be granted it together and hand it on here (node hand-offs).
    status = DsoNode::lib().djava_monitor_enter_grouped(_client, id, program, key);
  }
  Atomic::inc(&e->_lock_enters);
  Atomic::add(&e->_lock_wait_ns, (uint64_t)(os::javaTimeNanos() - start));
  return status;
}

// Whether the code that entered the monitor can take an exception there.
// C2's code and native wrappers cannot: their slow path
// (SharedRuntime::monitor_enter_helper) has no exception edge, and an
// exception returned into it finds no handler (a fatal error). The
// interpreter, C1's code (its runtime stub's caller) and JNI can.
static bool enter_may_throw(JavaThread* current) {
  if (!current->has_last_Java_frame()) {
    return true;
  }
  RegisterMap map(current, false);
  frame fr = current->last_frame();
  if (fr.is_runtime_frame()) {
    fr = fr.sender(&map);  // a compiler's runtime stub: its caller entered
  }
  CodeBlob* cb = fr.cb();
  if (cb == NULL || !cb->is_nmethod()) {
    return true;
  }
  nmethod* nm = cb->as_nmethod();
  return nm->is_compiled_by_c1() && !nm->is_native_method();
}

void DsoMonitors::enter(JavaThread* current, Handle obj) {
  if (DsoNode::has_left(current)) {
    return;  // the node left: the monitor is this last thread's alone
  }
  int status = enter_index(current, DsoMark::index(obj->mark()));
  if (status != DJAVA_MON_OK) {
    JavaThread* THREAD = current;
    throw_for(current, status, "cannot enter", obj(), THREAD);
    if (HAS_PENDING_EXCEPTION && !enter_may_throw(current)) {
      // Thrown when the thread is back in Java instead, as Thread.stop's
      // exception is (the compiled caller is deoptimized). It runs on
      // without the monitor until then; only a failed or ended program's
      // enter fails, and its monitors are gone.
      Handle exception(current, PENDING_EXCEPTION);
      CLEAR_PENDING_EXCEPTION;
      current->send_thread_stop(exception());
    }
  }
}

void DsoMonitors::adopt_stack_lock(JavaThread* current, Handle obj, TRAPS) {
  markWord mark = obj->mark();
  if (!mark.has_locker() || !current->is_lock_owned((address)mark.locker())) {
    return;
  }
  BasicLock* lock = mark.locker();
  markWord header = lock->displaced_header();
  assert(DsoMark::is_shared(header), "published while stack locked: the tag is in the lock");
  uint index = DsoMark::index(header);
  // Nobody else knows the object yet: the service grants at once.
  int status = enter_index(current, index);
  if (status != DJAVA_MON_OK) {
    ResourceMark rm(current);
    THROW_MSG(vmSymbols::java_lang_InternalError(),
              err_msg("djava: cannot take the monitor of shared object " UINT64_FORMAT_X
                      " (%s): %s", DsoReplicaTable::entry(index)->_global_id,
                      obj->klass()->external_name(), DsoNode::lib().djava_monitor_last_error()));
  }
  // The lock record keeps the tagged header, as for any replica this thread
  // locks: its unlock finds the mark not pointing at it and goes to the
  // runtime, which exits the cluster's monitor (patches/0009).
  if (obj->cas_set_mark(header, mark) != mark) {
    // Another thread of this node inflated the lock meanwhile (it contends
    // for it, or hashed the object): HotSpot's monitor stays in charge here.
    DsoNode::lib().djava_monitor_exit(_client, DsoReplicaTable::entry(index)->_global_id,
                                      DsoThreads::current_program(current), thread_key(current));
    ResourceMark rm(current);
    log_warning(dso)("shared object " UINT64_FORMAT_X " (%s) stays locked by HotSpot's own "
                     "monitor until its starter leaves synchronized code",
                     DsoReplicaTable::entry(index)->_global_id, obj->klass()->external_name());
  }
}

// The monitors whose waiters a put-off flush asked to step aside, each with
// when it last asked. A flush retries every 1 to 64 ms while it is put
// off, and asks again each time; an entry older than that is stale (its
// monitor may have been deflated and reused for another object since,
// which would cost a spurious wake-up and a step aside there, no more).
namespace {

const int step_aside_slots = 16;
const jlong step_aside_ask_ns = 200 * NANOSECS_PER_MILLISEC;
// How long a waiter lets go of the monitor for the publication. Past it
// (another thread of this node took the object meanwhile), it takes the
// monitor back and returns; the flush's next retry asks again.
const jlong step_aside_ns = NANOSECS_PER_SEC;

struct StepAsideRequest {
  ObjectMonitor* monitor;
  jlong asked_ns;
};

StepAsideRequest step_aside_requests[step_aside_slots];
// When any waiters were last asked: every local wait that returns looks,
// and almost none was asked, so most look no further than this.
volatile jlong last_asked_ns = 0;

os::PlatformMutex* step_aside_lock() {
  static os::PlatformMutex* mutex = new os::PlatformMutex();
  return mutex;
}

bool is_asked(ObjectMonitor* monitor, jlong now) {
  if (now - Atomic::load_acquire(&last_asked_ns) >= step_aside_ask_ns) {
    return false;
  }
  step_aside_lock()->lock();
  bool asked = false;
  for (int i = 0; i < step_aside_slots && !asked; i++) {
    asked = step_aside_requests[i].monitor == monitor &&
            now - step_aside_requests[i].asked_ns < step_aside_ask_ns;
  }
  step_aside_lock()->unlock();
  return asked;
}

}  // namespace

void DsoMonitors::ask_waiters_to_step_aside(JavaThread* current, ObjectMonitor* monitor) {
  jlong now = os::javaTimeNanos();
  step_aside_lock()->lock();
  int slot = 0;
  for (int i = 0; i < step_aside_slots; i++) {
    if (step_aside_requests[i].monitor == monitor) {
      slot = i;
      break;
    }
    if (step_aside_requests[i].asked_ns < step_aside_requests[slot].asked_ns) {
      slot = i;  // else the oldest request makes room
    }
  }
  step_aside_requests[slot].monitor = monitor;
  step_aside_requests[slot].asked_ns = now;
  // Before the unparks below: a waiter they wake sees it.
  Atomic::release_store(&last_asked_ns, now);
  step_aside_lock()->unlock();
  // Wakes the threads waiting on it: ObjectMonitor::wait parks once, and a
  // thread woken while still in the wait set takes itself out, as after a
  // time-out. An unpark that reaches a thread no longer waiting there is a
  // spurious return from its next park, which every park tolerates.
  ThreadsListHandle tlh(current);
  for (uint i = 0; i < tlh.list()->length(); i++) {
    JavaThread* t = tlh.list()->thread_at(i);
    if (t->current_waiting_monitor() == monitor) {
      t->_ParkEvent->unpark();
    }
  }
}

void DsoMonitors::step_aside_if_asked(JavaThread* current, Handle obj, ObjectMonitor* monitor) {
  // An interrupted or failed wait returns as it is: if its thread waits
  // again, the flush's next retry asks again.
  if (!DsoNode::is_member() || current->has_pending_exception() ||
      !is_asked(monitor, os::javaTimeNanos())) {
    return;
  }
  // HotSpot's count of this thread's entries past the first; entries it
  // made while the object was stack-locked recursively are not in it and
  // do not go to the runtime when they exit, so neither count changes.
  intx recursions = ObjectSynchronizer::complete_exit(obj, current);
  jlong deadline = os::javaTimeNanos() + step_aside_ns;
  while (!is_shared(obj()) && os::javaTimeNanos() < deadline) {
    ThreadBlockInVM blocked(current);
    os::naked_short_sleep(1);
  }
  if (!is_shared(obj())) {
    ObjectSynchronizer::reenter(obj, recursions, current);
    return;
  }
  // Published: its monitor is the service's now, entered once per exit to
  // come (each goes to the runtime, the mark being the tag).
  for (intx i = 0; i <= recursions; i++) {
    enter(current, obj);
    if (current->has_pending_exception()) {
      return;  // the cluster failed: the error names the object
    }
  }
  ResourceMark rm(current);
  log_debug(dso)("a waiter stepped aside for the publication of shared object " UINT64_FORMAT_X
                 " (%s)", DsoHeap::id_of(obj()), obj->klass()->external_name());
}

// Data leaves with the release (docs/SOS.md): when the release hands the
// monitor to a thread of another node that is queued for it, the chunks
// this node took exclusively during its tenure go home first, dropped here,
// and the release names them, so that the service grants them to the next
// holder with the monitor instead of its directory asking this node for
// them afterwards (a round trip on the hand-off's critical path). Sends
// only: never blocks, so it may run where exit does.
void DsoMonitors::hand_over_before_release(uint64_t monitor, uint64_t program, uint64_t key,
                                           bool whole, bool jdk_only) {
  djava_monitor_client* client = _client;
  uint64_t since;
  if (DsoNode::lib().djava_monitor_release_wanted(client, monitor, program, key, whole ? 1 : 0,
                                                  &since) != 1) {
    return;
  }
  // As many as the directory moves with a lock (Directory::kMovedWithLock).
  const size_t max_handed_over = 8;
  uint64_t ids[max_handed_over];
  size_t n = DsoNode::lib().djava_sos_hand_over(
      DsoNode::sos(), since, program, jdk_only ? DJAVA_SOS_HAND_OVER_JDK_ONLY : 0, ids,
      max_handed_over);
  if (n > 0) {
    DsoNode::lib().djava_monitor_note_released(client, monitor, program, key, ids, n);
  }
}

void DsoMonitors::exit(JavaThread* current, oop obj) {
  // Exits are sent, never waited for: this may run where the thread
  // cannot block (a leaf call from the interpreter).
  if (DsoNode::has_left(current)) {
    return;
  }
  uint64_t program = DsoThreads::current_program(current);
  hand_over_before_release(DsoHeap::id_of(obj), program, thread_key(current), false, false);
  int status = DsoNode::lib().djava_monitor_exit(_client, DsoHeap::id_of(obj), program,
                                                 thread_key(current));
  // A failed (or dropped) program's monitors are gone already: its threads
  // unwinding out of synchronized code have nothing to report.
  if (status != DJAVA_MON_OK && status != DJAVA_MON_FAILED && !DsoNode::is_leaving()) {
    log_warning(dso)("exit of the monitor of " UINT64_FORMAT_X ": %s", DsoHeap::id_of(obj),
                     DsoNode::lib().djava_monitor_last_error());
  }
}

void DsoMonitors::jni_exit(JavaThread* current, oop obj, TRAPS) {
  if (DsoNode::has_left(current)) {
    return;
  }
  int status = DsoNode::lib().djava_monitor_exit(_client, DsoHeap::id_of(obj),
                                                 DsoThreads::current_program(current),
                                                 thread_key(current));
  if (status != DJAVA_MON_OK) {
    throw_for(current, status, "cannot exit", obj, THREAD);
  }
}

int DsoMonitors::wait_polled(JavaThread* current, uint64_t monitor, uint64_t wait_key,
                             uint64_t java_thread, jlong millis, bool interruptible,
                             uint64_t place) {
  uint64_t program = DsoThreads::current_program(current);
  uint64_t key = thread_key(current);
  // The wait releases the monitor whole (Object.wait's, or a shared
  // synchronizer's in a condition's await): what the tenure wrote leaves
  // with that release when another node wants the monitor, the program's
  // objects too, unlike a synchronizer's exit: the waiter reads nothing
  // before the service gives the monitor back, and the data comes back
  // with that grant.
  hand_over_before_release(monitor, program, key, true, false);
  // One wait in the service, with the caller's timeout. The thread stays in
  // the wait set until it ends: a notify can never fall between two waits.
  // Every poll interval the client returns to look at the interrupt status,
  // which another node may have set in the shared Thread; if it is set, the
  // thread interrupts its own wait through the service. An acquirer in line
  // gives its wait up instead (DJAVA_MON_CANCELLED, the monitor not held):
  // an interrupted wait gets the monitor back before it returns, and a
  // lock's holder keeps that monitor for as long as it holds the lock.
  bool interrupt_sent = false;
  int status;
  {
    ThreadToNativeFromVM in_native(current);
    status = place == 0
        ? DsoNode::lib().djava_monitor_wait_keyed(_client, monitor, program, key, wait_key,
                                                  java_thread, millis,
                                                  DsoThreads::poll_interval_ms)
        : DsoNode::lib().djava_monitor_wait_in_line(_client, monitor, program, key, wait_key,
                                                    java_thread, millis,
                                                    DsoThreads::poll_interval_ms, place);
  }
  while (status == DJAVA_MON_WAITING) {
    if (interruptible && !interrupt_sent && DsoThreads::is_interrupted(current, false)) {
      interrupt_sent = true;
      if (place != 0) {
        DsoNode::lib().djava_monitor_cancel(_client, program, key);
      } else if (DsoNode::lib().djava_monitor_interrupt(_client, program, key) != DJAVA_MON_OK) {
        log_warning(dso)("interrupting the wait on " UINT64_FORMAT_X ": %s", monitor,
                         DsoNode::lib().djava_monitor_last_error());
      }
    }
    ThreadToNativeFromVM in_native(current);
    status = DsoNode::lib().djava_monitor_wait_more(_client, program, key,
                                                    DsoThreads::poll_interval_ms);
  }
  return status;
}

int DsoMonitors::wait_in_service(JavaThread* current, uint64_t monitor, uint64_t wait_key,
                                 uint64_t java_thread, jlong millis, bool interruptible,
                                 bool parked, uint64_t place) {
  // Thread.getState says WAITING or TIMED_WAITING, as ObjectMonitor::wait
  // (or, for a synchronizer, LockSupport.park) has it say; the polls do
  // not change it.
  if (parked) {
    JavaThreadParkedState waiting(current, millis != 0);
    return wait_polled(current, monitor, wait_key, java_thread, millis, interruptible, place);
  }
  JavaThreadInObjectWaitState waiting(current, millis != 0);
  return wait_polled(current, monitor, wait_key, java_thread, millis, interruptible, place);
}

void DsoMonitors::wait(JavaThread* current, Handle obj, jlong millis, bool interruptible, TRAPS) {
  if (millis < 0) {
    THROW_MSG(vmSymbols::java_lang_IllegalArgumentException(), "timeout value is negative");
  }
  if (interruptible && DsoThreads::is_interrupted(current, true)) {
    THROW(vmSymbols::java_lang_InterruptedException());
  }
  if (DsoNode::has_left(current)) {
    return;  // nobody is left to notify it: a spurious wake-up
  }
  int status = wait_in_service(current, DsoHeap::id_of(obj()), 0, 0, millis, interruptible,
                               false);
  switch (status) {
    case DJAVA_MON_OK:          // notified; the monitor is held again
    case DJAVA_MON_TIMED_OUT:
      return;
    case DJAVA_MON_INTERRUPTED:
      if (interruptible) {
        DsoThreads::is_interrupted(current, true);
        THROW(vmSymbols::java_lang_InterruptedException());
      }
      return;                   // a wake-up Java allows; the flag stays set
    default:
      throw_for(current, status, "cannot wait on", obj(), THREAD);
  }
}

void DsoMonitors::notify(JavaThread* current, Handle obj, bool all, TRAPS) {
  if (DsoNode::has_left(current)) {
    return;  // no thread of the cluster waits for this node any more
  }
  int status = DsoNode::lib().djava_monitor_notify(_client, DsoHeap::id_of(obj()),
                                                   DsoThreads::current_program(current),
                                                   thread_key(current), all ? 1 : 0);
  if (status != DJAVA_MON_OK) {
    throw_for(current, status, "cannot notify", obj(), THREAD);
  }
}

void DsoMonitors::signal_all(JavaThread* current, oop obj) {
  if (DsoNode::has_left(current)) {
    return;
  }
  uint64_t id = DsoHeap::id_of(obj);
  int status = DsoNode::lib().djava_monitor_signal(_client, id, DsoThreads::current_program(current),
                                                   thread_key(current), 0, 1, 0);
  if (status != DJAVA_MON_OK && status != DJAVA_MON_FAILED) {
    log_warning(dso)("signalling the waiters of " UINT64_FORMAT_X ": %s", id,
                     DsoNode::lib().djava_monitor_last_error());
  }
}

bool DsoMonitors::holds_lock(JavaThread* current, oop obj) {
  if (DsoNode::has_left(current)) {
    return true;
  }
  return DsoNode::lib().djava_monitor_count(_client, DsoHeap::id_of(obj),
                                            DsoThreads::current_program(current),
                                            thread_key(current)) > 0;
}
