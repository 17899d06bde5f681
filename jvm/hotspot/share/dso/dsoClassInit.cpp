/*
 * djava: a node initializes the program classes whose objects arrive
 * (dsoClassInit.hpp).
 */

#include "precompiled.hpp"
#include "dso/dsoClassInit.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoStatics.hpp"
#include "logging/log.hpp"
#include "memory/resourceArea.hpp"
#include "oops/instanceKlass.inline.hpp"
#include "oops/klass.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/jniHandles.inline.hpp"
#include "runtime/mutex.hpp"
#include "runtime/mutexLocker.hpp"
#include "utilities/growableArray.hpp"

namespace {

// The classes queued and not yet initialized, and a global handle on each
// one's mirror, which keeps the class (and its program's loader) alive
// until the daemon is done with it. Under lock.
Monitor* lock = NULL;
GrowableArray<InstanceKlass*>* queued = NULL;
GrowableArray<jobject>* mirrors = NULL;
// Taken by the daemon, not yet initialized: not queued again meanwhile.
InstanceKlass* in_progress = NULL;

}  // namespace

void DsoClassInit::start(JavaThread* current) {
  lock = new Monitor(Mutex::leaf, "DsoClassInit_lock", true, Mutex::_safepoint_check_never);
  queued = new (ResourceObj::C_HEAP, mtInternal) GrowableArray<InstanceKlass*>(16, mtInternal);
  mirrors = new (ResourceObj::C_HEAP, mtInternal) GrowableArray<jobject>(16, mtInternal);
  DsoNode::start_daemon(current, "djava class initialization", &thread_entry);
}

void DsoClassInit::replica_made(JavaThread* current, InstanceKlass* ik) {
  if (ik->is_initialized() || ik->is_in_error_state() || lock == NULL ||
      DsoStatics::program_of(ik) == 0) {
    return;
  }
  {
    MonitorLocker ml(lock, Mutex::_no_safepoint_check_flag);
    if (ik == in_progress || queued->contains(ik)) {
      return;  // the usual case while the daemon is at it
    }
  }
  // Made without the lock: a global handle may take OopStorage's.
  jobject mirror = JNIHandles::make_global(Handle(current, ik->java_mirror()));
  bool added = false;
  {
    MonitorLocker ml(lock, Mutex::_no_safepoint_check_flag);
    if (ik != in_progress && !queued->contains(ik)) {
      queued->append(ik);
      mirrors->append(mirror);
      added = true;
      ml.notify();
    }
  }
  if (!added) {
    JNIHandles::destroy_global(mirror);
  }
}

void DsoClassInit::thread_entry(JavaThread* self, JavaThread* THREAD) {
  for (;;) {
    jobject mirror;
    InstanceKlass* ik;
    {
      ThreadBlockInVM blocked(self);
      MonitorLocker ml(lock, Mutex::_no_safepoint_check_flag);
      while (queued->is_empty()) {
        ml.wait();
      }
      ik = queued->pop();
      mirror = mirrors->pop();
      in_progress = ik;
    }
    if (!DsoNode::is_leaving()) {
      HandleMark hm(self);
      ResourceMark rm(self);
      // Takes the outcome of the <clinit> that ran where the object was
      // made, waiting for it if it is still running there.
      ik->initialize(THREAD);
      if (HAS_PENDING_EXCEPTION) {
        // Erroneous cluster-wide: this node's code meets the error itself.
        log_debug(dso)("initializing %s for its arriving objects: %s", ik->external_name(),
                       PENDING_EXCEPTION->klass()->external_name());
        CLEAR_PENDING_EXCEPTION;
      }
    }
    {
      MonitorLocker ml(lock, Mutex::_no_safepoint_check_flag);
      in_progress = NULL;
    }
    JNIHandles::destroy_global(mirror);
  }
}
