/*
 * djava: the natives of djava.runtime.Node (jvm/classes), registered through
 * HotSpot's special-natives table (patches/0007).
 */

#include "precompiled.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoNode.hpp"
#include "jni.h"
#include "runtime/jniHandles.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"

#define NODE_ENTRY(result_type, name) JVM_ENTRY(static result_type, name)

static bool require_member(JavaThread* current) {
  if (DsoNode::is_member()) {
    return true;
  }
  Exceptions::fthrow(current, __FILE__, __LINE__, vmSymbols::java_lang_IllegalStateException(),
                     "djava: this VM is not a cluster node (run it with -XX:+DistributedJava)");
  return false;
}

NODE_ENTRY(jboolean, Node_isMember(JNIEnv* env, jclass))
  return DsoNode::is_member();
JVM_END

NODE_ENTRY(jlong, Node_program(JNIEnv* env, jclass))
  return (jlong)DsoNode::program();
JVM_END

NODE_ENTRY(jlong, Node_publish(JNIEnv* env, jclass, jobject obj))
  if (!require_member(thread)) return 0;
  Handle h(thread, JNIHandles::resolve(obj));
  return (jlong)DsoHeap::publish(thread, h, THREAD);
JVM_END

NODE_ENTRY(jobject, Node_attach(JNIEnv* env, jclass, jlong id))
  if (!require_member(thread)) return NULL;
  oop replica = DsoHeap::attach(thread, (uint64_t)id, CHECK_NULL);
  return JNIHandles::make_local(THREAD, replica);
JVM_END

NODE_ENTRY(jlong, Node_idOf(JNIEnv* env, jclass, jobject obj))
  oop o = JNIHandles::resolve(obj);
  if (o == NULL || !DsoMark::is_shared(o->mark())) return 0;
  return (jlong)DsoHeap::id_of(o);
JVM_END

#define CC (char*)
#define FN_PTR(f) CAST_FROM_FN_PTR(void*, &f)

static JNINativeMethod node_methods[] = {
  { CC"isMember", CC"()Z",                   FN_PTR(Node_isMember) },
  { CC"program",  CC"()J",                   FN_PTR(Node_program) },
  { CC"publish",  CC"(Ljava/lang/Object;)J", FN_PTR(Node_publish) },
  { CC"attach",   CC"(J)Ljava/lang/Object;", FN_PTR(Node_attach) },
  { CC"idOf",     CC"(Ljava/lang/Object;)J", FN_PTR(Node_idOf) },
};

JVM_ENTRY(void, JVM_RegisterDjavaNodeMethods(JNIEnv* env, jclass node_class))
  ThreadToNativeFromVM ttnfv(thread);
  int ok = env->RegisterNatives(node_class, node_methods,
                                sizeof(node_methods) / sizeof(JNINativeMethod));
  guarantee(ok == 0, "djava: registering djava.runtime.Node's natives failed");
JVM_END
