/*
 * djava: the natives of java.util.concurrent.SharedBarriers (jvm/java.base),
 * through which a CyclicBarrier that is a shared object meets its parties
 * at the cluster's monitor service (sos-server/monitor/barrier_table.h).
 *
 * A shared barrier is named at the service by its id with the top bit
 * flipped, as a synchronizer's monitor is (dsoSynchronizers.cpp says why no
 * object's id is such a number): a program that synchronizes on the
 * barrier object keeps its own monitor apart.
 *
 * Registered through the special-natives table (patches/0036).
 */

#include "precompiled.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/abi/monitor_client.h"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoMonitors.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoSynchronizers.hpp"
#include "dso/dsoThreads.hpp"
#include "jni.h"
#include "logging/log.hpp"
#include "memory/resourceArea.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/jniHandles.inline.hpp"
#include "services/threadService.hpp"

static uint64_t barrier_of(oop barrier) {
  return DsoHeap::id_of(barrier) ^ DsoSynchronizers::synchronizer_bit;
}

static void throw_for(JavaThread* current, int status, const char* what, oop barrier, TRAPS) {
  DsoNode::stop_if_left(current);
  ResourceMark rm(current);
  THROW_MSG(vmSymbols::java_lang_InternalError(),
            err_msg("djava: %s the barrier %s (shared object " UINT64_FORMAT_X "): %s", what,
                    barrier->klass()->external_name(), DsoHeap::id_of(barrier),
                    DsoNode::lib().djava_monitor_last_error()));
}

// The outcomes SharedBarriers reads, in the low byte (its index above).
static const int index_shift = 8;

// Arrives at the barrier and waits for its trip (or its break). Every poll
// interval the wait returns to look at the thread's interrupt status,
// which another node may have set in the shared Thread; if it is set, the
// thread interrupts its own await through the service, which breaks the
// barrier unless it tripped first.
JVM_ENTRY(static jlong, SB_arrive0(JNIEnv* env, jclass, jobject barrier, jint parties,
                                   jboolean command, jboolean timed, jlong nanos,
                                   jboolean interrupted))
  Handle h(thread, JNIHandles::resolve_non_null(barrier));
  if (!DsoMark::is_shared(h->mark()) || DsoNode::has_left(thread)) {
    // The node left the cluster (destroy_vm's last steps): no other party
    // can come any more.
    if (parties == 1) {
      return command != JNI_FALSE ? DJAVA_MON_BARRIER_LAST : DJAVA_MON_OK;
    }
    return DJAVA_MON_BROKEN;
  }
  const DsoNodeLibrary& lib = DsoNode::lib();
  djava_monitor_client* client = DsoMonitors::client();
  const uint64_t program = DsoThreads::current_program(thread);
  const uint64_t key = DsoMonitors::thread_key(thread);
  const uint64_t timeout_ns = nanos > 0 ? (uint64_t)nanos : 0;
  int status;
  {
    // Waiting at a barrier is parking on its condition, in Java's terms.
    JavaThreadParkedState parked(thread, timed != JNI_FALSE);
    {
      ThreadToNativeFromVM in_native(thread);
      status = lib.djava_monitor_arrive(client, barrier_of(h()), program, key, (uint32_t)parties,
                                        command != JNI_FALSE ? 1 : 0, timed != JNI_FALSE ? 1 : 0,
                                        timeout_ns, interrupted != JNI_FALSE ? 1 : 0, 0,
                                        DsoThreads::poll_interval_ms);
    }
    bool interrupt_sent = false;
    while (status == DJAVA_MON_WAITING) {
      if (!interrupt_sent && DsoThreads::is_interrupted(thread, false)) {
        interrupt_sent = true;
        if (lib.djava_monitor_interrupt(client, program, key) != DJAVA_MON_OK) {
          log_warning(dso)("interrupting the await at " UINT64_FORMAT_X ": %s",
                           DsoHeap::id_of(h()), lib.djava_monitor_last_error());
        }
      }
      ThreadToNativeFromVM in_native(thread);
      status = lib.djava_monitor_wait_more(client, program, key, DsoThreads::poll_interval_ms);
    }
  }
  switch (status) {
    case DJAVA_MON_OK:
      return ((jlong)lib.djava_monitor_barrier_index() << index_shift) | DJAVA_MON_OK;
    case DJAVA_MON_BARRIER_LAST:
    case DJAVA_MON_BROKEN:
    case DJAVA_MON_TIMED_OUT:
      return status;
    case DJAVA_MON_INTERRUPTED:
      // The caller throws InterruptedException, which clears the status.
      DsoThreads::is_interrupted(thread, true);
      return status;
    default:
      throw_for(thread, status, "cannot await", h(), THREAD);
      return status;
  }
JVM_END

// A barrier op (DJAVA_BARRIER_*): the barrier's state after it, broken in
// bit 32, the parties waiting below.
JVM_ENTRY(static jlong, SB_op0(JNIEnv* env, jclass, jobject barrier, jint op))
  Handle h(thread, JNIHandles::resolve_non_null(barrier));
  if (!DsoMark::is_shared(h->mark()) || DsoNode::has_left(thread)) {
    return 0;
  }
  int broken = 0;
  uint32_t waiting = 0;
  int status;
  {
    ThreadToNativeFromVM in_native(thread);
    status = DsoNode::lib().djava_monitor_barrier_op(DsoMonitors::client(), barrier_of(h()),
                                                     DsoThreads::current_program(thread),
                                                     DsoMonitors::thread_key(thread), op,
                                                     &broken, &waiting);
  }
  if (status != DJAVA_MON_OK) {
    throw_for(thread, status, "cannot ask or change", h(), THREAD);
    return 0;
  }
  return (broken != 0 ? (jlong)1 << 32 : 0) | (jlong)waiting;
JVM_END

#define CC (char*)
#define FN_PTR(f) CAST_FROM_FN_PTR(void*, &f)

static JNINativeMethod barrier_methods[] = {
  { CC"arrive0", CC"(Ljava/util/concurrent/CyclicBarrier;IZZJZ)J", FN_PTR(SB_arrive0) },
  { CC"op0",     CC"(Ljava/util/concurrent/CyclicBarrier;I)J",     FN_PTR(SB_op0) },
};

JVM_ENTRY(void, JVM_RegisterDjavaBarrierMethods(JNIEnv* env, jclass barrier_class))
  ThreadToNativeFromVM ttnfv(thread);
  int ok = env->RegisterNatives(barrier_class, barrier_methods,
                                sizeof(barrier_methods) / sizeof(JNINativeMethod));
  guarantee(ok == 0, "djava: registering SharedBarriers' natives failed");
JVM_END
