/*
 * djava: the self-test's part for the runtime paths (dsoAccess.hpp). On a
 * VM that is not a cluster node a replica has no chunk; Unsafe,
 * System.arraycopy, Object.clone, reflection on arrays and JNI's array
 * functions must each refuse it with an InternalError naming the shared
 * object, never read or write its bytes as if they were current. The same
 * calls on local objects must work.
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoSelfTest.hpp"
#include "jvm.h"
#include "memory/oopFactory.hpp"
#include "memory/resourceArea.hpp"
#include "oops/arrayOop.hpp"
#include "oops/oop.inline.hpp"
#include "oops/typeArrayOop.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/java.hpp"
#include "runtime/javaCalls.hpp"
#include "runtime/jniHandles.inline.hpp"
#include "runtime/thread.inline.hpp"

namespace {

class PathsTest {
 public:
  explicit PathsTest(JavaThread* current) : _thread(current) {}
  void run();

 private:
  void check(bool ok, const char* call, const char* what);
  void expect_refusal(const char* call, const char* what);
  void expect_success(const char* call);
  Klass* klass(const char* name);
  void call_static(JavaValue* result, Klass* k, const char* name, const char* signature,
                   JavaCallArguments* args);
  void call_virtual(JavaValue* result, Klass* k, const char* name, const char* signature,
                    JavaCallArguments* args);

  // System.arraycopy(src, 0, dst, 0, 3)
  void arraycopy(Handle src, Handle dst);
  // Object.clone (JVM_Clone, as the native method is called)
  void clone(Handle obj);
  // jdk.internal.misc.Unsafe
  void unsafe_get_int(Handle obj);
  void unsafe_put_int(Handle obj);
  void unsafe_cas_int(Handle obj);
  // java.lang.reflect.Array
  void array_get_int(Handle obj);
  void array_set_int(Handle obj);
  // JNI, called from native code
  void jni_get_region(Handle obj);
  void jni_set_region(Handle obj);
  void jni_critical(Handle obj);

  JavaThread* const _thread;
  Handle _unsafe;
};

void PathsTest::check(bool ok, const char* call, const char* what) {
  if (!ok) {
    char message[512];
    jio_snprintf(message, sizeof(message), "djava self-test failed on the runtime paths: %s: %s",
                 call, what);
    vm_exit_during_initialization(message);
  }
}

void PathsTest::expect_refusal(const char* call, const char* what) {
  JavaThread* THREAD = _thread;
  check(HAS_PENDING_EXCEPTION, call, "a shared object was accessed without coherence");
  oop ex = PENDING_EXCEPTION;
  CLEAR_PENDING_EXCEPTION;
  oop message = java_lang_Throwable::message(ex);
  const char* text = message != NULL ? java_lang_String::as_utf8_string(message) : "(no message)";
  if (!ex->is_a(vmClasses::InternalError_klass())) {
    ResourceMark rm(THREAD);
    check(false, call, err_msg("not an InternalError but a %s: %s", ex->klass()->external_name(), text));
  }
  check(strstr(text, what) != NULL && strstr(text, "shared object 0x") != NULL &&
        strstr(text, "[I") != NULL, call, text);
}

void PathsTest::expect_success(const char* call) {
  JavaThread* THREAD = _thread;
  if (HAS_PENDING_EXCEPTION) {
    oop message = java_lang_Throwable::message(PENDING_EXCEPTION);
    check(false, call, message != NULL ? java_lang_String::as_utf8_string(message)
                                       : PENDING_EXCEPTION->klass()->external_name());
  }
}

Klass* PathsTest::klass(const char* name) {
  JavaThread* THREAD = _thread;
  Klass* k = SystemDictionary::resolve_or_fail(SymbolTable::new_symbol(name), true, THREAD);
  check(!HAS_PENDING_EXCEPTION, name, "cannot load the class");
  return k;
}

void PathsTest::call_static(JavaValue* result, Klass* k, const char* name, const char* signature,
                            JavaCallArguments* args) {
  JavaCalls::call_static(result, k, SymbolTable::new_symbol(name), SymbolTable::new_symbol(signature),
                         args, _thread);
}

void PathsTest::call_virtual(JavaValue* result, Klass* k, const char* name, const char* signature,
                             JavaCallArguments* args) {
  JavaCalls::call_virtual(result, k, SymbolTable::new_symbol(name), SymbolTable::new_symbol(signature),
                          args, _thread);
}

void PathsTest::arraycopy(Handle src, Handle dst) {
  JavaValue result(T_VOID);
  JavaCallArguments args;
  args.push_oop(src);
  args.push_int(0);
  args.push_oop(dst);
  args.push_int(0);
  args.push_int(3);
  call_static(&result, vmClasses::System_klass(), "arraycopy", "(Ljava/lang/Object;ILjava/lang/Object;II)V",
              &args);
}

void PathsTest::clone(Handle obj) {
  JavaThread* THREAD = _thread;
  jobject local = JNIHandles::make_local(THREAD, obj());
  {
    // A JVM or JNI entry pops the handles back to the thread's last
    // HandleMark when it returns: this one, not the test's.
    HandleMark hm(THREAD);
    ThreadToNativeFromVM in_native(THREAD);
    JVM_Clone(THREAD->jni_environment(), local);
  }
  JNIHandles::destroy_local(local);
}

void PathsTest::unsafe_get_int(Handle obj) {
  JavaValue result(T_INT);
  JavaCallArguments args(_unsafe);
  args.push_oop(obj);
  args.push_long(arrayOopDesc::base_offset_in_bytes(T_INT));
  call_virtual(&result, vmClasses::internal_Unsafe_klass(), "getInt", "(Ljava/lang/Object;J)I", &args);
}

void PathsTest::unsafe_put_int(Handle obj) {
  JavaValue result(T_VOID);
  JavaCallArguments args(_unsafe);
  args.push_oop(obj);
  args.push_long(arrayOopDesc::base_offset_in_bytes(T_INT));
  args.push_int(7);
  call_virtual(&result, vmClasses::internal_Unsafe_klass(), "putIntVolatile", "(Ljava/lang/Object;JI)V",
               &args);
}

void PathsTest::unsafe_cas_int(Handle obj) {
  JavaValue result(T_BOOLEAN);
  JavaCallArguments args(_unsafe);
  args.push_oop(obj);
  args.push_long(arrayOopDesc::base_offset_in_bytes(T_INT));
  args.push_int(0);
  args.push_int(1);
  call_virtual(&result, vmClasses::internal_Unsafe_klass(), "compareAndSetInt",
               "(Ljava/lang/Object;JII)Z", &args);
}

void PathsTest::array_get_int(Handle obj) {
  JavaValue result(T_INT);
  JavaCallArguments args;
  args.push_oop(obj);
  args.push_int(1);
  call_static(&result, klass("java/lang/reflect/Array"), "getInt", "(Ljava/lang/Object;I)I", &args);
}

void PathsTest::array_set_int(Handle obj) {
  JavaValue result(T_VOID);
  JavaCallArguments args;
  args.push_oop(obj);
  args.push_int(1);
  args.push_int(5);
  call_static(&result, klass("java/lang/reflect/Array"), "setInt", "(Ljava/lang/Object;II)V", &args);
}

void PathsTest::jni_get_region(Handle obj) {
  JavaThread* THREAD = _thread;
  jintArray local = (jintArray)JNIHandles::make_local(THREAD, obj());
  {
    // A JVM or JNI entry pops the handles back to the thread's last
    // HandleMark when it returns: this one, not the test's.
    HandleMark hm(THREAD);
    ThreadToNativeFromVM in_native(THREAD);
    jint buffer[3];
    THREAD->jni_environment()->GetIntArrayRegion(local, 0, 3, buffer);
  }
  JNIHandles::destroy_local(local);
}

void PathsTest::jni_set_region(Handle obj) {
  JavaThread* THREAD = _thread;
  jintArray local = (jintArray)JNIHandles::make_local(THREAD, obj());
  {
    // A JVM or JNI entry pops the handles back to the thread's last
    // HandleMark when it returns: this one, not the test's.
    HandleMark hm(THREAD);
    ThreadToNativeFromVM in_native(THREAD);
    jint buffer[3] = { 1, 2, 3 };
    THREAD->jni_environment()->SetIntArrayRegion(local, 0, 3, buffer);
  }
  JNIHandles::destroy_local(local);
}

void PathsTest::jni_critical(Handle obj) {
  JavaThread* THREAD = _thread;
  jintArray local = (jintArray)JNIHandles::make_local(THREAD, obj());
  {
    // A JVM or JNI entry pops the handles back to the thread's last
    // HandleMark when it returns: this one, not the test's.
    HandleMark hm(THREAD);
    ThreadToNativeFromVM in_native(THREAD);
    JNIEnv* env = THREAD->jni_environment();
    void* elements = env->GetPrimitiveArrayCritical(local, NULL);
    if (elements != NULL) {
      env->ReleasePrimitiveArrayCritical(local, elements, 0);
    }
  }
  JNIHandles::destroy_local(local);
}

void PathsTest::run() {
  JavaThread* THREAD = _thread;
  typeArrayHandle shared(THREAD, oopFactory::new_intArray(3, THREAD));
  typeArrayHandle local(THREAD, oopFactory::new_intArray(3, THREAD));
  check(!HAS_PENDING_EXCEPTION, "allocating", "allocation failed");
  check(DsoReplicaTable::publish(THREAD, shared(), UCONST64(0x0d5c000000000001), NULL, 0) != 0, "publishing",
        "no index");
  JavaValue unsafe(T_OBJECT);
  JavaCallArguments none;
  call_static(&unsafe, vmClasses::internal_Unsafe_klass(), "getUnsafe", "()Ljdk/internal/misc/Unsafe;",
              &none);
  expect_success("Unsafe.getUnsafe()");
  _unsafe = Handle(THREAD, unsafe.get_oop());

  arraycopy(shared, local);
  expect_refusal("System.arraycopy from a replica", "cannot read");
  arraycopy(local, shared);
  expect_refusal("System.arraycopy into a replica", "cannot write");
  arraycopy(shared, shared);
  expect_refusal("System.arraycopy within a replica", "cannot write");
  clone(shared);
  expect_refusal("Object.clone of a replica", "cannot read");
  unsafe_get_int(shared);
  expect_refusal("Unsafe.getInt", "cannot read");
  unsafe_put_int(shared);
  expect_refusal("Unsafe.putIntVolatile", "cannot write");
  unsafe_cas_int(shared);
  expect_refusal("Unsafe.compareAndSetInt", "cannot write");
  array_get_int(shared);
  expect_refusal("Array.getInt", "cannot read");
  array_set_int(shared);
  expect_refusal("Array.setInt", "cannot write");
  jni_get_region(shared);
  expect_refusal("JNI GetIntArrayRegion", "cannot read");
  jni_set_region(shared);
  expect_refusal("JNI SetIntArrayRegion", "cannot write");
  jni_critical(shared);
  expect_refusal("JNI GetPrimitiveArrayCritical", "cannot read");
  for (int i = 0; i < 3; i++) {
    check(shared->int_at(i) == 0, "after the refusals", "a replica's bytes were written");
  }

  // The same on local objects works.
  jni_set_region(local);
  expect_success("JNI SetIntArrayRegion on a local array");
  unsafe_cas_int(local);
  expect_success("Unsafe.compareAndSetInt on a local array");
  array_set_int(local);
  expect_success("Array.setInt on a local array");
  typeArrayHandle other(THREAD, oopFactory::new_intArray(3, THREAD));
  arraycopy(local, other);
  expect_success("System.arraycopy between local arrays");
  check(other->int_at(0) == 1 && other->int_at(1) == 5 && other->int_at(2) == 3,
        "local arrays", "wrong values after the calls");
  jni_critical(local);
  expect_success("JNI GetPrimitiveArrayCritical on a local array");
  clone(local);
  expect_success("Object.clone of a local array");
}

}  // namespace

void DsoSelfTest::runtime_paths_refuse_replicas(JavaThread* current) {
  ResourceMark rm(current);
  HandleMark hm(current);
  PathsTest(current).run();
}
