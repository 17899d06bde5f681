/*
 * djava: the fence before a newly published object's first flush (see the
 * header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "code/compiledMethod.hpp"
#include "code/scopeDesc.hpp"
#include "compiler/compilerDefinitions.hpp"
#include "compiler/oopMap.hpp"
#include "dso/dsoFence.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "interpreter/bytecodes.hpp"
#include "logging/log.hpp"
#include "memory/iterator.hpp"
#include "memory/resourceArea.hpp"
#include "memory/universe.hpp"
#include "oops/compressedOops.inline.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/atomic.hpp"
#include "runtime/deoptimization.hpp"
#include "runtime/frame.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/handshake.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "runtime/mutex.hpp"
#include "runtime/mutexLocker.hpp"
#include "runtime/orderAccess.hpp"
#include "runtime/sharedRuntime.hpp"
#include "runtime/stackFrameStream.inline.hpp"
#include "runtime/thread.inline.hpp"

volatile uint64_t DsoFence::_started = 0;
volatile uint64_t DsoFence::_completed = 0;
volatile uint64_t DsoFence::_requested = 0;
volatile uint64_t DsoFence::_flushes_waited = 0;
volatile uint64_t DsoFence::_frames_deoptimized = 0;
bool DsoFence::_walks_compiled_frames = false;
Monitor* DsoFence::_monitor = NULL;

// A flush put off for a fence since the fence thread last told sos-client.
static volatile int flush_waiting = 0;
// The last thread a fence found in a JNI critical region (for describe()).
static char last_in_critical[64] = "";

namespace {

// Whether a frame of C2's code holds an object published since the last
// fence: tagged, and its first flush still waiting for a fence. C2 tests a
// field's or an element's object once and may keep the outcome across
// safepoints (dsoBarrierSetC2.cpp); the object's reference is live in the
// frame for as long as the access it guards is to come.
class PublishedObjectFinder : public OopClosure {
 public:
  explicit PublishedObjectFinder(JavaThread* thread) : _thread(thread), _found(false) {}
  virtual void do_oop(oop* p) { check(*p); }
  virtual void do_oop(narrowOop* p) { check(CompressedOops::decode(*p)); }
  bool found() const { return _found; }

 private:
  void check(oop obj) {
    if (_found || obj == NULL) {
      return;
    }
    markWord mark = obj->mark();
    // Thread.start() publishes its thread locked: the tag is in the
    // starter's lock record, which the stopped thread cannot change.
    if (mark.has_locker() && _thread->is_lock_owned((address)mark.locker())) {
      mark = mark.displaced_mark_helper();
    }
    if (!DsoMark::is_shared(mark)) {
      return;
    }
    uint64_t stamp = Atomic::load_acquire(&DsoReplicaTable::entry(DsoMark::index(mark))->_fence_stamp);
    _found = stamp != 0 && !DsoFence::passed(stamp);
  }

  JavaThread* _thread;
  bool _found;
};

// Each thread passes it between bytecodes or outside Java and VM code;
// one inside a JNI critical region may still write a local array it holds.
// A frame of C2's code that holds an object the fence publishes is
// deoptimized: it may have tested the object local before its tag.
class FenceClosure : public HandshakeClosure {
 public:
  FenceClosure() : HandshakeClosure("DsoFence"), _in_critical(0) {}
  void do_thread(Thread* thread) {
    JavaThread* jt = thread->as_Java_thread();
    if (jt->in_critical()) {
      Atomic::inc(&_in_critical);
      ResourceMark rm;
      jio_snprintf(last_in_critical, sizeof(last_in_critical), "%s", thread->name());
    }
    if (DsoFence::walks_compiled_frames() && jt->has_last_Java_frame()) {
      deoptimize_publishing_frames(jt);
    }
  }
  bool any_in_critical() const { return Atomic::load(&_in_critical) > 0; }

 private:
  // Whether a frame of C2's code is stopped at a call of a Java method: the
  // call makes all of memory new, so no test from before it is used after
  // it, and the frame needs no deoptimization. Elsewhere (a loop's poll, a
  // runtime stub's call: dso_access, an allocation's slow path, which
  // change raw memory alone) a test from before may still be used.
  static bool at_java_call(frame* fr) {
    CompiledMethod* cm = fr->cb()->as_compiled_method();
    if (cm->is_at_poll_or_poll_return(fr->pc())) {
      return false;  // a loop's poll (a return's was left out before)
    }
    ScopeDesc* scope = cm->scope_desc_at(fr->pc());
    if (scope->should_reexecute()) {
      return false;  // a runtime call that re-executes its bytecode (dso_access)
    }
    return Bytecodes::is_invoke(scope->method()->java_code_at(scope->bci()));
  }

  // Whether a frame's callee is deoptimizing it already (an uncommon trap,
  // or the unpacking of a deoptimization): patching it again would break
  // that. The interpreter it becomes tests at every access.
  static bool being_deoptimized(const CodeBlob* callee) {
    return callee != NULL && (callee == SharedRuntime::deopt_blob()
                              COMPILER2_PRESENT(|| callee == SharedRuntime::uncommon_trap_blob()));
  }

  static void deoptimize_publishing_frames(JavaThread* jt) {
    const CodeBlob* above = NULL;  // the code of the frame the last one called
    for (StackFrameStream fst(jt, true /* update */, true /* process_frames */); !fst.is_done();
         fst.next()) {
      frame* fr = fst.current();
      const CodeBlob* callee = above;
      above = fr->cb();
      if (!fr->is_compiled_frame() || fr->is_deoptimized_frame() ||
          !fr->cb()->as_compiled_method()->is_compiled_by_c2() || being_deoptimized(callee)) {
        continue;
      }
      // At a return's poll the frame is popped already: only its return is
      // left (frame::can_be_deoptimized).
      if (!fr->can_be_deoptimized()) {
        continue;
      }
      ResourceMark rm;
      if (at_java_call(fr)) {
        continue;
      }
      PublishedObjectFinder finder(jt);
      OopMapSet::oops_do(fr, fst.register_map(), &finder, DerivedPointerIterationMode::_ignore);
      if (finder.found()) {
        Deoptimization::deoptimize(jt, *fr);
        DsoFence::note_frame_deoptimized();
      }
    }
  }

  volatile int _in_critical;
};

}  // namespace

uint64_t DsoFence::stamp() {
  // After the tag's store: if this load misses a fence's start, that fence
  // began after the tag and suffices (both sides fence; see run_one).
  OrderAccess::fence();
  return Atomic::load(&_started) + 1;
}

bool DsoFence::passed(uint64_t stamp) {
  return Atomic::load_acquire(&_completed) >= stamp;
}

void DsoFence::request(uint64_t stamp) {
  uint64_t seen = Atomic::load(&_requested);
  while (seen < stamp) {
    uint64_t was = Atomic::cmpxchg(&_requested, seen, stamp);
    if (was == seen) {
      if (_monitor != NULL) {
        MonitorLocker ml(_monitor, Mutex::_no_safepoint_check_flag);
        ml.notify();
      }
      return;
    }
    seen = was;
  }
}

const char* DsoFence::describe() {
  static char text[160];
  jio_snprintf(text, sizeof(text), "fences begun " UINT64_FORMAT ", completed " UINT64_FORMAT
               ", asked for " UINT64_FORMAT "%s%s", Atomic::load(&_started),
               Atomic::load(&_completed), Atomic::load(&_requested),
               last_in_critical[0] != '\0' ? "; last in a JNI critical region: " : "",
               last_in_critical);
  return text;
}

bool DsoFence::flush_may_go(uint64_t stamp) {
  // Set before the test: a fence completing right after it still finds the
  // flag and wakes the retry.
  Atomic::release_store(&flush_waiting, 1);
  OrderAccess::fence();
  if (passed(stamp)) {
    return true;
  }
  Atomic::inc(&_flushes_waited);
  request(stamp);
  return false;
}

// One handshake with every Java thread; true if it is a complete fence.
bool DsoFence::run_one(JavaThread* self) {
  uint64_t fence = Atomic::add(&_started, (uint64_t)1);
  OrderAccess::fence();  // pairs with stamp()'s: the handshake begins after
  FenceClosure closure;
  jlong began = os::javaTimeNanos();
  Handshake::execute(&closure);
  jlong took = os::javaTimeNanos() - began;
  if (took > NANOSECS_PER_SEC) {
    // A thread in Java or VM code that reached no handshake for that long.
    log_warning(dso)("publication fence " UINT64_FORMAT " took %.1f s (a handshake with every "
                     "thread)", fence, took / 1e9);
  }
  if (closure.any_in_critical()) {
    return false;
  }
  Atomic::release_store(&_completed, fence);  // only this thread stores it
  return true;
}

void DsoFence::thread_entry(JavaThread* self, JavaThread* THREAD) {
  for (;;) {
    {
      ThreadBlockInVM blocked(self);
      MonitorLocker ml(_monitor, Mutex::_no_safepoint_check_flag);
      while (Atomic::load(&_requested) <= Atomic::load(&_completed)) {
        ml.wait();
      }
    }
    if (!run_one(self)) {
      // Critical regions are short by contract (no blocking, no JNI calls).
      ThreadBlockInVM blocked(self);
      os::naked_short_sleep(1);
      continue;
    }
    if (Atomic::xchg(&flush_waiting, 0) != 0 && DsoNode::sos() != NULL) {
      DsoNode::lib().djava_sos_retry_deferred(DsoNode::sos());
    }
  }
}

void DsoFence::start(JavaThread* current) {
  _walks_compiled_frames = CompilerConfig::is_c2_enabled();
  _monitor = new Monitor(Mutex::leaf, "DsoFence_lock", true, Mutex::_safepoint_check_never);
  DsoNode::start_daemon(current, "djava fence", &thread_entry);
}
