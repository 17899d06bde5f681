/*
 * djava: the JDK's process-wide values that are a program's, on a thread
 * server (dsoProgramValues.hpp).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoProgramValues.hpp"
#include "dso/dsoThreads.hpp"
#include "jni.h"
#include "memory/universe.hpp"
#include "oops/oopHandle.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "runtime/jniHandles.inline.hpp"
#include "runtime/os.inline.hpp"
#include "runtime/thread.hpp"
#include "utilities/growableArray.hpp"

namespace {

enum ProgramValue {
  common_pool = 0,   // java.util.concurrent.ForkJoinPool
  jdk_defaults = 1,  // java.util.ProgramDefaults
  delayer = 2,       // CompletableFuture's java.util.concurrent.ScheduledThreadPoolExecutor
  value_kinds = 3
};

// How each is fetched: a static method of djava.runtime.ThreadServer
// taking the program's id.
struct Fetcher {
  const char* method;
  const char* signature;
};
const Fetcher fetchers[value_kinds] = {
  { "fetchCommonPool", "(J)Ljava/util/concurrent/ForkJoinPool;" },
  { "fetchDefaults", "(J)Ljava/lang/Object;" },
  { "fetchDelayer", "(J)Ljava/util/concurrent/ScheduledThreadPoolExecutor;" },
};

struct ProgramValues {
  uint64_t program;
  OopHandle values[value_kinds];  // empty until fetched
};

// A node runs few programs at once; a linear scan under a plain mutex.
os::PlatformMutex* lock() {
  static os::PlatformMutex* mutex = new os::PlatformMutex();
  return mutex;
}

GrowableArrayCHeap<ProgramValues, mtInternal>* table() {
  static GrowableArrayCHeap<ProgramValues, mtInternal>* entries =
      new GrowableArrayCHeap<ProgramValues, mtInternal>(4);
  return entries;
}

int find_locked(uint64_t program) {
  for (int i = 0; i < table()->length(); i++) {
    if (table()->at(i).program == program) return i;
  }
  return -1;
}

// Set while this thread fetches a value: what it asks for meanwhile is the
// server's own.
THREAD_LOCAL bool fetching = false;

// The value of `program` if fetched, else NULL. Resolved under the lock,
// so forget() cannot release it meanwhile.
oop cached(uint64_t program, int kind) {
  lock()->lock();
  int i = find_locked(program);
  oop v = i >= 0 ? table()->at(i).values[kind].resolve() : (oop)NULL;
  lock()->unlock();
  return v;
}

// Keeps `v` as the value of `program` unless another of its threads got
// there first (then that one is the answer). A program that ended while
// the fetch ran (forget() took its entry) keeps nothing: its entry would
// outlive it, with a global handle.
oop keep(uint64_t program, int kind, Handle v) {
  OopHandle handle(Universe::vm_global(), v());
  oop kept = v();
  lock()->lock();
  int i = find_locked(program);
  if (i >= 0) {
    ProgramValues* entry = table()->adr_at(i);
    if (entry->values[kind].is_empty()) {
      entry->values[kind] = handle;
      handle = OopHandle();
    } else {
      kept = entry->values[kind].resolve();
    }
  }
  lock()->unlock();
  handle.release(Universe::vm_global());
  return kept;
}

// The calling thread's program's value of `kind`, as a local JNI handle;
// NULL for a thread of no program. A fetch that fails throws: the server's
// own value in its place would be silently another program's.
jobject value_of(JavaThread* thread, int kind) {
  uint64_t program = DsoThreads::current_program(thread);
  if (program == 0 || fetching) return NULL;
  oop v = cached(program, kind);
  if (v != NULL) return JNIHandles::make_local(thread, v);
  JavaThread* THREAD = thread;
  JavaCallArguments args;
  args.push_long((jlong)program);
  fetching = true;
  oop fetched = DsoNode::call_runtime("djava/runtime/ThreadServer", fetchers[kind].method,
                                      fetchers[kind].signature, &args, THREAD);
  fetching = false;
  if (HAS_PENDING_EXCEPTION || fetched == NULL) return NULL;
  Handle h(thread, fetched);
  return JNIHandles::make_local(thread, keep(program, kind, h));
}

}  // namespace

void DsoProgramValues::begin(uint64_t program) {
  if (program == 0) return;
  lock()->lock();
  if (find_locked(program) < 0) {
    ProgramValues entry;
    entry.program = program;
    table()->append(entry);
  }
  lock()->unlock();
}

void DsoProgramValues::forget(uint64_t program) {
  OopHandle gone[value_kinds];
  lock()->lock();
  int i = find_locked(program);
  if (i >= 0) {
    for (int k = 0; k < value_kinds; k++) gone[k] = table()->at(i).values[k];
    table()->delete_at(i);
  }
  lock()->unlock();
  for (int k = 0; k < value_kinds; k++) gone[k].release(Universe::vm_global());
}

// The natives of java.util.concurrent.ProgramCommonPool and
// java.util.ProgramDefaults (jvm/java.base).

JVM_ENTRY(jboolean, PV_onThreadServer(JNIEnv* env, jclass))
  return DsoNode::is_thread_server();
JVM_END

JVM_ENTRY(jobject, PV_commonPool(JNIEnv* env, jclass))
  return value_of(thread, common_pool);
JVM_END

JVM_ENTRY(jobject, PV_delayer(JNIEnv* env, jclass))
  return value_of(thread, delayer);
JVM_END

JVM_ENTRY(jobject, PV_defaults(JNIEnv* env, jclass))
  return value_of(thread, jdk_defaults);
JVM_END

#define CC (char*)
#define FN_PTR(f) CAST_FROM_FN_PTR(void*, &f)

static JNINativeMethod common_pool_methods[] = {
  { CC"onThreadServer", CC"()Z",                                  FN_PTR(PV_onThreadServer) },
  { CC"of0",            CC"()Ljava/util/concurrent/ForkJoinPool;", FN_PTR(PV_commonPool) },
  { CC"delayer0",       CC"()Ljava/util/concurrent/ScheduledThreadPoolExecutor;",
    FN_PTR(PV_delayer) },
};

static JNINativeMethod defaults_methods[] = {
  { CC"onThreadServer", CC"()Z",                          FN_PTR(PV_onThreadServer) },
  { CC"of0",            CC"()Ljava/util/ProgramDefaults;", FN_PTR(PV_defaults) },
};

static void register_natives(JNIEnv* env, jclass c, JNINativeMethod* methods, int count,
                             const char* what) {
  int ok = env->RegisterNatives(c, methods, count);
  guarantee(ok == 0, "djava: registering %s's natives failed", what);
}

JVM_ENTRY(void, JVM_RegisterDjavaCommonPoolMethods(JNIEnv* env, jclass pool_class))
  ThreadToNativeFromVM ttnfv(thread);
  register_natives(env, pool_class, common_pool_methods,
                   sizeof(common_pool_methods) / sizeof(JNINativeMethod), "ProgramCommonPool");
JVM_END

JVM_ENTRY(void, JVM_RegisterDjavaDefaultsMethods(JNIEnv* env, jclass defaults_class))
  ThreadToNativeFromVM ttnfv(thread);
  register_natives(env, defaults_class, defaults_methods,
                   sizeof(defaults_methods) / sizeof(JNINativeMethod), "ProgramDefaults");
JVM_END
