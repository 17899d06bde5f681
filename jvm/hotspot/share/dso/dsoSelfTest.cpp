/*
 * djava: the distributed heap's self-test (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoSelfTest.hpp"
#include "gc/shared/collectedHeap.hpp"
#include "gc/shared/gcCause.hpp"
#include "memory/oopFactory.hpp"
#include "memory/resourceArea.hpp"
#include "memory/universe.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/objArrayOop.inline.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/java.hpp"
#include "runtime/javaCalls.hpp"
#include "runtime/synchronizer.hpp"
#include "runtime/thread.hpp"
#include "utilities/ostream.hpp"

namespace {

// The objects under test, kept in Java arrays so that GC moves them and the
// test re-reads them from their new places after every step.
class SelfTest {
 public:
  SelfTest(JavaThread* current, int count) :
    _thread(current), _count(count),
    _indices(NEW_RESOURCE_ARRAY(uint, count)),
    _hashes(NEW_RESOURCE_ARRAY(intptr_t, count)) {}

  void run();

 private:
  static uint64_t global_id(int i) { return UCONST64(0x0d5a000000000000) + (uint64_t)i * 7 + 1; }

  oop make_object(int i);
  void share_all();
  void verify(const char* stage);
  void check(bool ok, const char* stage, int i, const char* what);
  void young_gc() { Universe::heap()->collect(GCCause::_wb_young_gc); }
  void full_gc() { Universe::heap()->collect(GCCause::_wb_full_gc); }
  void inflate_some();
  void deflate_all();
  void drop_half();
  void interpreter_refuses_replicas();
  void expect_refusal(const char* call, const char* what);

  JavaThread* const _thread;
  const int _count;
  uint* const _indices;
  intptr_t* const _hashes;
  objArrayHandle _shared;  // the replicas under test
  objArrayHandle _local;   // never shared; must never look shared
};

void SelfTest::check(bool ok, const char* stage, int i, const char* what) {
  if (!ok) {
    char message[256];
    jio_snprintf(message, sizeof(message), "djava self-test failed %s: object %d: %s", stage, i, what);
    vm_exit_during_initialization(message);
  }
}

// Plain instances, primitive arrays and reference arrays, of varied sizes.
oop SelfTest::make_object(int i) {
  JavaThread* THREAD = _thread;
  oop result = NULL;
  switch (i % 3) {
    case 0: result = InstanceKlass::cast(vmClasses::Object_klass())->allocate_instance(THREAD); break;
    case 1: result = oopFactory::new_intArray(i % 17, THREAD); break;
    default: result = oopFactory::new_objArray(vmClasses::Object_klass(), i % 5, THREAD); break;
  }
  check(!HAS_PENDING_EXCEPTION, "allocating", i, "allocation failed");
  return result;
}

void SelfTest::share_all() {
  for (int i = 0; i < _count; i++) {
    oop s = make_object(i);
    _shared->obj_at_put(i, s);
    oop l = make_object(i);
    _local->obj_at_put(i, l);
    if (i % 4 == 1) {
      ObjectSynchronizer::FastHashCode(_thread, _local->obj_at(i));  // hashed local objects stay local
    }
    if (i % 5 == 0) {
      // As a replica arriving from elsewhere: a fresh object given the
      // object's cluster-wide identity hash.
      uint hash = 0x1234567u + (uint)i;
      _indices[i] = DsoReplicaTable::materialize(_thread, _shared->obj_at(i), global_id(i), hash, NULL, 0);
      _hashes[i] = hash;
    } else {
      // As a local object escaping; half of them already hashed, which must
      // keep their identity hash.
      intptr_t before = (i % 2 == 0) ? ObjectSynchronizer::FastHashCode(_thread, _shared->obj_at(i)) : 0;
      _indices[i] = DsoReplicaTable::publish(_thread, _shared->obj_at(i), global_id(i), NULL, 0);
      _hashes[i] = ObjectSynchronizer::FastHashCode(_thread, _shared->obj_at(i));
      check(before == 0 || before == _hashes[i], "publishing", i, "the identity hash changed");
    }
    check(_indices[i] != 0, "publishing", i, "no index");
  }
}

void SelfTest::verify(const char* stage) {
  for (int i = 0; i < _count; i++) {
    oop l = _local->obj_at(i);
    check(!DsoMark::is_shared(l->mark()) && !DsoMark::is_shared_any(l), stage, i,
          "a local object looks shared");
    oop s = _shared->obj_at(i);
    if (s == NULL) {
      continue;  // dropped on purpose
    }
    markWord header = DsoMark::header_of(s);
    check(DsoMark::is_shared(header), stage, i, "the tag is gone");
    check(s->mark().has_monitor() || DsoMark::is_shared(s), stage, i, "the fast test misses the tag");
    check(DsoMark::index(header) == _indices[i], stage, i, "the index changed");
    check(DsoReplicaTable::replica(_indices[i]) == s, stage, i, "the table does not lead to the replica");
    check(DsoReplicaTable::entry(_indices[i])->_global_id == global_id(i), stage, i, "wrong global id");
    check(DsoReplicaTable::index_of(global_id(i)) == _indices[i], stage, i, "the id map is wrong");
    check(ObjectSynchronizer::FastHashCode(_thread, s) == _hashes[i], stage, i, "the identity hash changed");
  }
}

void SelfTest::inflate_some() {
  for (int i = 0; i < _count; i += 3) {
    ObjectSynchronizer::inflate(_thread, _shared->obj_at(i), ObjectSynchronizer::inflate_cause_vm_internal);
    check(_shared->obj_at(i)->mark().has_monitor(), "inflating", i, "no monitor");
  }
}

void SelfTest::deflate_all() {
  // The monitor deflation thread deflates idle monitors and puts the header,
  // tag included, back into the object.
  bool deflated = ObjectSynchronizer::request_deflate_idle_monitors();
  check(deflated, "deflating", 0, "monitor deflation did not run");
  for (int i = 0; i < _count; i += 3) {
    check(!_shared->obj_at(i)->mark().has_monitor(), "deflating", i, "still inflated");
  }
}

void SelfTest::drop_half() {
  for (int i = 1; i < _count; i += 2) {
    _shared->obj_at_put(i, NULL);
  }
}

// Java code that reaches a replica through the interpreter's field and array
// bytecodes must get a clear error while there is no shared-object cache,
// never the replica's bytes as if they were current.
void SelfTest::expect_refusal(const char* call, const char* what) {
  JavaThread* THREAD = _thread;
  check(HAS_PENDING_EXCEPTION, call, 0, "a shared object was accessed without coherence");
  oop ex = PENDING_EXCEPTION;
  CLEAR_PENDING_EXCEPTION;
  check(ex->is_a(vmClasses::InternalError_klass()), call, 0, "not an InternalError");
  oop message = java_lang_Throwable::message(ex);
  check(message != NULL, call, 0, "no message");
  const char* text = java_lang_String::as_utf8_string(message);
  check(strstr(text, what) != NULL && strstr(text, "shared object") != NULL, call, 0, text);
}

void SelfTest::interpreter_refuses_replicas() {
  JavaThread* THREAD = _thread;
  typeArrayHandle ints(THREAD, oopFactory::new_intArray(3, THREAD));
  Handle boxed(THREAD, InstanceKlass::cast(vmClasses::Integer_klass())->allocate_instance(THREAD));
  check(!HAS_PENDING_EXCEPTION, "interpreting", 0, "allocation failed");
  check(DsoReplicaTable::publish(THREAD, ints(), UCONST64(0x0d5b000000000001), NULL, 0) != 0 &&
        DsoReplicaTable::publish(THREAD, boxed(), UCONST64(0x0d5b000000000002), NULL, 0) != 0,
        "interpreting", 0, "cannot publish");

  Klass* arrays = SystemDictionary::resolve_or_fail(SymbolTable::new_symbol("java/util/Arrays"),
                                                    true, THREAD);
  check(!HAS_PENDING_EXCEPTION, "interpreting", 0, "no java.util.Arrays");
  JavaValue int_result(T_INT);
  JavaCallArguments read_args(ints);
  JavaCalls::call_static(&int_result, arrays, vmSymbols::hashCode_name(),
                         SymbolTable::new_symbol("([I)I"), &read_args, THREAD);
  expect_refusal("Arrays.hashCode(int[]) (iaload)", "cannot read");

  JavaValue void_result(T_VOID);
  JavaCallArguments write_args(ints);
  write_args.push_int(7);
  JavaCalls::call_static(&void_result, arrays, SymbolTable::new_symbol("fill"),
                         SymbolTable::new_symbol("([II)V"), &write_args, THREAD);
  expect_refusal("Arrays.fill(int[], int) (iastore)", "cannot write");

  JavaValue value_result(T_INT);
  JavaCalls::call_virtual(&value_result, boxed, vmClasses::Integer_klass(),
                          SymbolTable::new_symbol("intValue"), vmSymbols::void_int_signature(), THREAD);
  expect_refusal("Integer.intValue() (getfield)", "cannot read");

  // The same calls on local objects work, at the interpreter's full speed.
  typeArrayHandle local_ints(THREAD, oopFactory::new_intArray(3, THREAD));
  JavaCallArguments local_args(local_ints);
  JavaCalls::call_static(&int_result, arrays, vmSymbols::hashCode_name(),
                         SymbolTable::new_symbol("([I)I"), &local_args, THREAD);
  check(!HAS_PENDING_EXCEPTION && int_result.get_jint() == 29791, "interpreting", 0,
        "a local array was not read normally");
}

void SelfTest::run() {
  JavaThread* THREAD = _thread;
  _shared = oopFactory::new_objArray_handle(vmClasses::Object_klass(), _count, THREAD);
  _local = oopFactory::new_objArray_handle(vmClasses::Object_klass(), _count, THREAD);
  check(!HAS_PENDING_EXCEPTION, "starting", 0, "allocation failed");
  size_t live_before = DsoReplicaTable::live_count();

  share_all();
  verify("after publication");
  young_gc();
  verify("after a young GC");
  young_gc();
  young_gc();
  verify("after more young GCs");
  full_gc();
  verify("after a full GC");
  inflate_some();
  verify("with inflated monitors");
  full_gc();
  verify("after a full GC with inflated monitors");
  deflate_all();
  verify("after deflation");

  // Unreferenced replicas are collected; their entries come back for reuse.
  drop_half();
  full_gc();
  size_t reclaimed = DsoReplicaTable::reclaim_dead();
  check(reclaimed == (size_t)_count / 2, "collecting", 0, "the dropped replicas were not reclaimed");
  check(DsoReplicaTable::live_count() == live_before + _count - reclaimed, "collecting", 0, "wrong live count");
  for (int i = 1; i < _count; i += 2) {
    check(DsoReplicaTable::index_of(global_id(i)) == 0, "collecting", i, "a dead replica is still mapped");
  }
  verify("after collecting replicas");
  uint high_water = DsoReplicaTable::high_water();
  for (int i = 1; i < _count; i += 2) {
    _shared->obj_at_put(i, make_object(i));
    _indices[i] = DsoReplicaTable::publish(_thread, _shared->obj_at(i), global_id(i), NULL, 0);
    _hashes[i] = ObjectSynchronizer::FastHashCode(_thread, _shared->obj_at(i));
    check(_indices[i] != 0, "republishing", i, "no index");
  }
  check(DsoReplicaTable::high_water() == high_water, "republishing", 0, "freed entries were not reused");
  full_gc();
  verify("after republishing");
  {
    HandleMark hm(_thread);
    interpreter_refuses_replicas();
  }
  DsoSelfTest::runtime_paths_refuse_replicas(_thread);
  verify("after interpreting");

  tty->print_cr("djava self-test passed: %d replicas and %d local objects through 3 young GCs, "
                "3 full GCs, hashing, inflation and deflation; %zu collected and reused; "
                "the interpreter and the runtime paths refuse replicas without a cache",
                _count, _count, reclaimed);
}

}  // namespace

void DsoSelfTest::run(JavaThread* current) {
  ResourceMark rm(current);
  HandleMark hm(current);
  SelfTest(current, (int)DjavaSelfTestObjects).run();
}
