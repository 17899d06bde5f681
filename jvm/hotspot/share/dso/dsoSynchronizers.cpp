/*
 * djava: the natives of java.util.concurrent.locks.SharedSynchronizers
 * (jvm/java.base), through which an AbstractQueuedSynchronizer that is a
 * shared object blocks and wakes at the cluster's monitor service.
 *
 * A shared synchronizer has a monitor of its own at the service, apart
 * from its Java monitor: the synchronizer's id with the top bit flipped.
 * The top 24 bits of an id are its creator's node number, which the
 * server gives from 1 up and never past 2^24 - 2, and the named chunks'
 * 0xffffff; flipping the top bit gives numbers no node reaches before
 * 2^23 of them have joined, so no object's id names a synchronizer's
 * monitor. Keeping the two apart matters when a program locks the
 * synchronizer object itself (`synchronized (lock)`): a thread blocked in
 * lock() inside it must not release that monitor while it waits.
 *
 * Registered like djava.runtime.Node's natives, through the
 * special-natives table (patches/0024).
 */

#include "precompiled.hpp"
#include "classfile/classLoaderData.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/abi/monitor_client.h"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoMonitors.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoSynchronizers.hpp"
#include "dso/dsoThreads.hpp"
#include "jni.h"
#include "logging/log.hpp"
#include "memory/oopFactory.hpp"
#include "memory/resourceArea.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/oop.inline.hpp"
#include "oops/typeArrayOop.inline.hpp"
#include "runtime/atomic.hpp"
#include "runtime/fieldDescriptor.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/jniHandles.inline.hpp"
#include "runtime/os.hpp"
#include "services/threadService.hpp"

static uint64_t monitor_of(oop sync) {
  return DsoHeap::id_of(sync) ^ DsoSynchronizers::synchronizer_bit;
}

static void throw_for(JavaThread* current, int status, const char* what, oop sync, TRAPS) {
  DsoNode::stop_if_left(current);
  ResourceMark rm(current);
  const char* why = DsoNode::lib().djava_monitor_last_error();
  if (status == DJAVA_MON_NOT_OWNER) {
    THROW_MSG(vmSymbols::java_lang_IllegalMonitorStateException(), why);
  }
  THROW_MSG(vmSymbols::java_lang_InternalError(),
            err_msg("djava: %s the synchronizer %s (shared object " UINT64_FORMAT_X "): %s",
                    what, sync->klass()->external_name(), DsoHeap::id_of(sync), why));
}

// A synchronizer's operations are its own thread's once the node left the
// cluster (destroy_vm's last steps): nobody else can wait for it.
static bool shared_here(JavaThread* current, oop obj) {
  return obj != NULL && DsoMark::is_shared(obj->mark()) && !DsoNode::has_left(current);
}

JVM_ENTRY(static jboolean, SS_enabled(JNIEnv* env, jclass))
  return DistributedJava ? JNI_TRUE : JNI_FALSE;
JVM_END

JVM_ENTRY(static jboolean, SS_isShared0(JNIEnv* env, jclass, jobject obj))
  return shared_here(thread, JNIHandles::resolve(obj)) ? JNI_TRUE : JNI_FALSE;
JVM_END

JVM_ENTRY(static jlong, SS_idOf(JNIEnv* env, jclass, jobject obj, jboolean publish))
  Handle h(thread, JNIHandles::resolve(obj));
  if (h.is_null()) {
    return 0;
  }
  if (DsoMark::is_shared(h->mark())) {
    return (jlong)DsoHeap::id_of(h());
  }
  if (publish == JNI_FALSE || !DsoNode::is_member()) {
    return 0;
  }
  if (DsoHeap::unshareable_reason(h()) != NULL) {
    return 0;  // a waiter the JDK runs for this node's own work: named by nobody
  }
  return (jlong)DsoHeap::publish(thread, h, THREAD);
JVM_END

JVM_ENTRY(static jobject, SS_objectOf(JNIEnv* env, jclass, jlong id))
  if (!DsoNode::is_member() || id == 0) {
    return NULL;
  }
  oop o = DsoHeap::attach(thread, (uint64_t)id, CHECK_NULL);
  return JNIHandles::make_local(THREAD, o);
JVM_END

JVM_ENTRY(static void, SS_enter(JNIEnv* env, jclass, jobject sync))
  Handle h(thread, JNIHandles::resolve_non_null(sync));
  if (!shared_here(thread, h())) {
    return;
  }
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(h->mark()));
  uint64_t monitor = monitor_of(h());
  int status;
  jlong start = os::javaTimeNanos();
  {
    // Waiting for a synchronizer is parking, in Java's terms.
    JavaThreadParkedState parked(thread, false);
    ThreadToNativeFromVM in_native(thread);
    status = DsoNode::lib().djava_monitor_enter(DsoMonitors::client(), monitor,
                                                DsoThreads::current_program(thread),
                                                DsoMonitors::thread_key(thread));
  }
  Atomic::inc(&e->_lock_enters);
  Atomic::add(&e->_lock_wait_ns, (uint64_t)(os::javaTimeNanos() - start));
  if (status != DJAVA_MON_OK) {
    throw_for(thread, status, "cannot enter", h(), THREAD);
  }
JVM_END

JVM_ENTRY(static void, SS_exit(JNIEnv* env, jclass, jobject sync))
  oop o = JNIHandles::resolve_non_null(sync);
  if (!shared_here(thread, o)) {
    return;
  }
  // What the holder wrote under the synchronizer (a queue's object, array
  // and nodes) leaves with the release when another node waits for it.
  DsoMonitors::hand_over_before_release(monitor_of(o), DsoThreads::current_program(thread),
                                        DsoMonitors::thread_key(thread), false, true);
  int status = DsoNode::lib().djava_monitor_exit(DsoMonitors::client(), monitor_of(o),
                                                 DsoThreads::current_program(thread),
                                                 DsoMonitors::thread_key(thread));
  if (status != DJAVA_MON_OK && status != DJAVA_MON_FAILED && !DsoNode::is_leaving()) {
    throw_for(thread, status, "cannot exit", o, THREAD);
  }
JVM_END

// What ended the wait, in the low two bits: 0 notified or signalled, 1
// timed out, 2 interrupted, the monitor held again in each case; 3 an
// acquirer in line left it, timed out or interrupted, without the monitor
// (djava_monitor_wait_in_line). Bit 2:
// first in line (always, for a waiter in no line). Above: the waiter's
// place if it is in line (it waited at a place, not 0; -1: a new one; or a
// signal moved it there), else 0.
JVM_ENTRY(static jlong, SS_await0(JNIEnv* env, jclass, jobject sync, jlong key, jlong java_thread,
                                  jlong millis, jboolean interruptible, jlong place))
  Handle h(thread, JNIHandles::resolve_non_null(sync));
  const jlong first_in_line = 4;
  const jlong left_line = 3;
  if (!shared_here(thread, h())) {
    return first_in_line | DJAVA_MON_OK;  // a spurious wake-up: nobody is left to signal it
  }
  int status = DsoMonitors::wait_in_service(thread, monitor_of(h()), (uint64_t)key,
                                            (uint64_t)java_thread, millis,
                                            interruptible != JNI_FALSE, true, (uint64_t)place);
  // A condition's waiter moved to the acquirers has a place too, from
  // its move.
  int first = 0;
  uint64_t at = DsoNode::lib().djava_monitor_last_place(&first);
  jlong kept = at == 0 ? first_in_line : (jlong)((at << 3) | (first != 0 ? first_in_line : 0));
  if (status == DJAVA_MON_CANCELLED && place != 0) {
    return kept | left_line;  // the caller looks at the interrupt status itself
  }
  switch (status) {
    case DJAVA_MON_OK:
    case DJAVA_MON_TIMED_OUT:
      return kept | status;
    case DJAVA_MON_INTERRUPTED:
      // The caller throws or sets the flag again, as AQS does.
      DsoThreads::is_interrupted(thread, true);
      return kept | status;
    default:
      throw_for(thread, status, "cannot wait for", h(), THREAD);
      return status;
  }
JVM_END

// Wakes the waiters of key, or (to_key not 0) moves them to wait set to_key.
JVM_ENTRY(static void, SS_signal0(JNIEnv* env, jclass, jobject sync, jlong key, jboolean all,
                                  jlong to_key))
  oop o = JNIHandles::resolve_non_null(sync);
  if (!shared_here(thread, o)) {
    return;
  }
  int status = DsoNode::lib().djava_monitor_signal(DsoMonitors::client(), monitor_of(o),
                                                   DsoThreads::current_program(thread),
                                                   DsoMonitors::thread_key(thread),
                                                   (uint64_t)key, all != JNI_FALSE ? 1 : 0,
                                                   (uint64_t)to_key);
  if (status != DJAVA_MON_OK) {
    throw_for(thread, status, "cannot signal", o, THREAD);
  }
JVM_END

// How long a lock's enter waits before it reports the thread queued
// (enterLock0's report_queued), and the thread sets its park blocker: an
// enter granted sooner costs no write of the blocker, a field of a shared
// Thread. The blocker seen means a queued thread, as in AQS: isQueued
// counts a thread parked on the synchronizer as queued, whether or not its
// Enter has reached the service's listing yet.
static const jlong queued_report_ms = 1;

// Goes on with an enter_polled that returned DJAVA_MON_WAITING until it
// ends; an interruptible enter looks at the thread's interrupt status,
// which another node may set, every poll interval. In the thread's parked
// state (the caller's).
static int finish_enter(JavaThread* thread, uint64_t program, uint64_t key, bool interruptible,
                        int status) {
  const DsoNodeLibrary& lib = DsoNode::lib();
  djava_monitor_client* client = DsoMonitors::client();
  jlong poll = interruptible ? DsoThreads::poll_interval_ms : -1;
  while (status == DJAVA_MON_WAITING) {
    if (interruptible && DsoThreads::is_interrupted(thread, false)) {
      // Given up; a grant on its way is handed back by the client.
      lib.djava_monitor_cancel(client, program, key);
      {
        ThreadToNativeFromVM in_native(thread);
        status = lib.djava_monitor_enter_more(client, program, key, -1);
      }
      if (status == DJAVA_MON_CANCELLED) {
        DsoThreads::is_interrupted(thread, true);
        status = DJAVA_MON_INTERRUPTED;
      }
      break;  // or granted before the cancel: held
    }
    ThreadToNativeFromVM in_native(thread);
    status = lib.djava_monitor_enter_more(client, program, key, poll);
  }
  return status;
}

static jint enter_result(JavaThread* thread, Handle h, DsoReplica* e, jlong start, int status) {
  Atomic::add(&e->_lock_wait_ns, (uint64_t)(os::javaTimeNanos() - start));
  switch (status) {
    case DJAVA_MON_OK:
    case DJAVA_MON_TIMED_OUT:
    case DJAVA_MON_INTERRUPTED:
    case DJAVA_MON_WAITING:
      return status;
    default:
      JavaThread* THREAD = thread;
      throw_for(thread, status, "cannot lock", h(), THREAD);
      return status;
  }
}

// A ReentrantLock's lock: enters the synchronizer's monitor, as a
// djava_monitor_status (OK: held; TIMED_OUT, INTERRUPTED: not held; millis
// 0: no timeout). With report_queued, WAITING if the thread is still queued
// after queued_report_ms: it stays queued, and goes on with enterLockMore0.
JVM_ENTRY(static jint, SS_enterLock0(JNIEnv* env, jclass, jobject sync, jlong java_thread,
                                     jlong millis, jboolean interruptible,
                                     jboolean report_queued, jboolean barging))
  Handle h(thread, JNIHandles::resolve_non_null(sync));
  if (!shared_here(thread, h())) {
    return DJAVA_MON_OK;  // the node left: the lock is this last thread's alone
  }
  if (interruptible != JNI_FALSE && DsoThreads::is_interrupted(thread, true)) {
    return DJAVA_MON_INTERRUPTED;
  }
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(h->mark()));
  uint64_t program = DsoThreads::current_program(thread);
  uint64_t key = DsoMonitors::thread_key(thread);
  jlong poll = report_queued != JNI_FALSE ? queued_report_ms
               : interruptible != JNI_FALSE ? DsoThreads::poll_interval_ms : -1;
  int status;
  jlong start = os::javaTimeNanos();
  Atomic::inc(&e->_lock_enters);
  {
    // Waiting for a lock is parking, in Java's terms.
    JavaThreadParkedState parked(thread, millis != 0);
    {
      ThreadToNativeFromVM in_native(thread);
      status = DsoNode::lib().djava_monitor_enter_polled(DsoMonitors::client(), monitor_of(h()),
                                                         program, key, (uint64_t)java_thread,
                                                         millis, poll,
                                                         barging != JNI_FALSE
                                                             ? DJAVA_MON_ENTER_BARGING : 0);
    }
    if (report_queued == JNI_FALSE) {
      status = finish_enter(thread, program, key, interruptible != JNI_FALSE, status);
    }
  }
  return enter_result(thread, h, e, start, status);
JVM_END

// Goes on with an enterLock0 that reported the thread queued; its results.
JVM_ENTRY(static jint, SS_enterLockMore0(JNIEnv* env, jclass, jobject sync,
                                         jboolean interruptible, jboolean timed))
  Handle h(thread, JNIHandles::resolve_non_null(sync));
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(h->mark()));
  int status = DJAVA_MON_WAITING;
  jlong start = os::javaTimeNanos();
  {
    JavaThreadParkedState parked(thread, timed != JNI_FALSE);
    status = finish_enter(thread, DsoThreads::current_program(thread),
                          DsoMonitors::thread_key(thread), interruptible != JNI_FALSE, status);
  }
  return enter_result(thread, h, e, start, status);
JVM_END

JVM_ENTRY(static jboolean, SS_tryEnter0(JNIEnv* env, jclass, jobject sync, jlong java_thread))
  Handle h(thread, JNIHandles::resolve_non_null(sync));
  if (!shared_here(thread, h())) {
    return JNI_TRUE;
  }
  int status;
  {
    ThreadToNativeFromVM in_native(thread);
    status = DsoNode::lib().djava_monitor_try_enter(DsoMonitors::client(), monitor_of(h()),
                                                    DsoThreads::current_program(thread),
                                                    DsoMonitors::thread_key(thread),
                                                    (uint64_t)java_thread);
  }
  if (status != DJAVA_MON_OK && status != DJAVA_MON_BUSY) {
    throw_for(thread, status, "cannot try to lock", h(), THREAD);
  }
  return status == DJAVA_MON_OK ? JNI_TRUE : JNI_FALSE;
JVM_END

JVM_ENTRY(static jint, SS_count0(JNIEnv* env, jclass, jobject sync))
  oop o = JNIHandles::resolve_non_null(sync);
  if (!shared_here(thread, o)) {
    return 0;
  }
  return (jint)DsoNode::lib().djava_monitor_count(DsoMonitors::client(), monitor_of(o),
                                                  DsoThreads::current_program(thread),
                                                  DsoMonitors::thread_key(thread));
JVM_END

JVM_ENTRY(static jboolean, SS_entersMonitor0(JNIEnv* env, jclass, jobject sync))
  oop o = JNIHandles::resolve_non_null(sync);
  if (!shared_here(thread, o)) {
    return JNI_FALSE;
  }
  int count = DsoNode::lib().djava_monitor_count(DsoMonitors::client(), monitor_of(o),
                                                 DsoThreads::current_program(thread),
                                                 DsoMonitors::thread_key(thread));
  return count == 0 ? JNI_TRUE : JNI_FALSE;
JVM_END

JVM_ENTRY(static void, SS_notify0(JNIEnv* env, jclass, jobject sync, jlong key, jboolean all))
  oop o = JNIHandles::resolve_non_null(sync);
  if (!shared_here(thread, o)) {
    return;
  }
  int status = DsoNode::lib().djava_monitor_notify_keyed(DsoMonitors::client(), monitor_of(o),
                                                         DsoThreads::current_program(thread),
                                                         DsoMonitors::thread_key(thread),
                                                         (uint64_t)key, all != JNI_FALSE ? 1 : 0);
  if (status != DJAVA_MON_OK) {
    throw_for(thread, status, "cannot signal", o, THREAD);
  }
JVM_END

// A monitor's waiters as the service lists them (key and Thread id each),
// in C heap arrays grown until they hold them all: djava_monitor_queue's
// keyed waiters or, with `entering`, djava_monitor_state's list, whose
// first entries are the threads queued to enter.
class ServiceWaiters : public StackObj {
 public:
  uint64_t* keys = NULL;
  uint64_t* threads = NULL;
  int64_t count = 0;

  ~ServiceWaiters() { free(); }

  // False if the service could not say.
  bool fetch(JavaThread* thread, uint64_t monitor, bool entering) {
    uint64_t program = DsoThreads::current_program(thread);
    uint64_t key = DsoMonitors::thread_key(thread);
    for (size_t cap = 16;; cap = (size_t)count) {
      keys = NEW_C_HEAP_ARRAY(uint64_t, cap, mtInternal);
      threads = NEW_C_HEAP_ARRAY(uint64_t, cap, mtInternal);
      bool ok;
      {
        ThreadToNativeFromVM in_native(thread);
        if (entering) {
          ok = DsoNode::lib().djava_monitor_state(DsoMonitors::client(), monitor, program, key,
                                                  NULL, NULL, keys, threads, cap,
                                                  &count) == DJAVA_MON_OK;
        } else {
          count = DsoNode::lib().djava_monitor_queue(DsoMonitors::client(), monitor, program,
                                                     key, keys, threads, cap);
          ok = count >= 0;
        }
      }
      if (!ok) {
        count = 0;
        return false;
      }
      if (count <= (int64_t)cap) {
        return true;
      }
      free();
    }
  }

 private:
  void free() {
    if (keys != NULL) {
      FREE_C_HEAP_ARRAY(uint64_t, keys);
      FREE_C_HEAP_ARRAY(uint64_t, threads);
      keys = threads = NULL;
    }
  }
};

// The Thread ids of the threads queued to enter the synchronizer's monitor.
JVM_ENTRY(static jlongArray, SS_entering0(JNIEnv* env, jclass, jobject sync))
  Handle h(thread, JNIHandles::resolve_non_null(sync));
  ServiceWaiters w;
  if (shared_here(thread, h()) && !w.fetch(thread, monitor_of(h()), true)) {
    throw_for(thread, DJAVA_MON_IO, "cannot list the queue of", h(), CHECK_NULL);
  }
  int entering = 0;
  for (int64_t i = 0; i < w.count; i++) {
    if (w.keys[i] == DJAVA_MON_ENTERING_KEY) {
      entering++;
    }
  }
  typeArrayOop a = oopFactory::new_longArray(entering, CHECK_NULL);
  int k = 0;
  for (int64_t i = 0; i < w.count; i++) {
    if (w.keys[i] == DJAVA_MON_ENTERING_KEY) {
      a->long_at_put(k++, (jlong)w.threads[i]);
    }
  }
  return (jlongArray)JNIHandles::make_local(THREAD, a);
JVM_END

JVM_ENTRY(static jlongArray, SS_queue0(JNIEnv* env, jclass, jobject sync))
  Handle h(thread, JNIHandles::resolve_non_null(sync));
  ServiceWaiters w;
  if (shared_here(thread, h()) && !w.fetch(thread, monitor_of(h()), false)) {
    throw_for(thread, DJAVA_MON_IO, "cannot list the waiters of", h(), CHECK_NULL);
  }
  typeArrayOop a = oopFactory::new_longArray((int)(2 * w.count), CHECK_NULL);
  for (int64_t i = 0; i < w.count; i++) {
    a->long_at_put((int)(2 * i), (jlong)w.keys[i]);
    a->long_at_put((int)(2 * i + 1), (jlong)w.threads[i]);
  }
  return (jlongArray)JNIHandles::make_local(THREAD, a);
JVM_END

// The java.base classes whose objects learn at publication that they are
// shared, through a `boolean shared` field: ReentrantLock (patches/0035)
// and CyclicBarrier (patches/0036). Its offset is -1 until the first such
// object is published here, 0 if the class library has no such field.
struct SharedHint {
  const char* klass;
  int offset;
};
static SharedHint shared_hints[] = {
  { "java/util/concurrent/locks/ReentrantLock", -1 },
  { "java/util/concurrent/CyclicBarrier", -1 },
};

static int hint_offset(SharedHint* hint, Klass* k) {
  if (hint->offset < 0) {
    fieldDescriptor fd;
    TempNewSymbol name = SymbolTable::new_symbol("shared");
    bool found = InstanceKlass::cast(k)->find_local_field(name, vmSymbols::bool_signature(), &fd) &&
                 !fd.is_static();
    hint->offset = found ? fd.offset() : 0;
  }
  return hint->offset;
}

void DsoSynchronizers::prepare_publication(oop obj) {
  for (Klass* k = obj->klass(); k != NULL; k = k->super()) {
    if (!k->class_loader_data()->is_boot_class_loader_data()) {
      continue;
    }
    for (size_t i = 0; i < sizeof(shared_hints) / sizeof(shared_hints[0]); i++) {
      if (!k->name()->equals(shared_hints[i].klass)) {
        continue;
      }
      int offset = hint_offset(&shared_hints[i], k);
      if (offset > 0) {
        obj->bool_field_put(offset, JNI_TRUE);
      }
      return;
    }
  }
}

#define CC (char*)
#define FN_PTR(f) CAST_FROM_FN_PTR(void*, &f)

static JNINativeMethod synchronizer_methods[] = {
  { CC"enabled",   CC"()Z",                     FN_PTR(SS_enabled) },
  { CC"isShared0", CC"(Ljava/lang/Object;)Z",   FN_PTR(SS_isShared0) },
  { CC"idOf",      CC"(Ljava/lang/Object;Z)J",  FN_PTR(SS_idOf) },
  { CC"objectOf",  CC"(J)Ljava/lang/Object;",   FN_PTR(SS_objectOf) },
  { CC"enter",     CC"(Ljava/lang/Object;)V",   FN_PTR(SS_enter) },
  { CC"exit",      CC"(Ljava/lang/Object;)V",   FN_PTR(SS_exit) },
  { CC"await0",    CC"(Ljava/lang/Object;JJJZJ)J", FN_PTR(SS_await0) },
  { CC"signal0",   CC"(Ljava/lang/Object;JZJ)V", FN_PTR(SS_signal0) },
  { CC"queue0",    CC"(Ljava/lang/Object;)[J",  FN_PTR(SS_queue0) },
  { CC"enterLock0", CC"(Ljava/lang/Object;JJZZZ)I", FN_PTR(SS_enterLock0) },
  { CC"enterLockMore0", CC"(Ljava/lang/Object;ZZ)I", FN_PTR(SS_enterLockMore0) },
  { CC"tryEnter0", CC"(Ljava/lang/Object;J)Z",  FN_PTR(SS_tryEnter0) },
  { CC"count0",    CC"(Ljava/lang/Object;)I",   FN_PTR(SS_count0) },
  { CC"entersMonitor0", CC"(Ljava/lang/Object;)Z", FN_PTR(SS_entersMonitor0) },
  { CC"notify0",   CC"(Ljava/lang/Object;JZ)V", FN_PTR(SS_notify0) },
  { CC"entering0", CC"(Ljava/lang/Object;)[J",  FN_PTR(SS_entering0) },
};

JVM_ENTRY(void, JVM_RegisterDjavaSynchronizerMethods(JNIEnv* env, jclass sync_class))
  ThreadToNativeFromVM ttnfv(thread);
  int ok = env->RegisterNatives(sync_class, synchronizer_methods,
                                sizeof(synchronizer_methods) / sizeof(JNINativeMethod));
  guarantee(ok == 0, "djava: registering SharedSynchronizers' natives failed");
JVM_END
