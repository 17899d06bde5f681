/*
 * djava: what Runtime.availableProcessors() answers in a program, and which
 * ForkJoin common pool is its (dsoProcessors.hpp).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoProcessors.hpp"
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

struct ProgramProcessors {
  uint64_t program;
  int processors;
  // The program's common pool on a thread server (the launcher's, a shared
  // object), once one of its threads here asked for it; empty until then.
  OopHandle common_pool;
};

// A node runs few programs at once; a linear scan under a plain mutex,
// taken only when a program asks (pool construction, not per task).
os::PlatformMutex* lock() {
  static os::PlatformMutex* mutex = new os::PlatformMutex();
  return mutex;
}

GrowableArrayCHeap<ProgramProcessors, mtInternal>* table() {
  static GrowableArrayCHeap<ProgramProcessors, mtInternal>* entries =
      new GrowableArrayCHeap<ProgramProcessors, mtInternal>(4);
  return entries;
}

int find_locked(uint64_t program) {
  for (int i = 0; i < table()->length(); i++) {
    if (table()->at(i).program == program) return i;
  }
  return -1;
}

}  // namespace

void DsoProcessors::set(uint64_t program, int processors) {
  if (program == 0 || processors <= 0) return;
  lock()->lock();
  if (find_locked(program) < 0) {
    ProgramProcessors entry = { program, processors, OopHandle() };
    table()->append(entry);
  }
  lock()->unlock();
}

int DsoProcessors::of(uint64_t program) {
  lock()->lock();
  int i = find_locked(program);
  int processors = i >= 0 ? table()->at(i).processors : 0;
  lock()->unlock();
  return processors;
}

void DsoProcessors::forget(uint64_t program) {
  OopHandle pool;
  lock()->lock();
  int i = find_locked(program);
  if (i >= 0) {
    pool = table()->at(i).common_pool;
    table()->delete_at(i);
  }
  lock()->unlock();
  pool.release(Universe::vm_global());
}

int DsoProcessors::for_thread(JavaThread* current) {
  if (!DsoNode::is_member()) return 0;
  return of(DsoThreads::current_program(current));
}

// The common pool of `program` if one of its threads here fetched it, else
// NULL. Resolved under the lock, so forget() cannot release it meanwhile.
static oop cached_common_pool(uint64_t program) {
  lock()->lock();
  int i = find_locked(program);
  oop pool = i >= 0 ? table()->at(i).common_pool.resolve() : (oop)NULL;
  lock()->unlock();
  return pool;
}

// Keeps `pool` as the common pool of `program` unless another thread of it
// got there first (then that one is the answer), or the program has ended
// here (then this thread's answer stays its own).
static oop cache_common_pool(uint64_t program, Handle pool) {
  OopHandle handle(Universe::vm_global(), pool());
  oop kept = pool();
  lock()->lock();
  int i = find_locked(program);
  if (i >= 0) {
    ProgramProcessors* entry = table()->adr_at(i);
    if (entry->common_pool.is_empty()) {
      entry->common_pool = handle;
      handle = OopHandle();
    } else {
      kept = entry->common_pool.resolve();
    }
  }
  lock()->unlock();
  handle.release(Universe::vm_global());
  return kept;
}

// java.util.concurrent.ProgramCommonPool's natives (jvm/java.base; the
// hooks that call them are patches/0027).

JVM_ENTRY(jboolean, PCP_onThreadServer(JNIEnv* env, jclass))
  return DsoNode::is_thread_server();
JVM_END

// The calling thread's program's common pool: the launcher answers the
// first asker of each program with its pool's id (djava.runtime.
// ThreadServer.fetchCommonPool); every later one finds it here. A fetch
// that fails throws: the server's own pool in its place would run the
// program's tasks where it cannot see them.
JVM_ENTRY(jobject, PCP_of0(JNIEnv* env, jclass))
  uint64_t program = DsoThreads::current_program(thread);
  if (program == 0) return NULL;
  oop cached = cached_common_pool(program);
  if (cached != NULL) return JNIHandles::make_local(thread, cached);
  JavaCallArguments args;
  args.push_long((jlong)program);
  oop fetched = DsoNode::call_runtime("djava/runtime/ThreadServer", "fetchCommonPool",
                                      "(J)Ljava/util/concurrent/ForkJoinPool;", &args, CHECK_NULL);
  if (fetched == NULL) return NULL;
  Handle pool(thread, fetched);
  return JNIHandles::make_local(thread, cache_common_pool(program, pool));
JVM_END

#define CC (char*)
#define FN_PTR(f) CAST_FROM_FN_PTR(void*, &f)

static JNINativeMethod common_pool_methods[] = {
  { CC"onThreadServer", CC"()Z",                                  FN_PTR(PCP_onThreadServer) },
  { CC"of0",            CC"()Ljava/util/concurrent/ForkJoinPool;", FN_PTR(PCP_of0) },
};

JVM_ENTRY(void, JVM_RegisterDjavaCommonPoolMethods(JNIEnv* env, jclass pool_class))
  ThreadToNativeFromVM ttnfv(thread);
  int ok = env->RegisterNatives(pool_class, common_pool_methods,
                                sizeof(common_pool_methods) / sizeof(JNINativeMethod));
  guarantee(ok == 0, "djava: registering ProgramCommonPool's natives failed");
JVM_END
