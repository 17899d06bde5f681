/*
 * djava: the natives of djava.runtime.Node (jvm/classes), registered through
 * HotSpot's special-natives table (patches/0007).
 */

#include "precompiled.hpp"
#include "oops/oop.inline.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoStatistics.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoProcessors.hpp"
#include "dso/dsoProgramValues.hpp"
#include "dso/dsoThreads.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "memory/oopFactory.hpp"
#include "memory/resourceArea.hpp"
#include "oops/klass.inline.hpp"
#include "oops/typeArrayOop.inline.hpp"
#include "runtime/arguments.hpp"
#include "runtime/fieldDescriptor.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "utilities/growableArray.hpp"
#include "jni.h"
#include "logging/log.hpp"
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

static char* utf8_or_null(oop s) {
  return s == NULL ? NULL : java_lang_String::as_utf8_string(s);
}

static oop string_or_null(const char* text, TRAPS) {
  if (text == NULL || text[0] == '\0') return NULL;
  return java_lang_String::create_oop_from_str(text, THREAD);
}

// The next event from the thread manager (djava.runtime.Event), or null
// after timeout_ms (< 0: wait for one).
NODE_ENTRY(jobject, Node_nextEvent(JNIEnv* env, jclass, jlong timeout_ms))
  if (!require_member(thread)) return NULL;
  djava_tm_event* ev = NEW_C_HEAP_OBJ(djava_tm_event, mtInternal);
  memset(ev, 0, sizeof(*ev));
  int rc;
  {
    ThreadToNativeFromVM in_native(thread);
    rc = DsoNode::lib().djava_tm_next_event(DsoNode::tm(), ev, timeout_ms);
  }
  if (rc == 0 && !DsoNode::is_leaving()) {
    // Idle: a node whose cache lost a sos-server can serve nothing any
    // more, even with no thread touching a shared object to find out.
    char why[512];
    if (DsoNode::lib().djava_sos_lost(DsoNode::sos(), why, sizeof(why)) != 0) {
      FREE_C_HEAP_OBJ(ev);
      DsoNode::cluster_lost(thread, why);  // returns only if the node is leaving meanwhile
      return NULL;
    }
  }
  if (rc == 0 || DsoNode::is_leaving()) {
    // Nothing yet, or this node is leaving: events no longer matter.
    FREE_C_HEAP_OBJ(ev);
    return NULL;
  }
  if (rc < 0) {
    ev->kind = DJAVA_TM_EV_DISCONNECTED;
    jio_snprintf(ev->detail, sizeof(ev->detail), "%s", DsoNode::lib().djava_tm_last_error());
  }
  if (ev->kind == DJAVA_TM_EV_STATE) {
    DsoThreads::note_live_non_daemon(ev->program, ev->live_non_daemon);
  }
  HandleMark hm(thread);
  // The event loop of a node calls this for every event as long as the
  // node runs (an unpark from another node is one): the call's arguments
  // (JavaCallArguments of this size live in the resource area) and the
  // strings' conversions must not pile up in its thread's area.
  ResourceMark rm(thread);
  Handle data;
  if (ev->data.data != NULL) {
    typeArrayOop bytes = oopFactory::new_byteArray((int)ev->data.len, THREAD);
    if (!HAS_PENDING_EXCEPTION) {
      memcpy(bytes->byte_at_addr(0), ev->data.data, ev->data.len);
      data = Handle(thread, bytes);
    }
  }
  DsoNode::lib().djava_tm_buffer_free(&ev->data);
  Handle server_name, detail, classpath, launch_node;
  if (!HAS_PENDING_EXCEPTION) server_name = Handle(thread, string_or_null(ev->server_name, THREAD));
  if (!HAS_PENDING_EXCEPTION) detail = Handle(thread, string_or_null(ev->detail, THREAD));
  if (!HAS_PENDING_EXCEPTION) classpath = Handle(thread, string_or_null(ev->classpath, THREAD));
  if (!HAS_PENDING_EXCEPTION) launch_node = Handle(thread, string_or_null(ev->launch_node, THREAD));
  if (HAS_PENDING_EXCEPTION) {
    FREE_C_HEAP_OBJ(ev);
    return NULL;
  }
  TempNewSymbol name = SymbolTable::new_symbol("djava/runtime/Event");
  Klass* k = SystemDictionary::resolve_or_fail(name, true, THREAD);
  if (HAS_PENDING_EXCEPTION) {
    FREE_C_HEAP_OBJ(ev);
    return NULL;
  }
  JavaCallArguments args(28);  // 17 arguments, 7 of them two slots
  args.push_int(ev->kind);
  args.push_long((jlong)ev->program);
  args.push_long((jlong)ev->thread);
  args.push_int(ev->state);
  args.push_long((jlong)ev->server_id);
  args.push_int((jint)ev->live_non_daemon);
  args.push_long((jlong)ev->request_id);
  args.push_int(ev->stream);
  args.push_int(ev->status);
  args.push_oop(server_name);
  args.push_oop(detail);
  args.push_oop(classpath);
  args.push_oop(launch_node);
  args.push_oop(data);
  args.push_int((jint)MIN2(ev->processors, (uint32_t)max_jint));
  args.push_long((jlong)ev->inherited_locals);
  args.push_long((jlong)ev->reply_to);
  FREE_C_HEAP_OBJ(ev);
  TempNewSymbol signature = SymbolTable::new_symbol(
      "(IJJIJIJIILjava/lang/String;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;[BIJJ)V");
  Handle event = JavaCalls::construct_new_instance(InstanceKlass::cast(k), signature, &args, CHECK_NULL);
  return JNIHandles::make_local(THREAD, event());
JVM_END

NODE_ENTRY(void, Node_answerResource(JNIEnv* env, jclass, jlong request_id, jbyteArray bytes,
                                     jstring error))
  if (!require_member(thread)) return;
  ResourceMark rm(thread);
  typeArrayOop array = (typeArrayOop)JNIHandles::resolve(bytes);
  const char* why = utf8_or_null(JNIHandles::resolve(error));
  size_t length = array != NULL ? (size_t)array->length() : 0;
  char* copy = NEW_RESOURCE_ARRAY(char, length + 1);
  if (array != NULL) memcpy(copy, array->byte_at_addr(0), length);
  ThreadToNativeFromVM in_native(thread);
  DsoNode::lib().djava_tm_answer_resource(DsoNode::tm(), (uint64_t)request_id, array != NULL ? 1 : 0,
                                          copy, length, why);
JVM_END

// A class file or resource of the program, from its launcher; null if it
// has none. timeout_ms < 0: no limit (the manager answers every request).
NODE_ENTRY(jbyteArray, Node_fetchResource(JNIEnv* env, jclass, jlong program, jstring name,
                                          jint timeout_ms))
  if (!require_member(thread)) return NULL;
  ResourceMark rm(thread);
  const char* resource = utf8_or_null(JNIHandles::resolve_non_null(name));
  djava_tm_buffer buffer = { NULL, 0 };
  int rc;
  {
    ThreadToNativeFromVM in_native(thread);
    rc = DsoNode::lib().djava_tm_fetch_resource(DsoNode::tm(), (uint64_t)program, resource,
                                                timeout_ms, &buffer);
  }
  if (rc == DJAVA_TM_FETCH_NOT_FOUND) {
    DsoNode::lib().djava_tm_buffer_free(&buffer);
    return NULL;
  }
  if (rc != DJAVA_TM_FETCH_FOUND) {
    DsoNode::lib().djava_tm_buffer_free(&buffer);
    THROW_MSG_NULL(vmSymbols::java_io_IOException(),
                   err_msg("djava: fetching %s from the program's launcher: %s", resource,
                           rc == DJAVA_TM_FETCH_TIMEOUT ? "no answer in time"
                                                        : DsoNode::lib().djava_tm_last_error()));
  }
  typeArrayOop bytes = oopFactory::new_byteArray((int)buffer.len, THREAD);
  if (!HAS_PENDING_EXCEPTION && buffer.len > 0) {
    memcpy(bytes->byte_at_addr(0), buffer.data, buffer.len);
  }
  DsoNode::lib().djava_tm_buffer_free(&buffer);
  if (HAS_PENDING_EXCEPTION) return NULL;
  return (jbyteArray)JNIHandles::make_local(THREAD, bytes);
JVM_END

NODE_ENTRY(void, Node_console(JNIEnv* env, jclass, jlong program, jlong thread_id, jint stream,
                              jbyteArray bytes, jint offset, jint length))
  if (!require_member(thread)) return;
  typeArrayOop array = (typeArrayOop)JNIHandles::resolve_non_null(bytes);
  if (offset < 0 || length < 0 || offset > array->length() - length) {
    THROW(vmSymbols::java_lang_IndexOutOfBoundsException());
  }
  ResourceMark rm(thread);
  char* copy = NEW_RESOURCE_ARRAY(char, length + 1);
  memcpy(copy, array->byte_at_addr(offset), (size_t)length);
  if (stream == DJAVA_TM_STREAM_OUT || stream == DJAVA_TM_STREAM_ERR) {
    DsoThreads::console_sent();  // the launcher's own streams confirm each write
  }
  ThreadToNativeFromVM in_native(thread);
  DsoNode::lib().djava_tm_console(DsoNode::tm(), (uint64_t)program, (uint64_t)thread_id, stream,
                                  copy, (size_t)length);
JVM_END

// A thread server meets a program: its class loader here, and the processor
// count its threads see (the thread manager's, in the first ASSIGN).
NODE_ENTRY(void, Node_registerProgram(JNIEnv* env, jclass, jlong program, jobject loader,
                                      jint processors))
  if (!require_member(thread)) return;
  Handle h(thread, JNIHandles::resolve_non_null(loader));
  DsoHeap::register_loader(thread, (uint64_t)program, h);
  DsoProcessors::set((uint64_t)program, processors);
  DsoProgramValues::begin((uint64_t)program);
JVM_END

// The program ended: this node stops serving it. The loader goes before the
// program's threads here are stopped (DsoThreads::thread_exiting then ends
// one without dispatching its uncaught exception, whose handler went with
// the program); a thread of the program that called System.exit waits for
// it to go before it ends (DsoThreads).
NODE_ENTRY(void, Node_endProgram(JNIEnv* env, jclass, jlong program))
  if (!require_member(thread)) return;
  // A program that ran no thread here has no table of its own to print.
  if (PrintDistributedStatistics && DsoHeap::runs_program((uint64_t)program)) {
    char title[64];
    jio_snprintf(title, sizeof(title), ", program " UINT64_FORMAT, (uint64_t)program);
    DsoStatistics::print(thread, tty, (uint64_t)program, title);
  }
  DsoHeap::drop_loader((uint64_t)program);
  DsoProcessors::forget((uint64_t)program);
  DsoProgramValues::forget((uint64_t)program);
JVM_END

// Then its objects and classes go, once its threads here are gone
// (drop_program waits for them), so that the server serves the next program
// as it was. Returns what was done, for the log.
NODE_ENTRY(jstring, Node_dropProgram(JNIEnv* env, jclass, jlong program))
  if (!require_member(thread)) return NULL;
  char summary[200];
  DsoHeap::drop_program(thread, (uint64_t)program, summary, sizeof(summary));
  oop text = java_lang_String::create_oop_from_str(summary, CHECK_NULL);
  return (jstring)JNIHandles::make_local(thread, text);
JVM_END

// A thread server's statistics of `program`, for its launcher
// (-XX:+PrintDistributedStatistics there; this node need not have the flag).
NODE_ENTRY(void, Node_answerStatistics(JNIEnv* env, jclass, jlong request_id, jlong program))
  if (!require_member(thread)) return;
  ResourceMark rm(thread);
  stringStream text;
  char title[64];
  jio_snprintf(title, sizeof(title), ", program " UINT64_FORMAT, (uint64_t)program);
  DsoStatistics::print(thread, &text, (uint64_t)program, title);
  ThreadToNativeFromVM in_native(thread);
  if (DsoNode::lib().djava_tm_answer_statistics(DsoNode::tm(), (uint64_t)request_id, text.base(),
                                                text.size()) != 0) {
    log_warning(dso)("answering the statistics of program " UINT64_FORMAT ": %s",
                     (uint64_t)program, DsoNode::lib().djava_tm_last_error());
  }
JVM_END

NODE_ENTRY(void, Node_startThread(JNIEnv* env, jclass, jobject t, jobject loader,
                                  jlong inherited_locals))
  if (!require_member(thread)) return;
  Handle th(thread, JNIHandles::resolve_non_null(t));
  Handle l(thread, JNIHandles::resolve(loader));
  DsoThreads::start_shipped(thread, th, l, (uint64_t)inherited_locals, THREAD);
JVM_END

NODE_ENTRY(jlong, Node_programOf(JNIEnv* env, jclass, jobject t))
  return (jlong)DsoThreads::program_served(JNIHandles::resolve(t));
JVM_END

NODE_ENTRY(jboolean, Node_stopThread(JNIEnv* env, jclass, jobject t))
  if (!require_member(thread)) return JNI_FALSE;
  Handle th(thread, JNIHandles::resolve_non_null(t));
  return DsoThreads::stop_here(thread, th) ? JNI_TRUE : JNI_FALSE;
JVM_END

NODE_ENTRY(jboolean, Node_isThreadServer(JNIEnv* env, jclass))
  return DsoNode::is_member() && DsoNode::is_thread_server();
JVM_END

// The launcher's module options (--add-opens, --add-exports, --add-reads,
// --add-modules), each "KIND VALUE" (kind: addopens, addexports, addreads,
// addmods): the java launcher turned them into the numbered properties
// jdk.module.KIND.N, which the module system took out of System's
// properties; the VM keeps them.
NODE_ENTRY(jobjectArray, Node_moduleOptions(JNIEnv* env, jclass))
  ResourceMark rm(thread);
  static const char* const kinds[] = { "addopens", "addexports", "addreads", "addmods" };
  GrowableArray<const char*> options;
  for (SystemProperty* p = Arguments::system_properties(); p != NULL; p = p->next()) {
    for (const char* kind : kinds) {
      char prefix[32];
      jio_snprintf(prefix, sizeof(prefix), "jdk.module.%s.", kind);
      if (strncmp(p->key(), prefix, strlen(prefix)) == 0 && p->value() != NULL) {
        size_t length = strlen(kind) + strlen(p->value()) + 2;
        char* option = NEW_RESOURCE_ARRAY(char, length);
        jio_snprintf(option, length, "%s %s", kind, p->value());
        options.append(option);
      }
    }
  }
  objArrayOop made = oopFactory::new_objArray(vmClasses::String_klass(), options.length(), CHECK_NULL);
  objArrayHandle array(THREAD, made);
  for (int i = 0; i < options.length(); i++) {
    oop s = java_lang_String::create_oop_from_str(options.at(i), CHECK_NULL);
    array->obj_at_put(i, s);
  }
  return (jobjectArray)JNIHandles::make_local(THREAD, array());
JVM_END

// A method of jdk.internal.module.Modules, the module system's own way to
// open, export and read at run time (the VM may call it: no access check).
static void call_modules(const char* method, const char* signature, JavaCallArguments* args,
                         TRAPS) {
  TempNewSymbol modules = SymbolTable::new_symbol("jdk/internal/module/Modules");
  Klass* k = SystemDictionary::resolve_or_fail(modules, true, CHECK);
  TempNewSymbol name = SymbolTable::new_symbol(method);
  TempNewSymbol sig = SymbolTable::new_symbol(signature);
  JavaValue result(T_VOID);
  JavaCalls::call_static(&result, k, name, sig, args, THREAD);
}

// A thread server applies a program's --add-opens or --add-exports: package
// pn of module m, opened or exported to target (the program loader's unnamed
// module, for ALL-UNNAMED), as the module system does at start-up.
NODE_ENTRY(void, Node_openPackage(JNIEnv* env, jclass, jobject m, jstring pn, jobject target,
                                  jboolean open))
  JavaCallArguments args;
  args.push_oop(Handle(thread, JNIHandles::resolve_non_null(m)));
  args.push_oop(Handle(thread, JNIHandles::resolve_non_null(pn)));
  args.push_oop(Handle(thread, JNIHandles::resolve_non_null(target)));
  call_modules(open ? "addOpens" : "addExports",
               "(Ljava/lang/Module;Ljava/lang/String;Ljava/lang/Module;)V", &args, THREAD);
JVM_END

// --add-reads: module m reads target.
NODE_ENTRY(void, Node_addReads(JNIEnv* env, jclass, jobject m, jobject target))
  JavaCallArguments args;
  args.push_oop(Handle(thread, JNIHandles::resolve_non_null(m)));
  args.push_oop(Handle(thread, JNIHandles::resolve_non_null(target)));
  call_modules("addReads", "(Ljava/lang/Module;Ljava/lang/Module;)V", &args, THREAD);
JVM_END

// A thread server takes back the security manager an ended program left
// (ProgramGlobals): System.security written directly, since the manager's
// own checkPermission may refuse its removal, or fail (its program's classes
// no longer load).
NODE_ENTRY(void, Node_clearSecurityManager(JNIEnv* env, jclass))
  if (!require_member(thread)) return;
  InstanceKlass* system = vmClasses::System_klass();
  fieldDescriptor fd;
  TempNewSymbol name = SymbolTable::new_symbol("security");
  TempNewSymbol signature = SymbolTable::new_symbol("Ljava/lang/SecurityManager;");
  if (!system->find_local_field(name, signature, &fd) || !fd.is_static()) {
    THROW_MSG(vmSymbols::java_lang_InternalError(),
              "djava: java.lang.System has no static field security");
  }
  system->java_mirror()->release_obj_field_put(fd.offset(), NULL);
JVM_END

NODE_ENTRY(jstring, Node_nodeName(JNIEnv* env, jclass))
  oop name = java_lang_String::create_oop_from_str(DsoNode::node_name(), CHECK_NULL);
  return (jstring)JNIHandles::make_local(THREAD, name);
JVM_END

// The launcher's program's default locales and time zone, for a thread
// server that asks (java.util.ProgramDefaults.mirror(), package-private:
// the VM may call it).
NODE_ENTRY(jobject, Node_programDefaults(JNIEnv* env, jclass))
  if (!require_member(thread)) return NULL;
  JavaCallArguments args;
  oop defaults = DsoNode::call_runtime("java/util/ProgramDefaults", "mirror",
                                       "()Ljava/util/ProgramDefaults;", &args, CHECK_NULL);
  return JNIHandles::make_local(THREAD, defaults);
JVM_END

// The launcher's program's CompletableFuture delay scheduler, for a thread
// server that asks (java.util.concurrent.ProgramCommonPool.launcherDelayer).
NODE_ENTRY(jobject, Node_programDelayer(JNIEnv* env, jclass))
  if (!require_member(thread)) return NULL;
  JavaCallArguments args;
  oop delayer = DsoNode::call_runtime("java/util/concurrent/ProgramCommonPool", "launcherDelayer",
                                      "()Ljava/util/concurrent/ScheduledThreadPoolExecutor;", &args,
                                      CHECK_NULL);
  return JNIHandles::make_local(THREAD, delayer);
JVM_END

// A shipped thread that could not start here: it ended by that exception.
NODE_ENTRY(void, Node_threadFailed(JNIEnv* env, jclass, jlong program, jlong thread_id,
                                   jstring detail))
  if (!require_member(thread)) return;
  ResourceMark rm(thread);
  const char* why = utf8_or_null(JNIHandles::resolve(detail));
  ThreadToNativeFromVM in_native(thread);
  DsoNode::lib().djava_tm_thread_ended(DsoNode::tm(), (uint64_t)program, (uint64_t)thread_id, 1,
                                       why != NULL ? why : "");
JVM_END

// The launcher heard that one of its shipped threads ended: if the thread
// never ran (its server could not start it), nobody else marks it dead.
// A thread server asks the launcher to take a thread it shipped out of its
// group (dso/dsoThreads.cpp, leave_group_at_launcher).
NODE_ENTRY(jboolean, Node_leaveGroup(JNIEnv* env, jclass, jlong thread_id))
  if (!require_member(thread)) return JNI_FALSE;
  return DsoThreads::leave_kept_group(thread, (uint64_t)thread_id) ? JNI_TRUE : JNI_FALSE;
JVM_END

NODE_ENTRY(void, Node_settleEnded(JNIEnv* env, jclass, jlong thread_id, jstring detail))
  if (!require_member(thread)) return;
  ResourceMark rm(thread);
  DsoThreads::settle_never_ran(thread, (uint64_t)thread_id,
                               utf8_or_null(JNIHandles::resolve(detail)));
JVM_END

// Another node asks the state of a thread (djava_tm_query_thread_state),
// and with `stack` its stack trace too (djava_tm_query_thread_stack): the
// event pump answers with this node's, if the thread runs here.
NODE_ENTRY(void, Node_answerThreadState(JNIEnv* env, jclass, jlong request, jlong reply_to,
                                        jlong thread_id, jboolean stack))
  if (!require_member(thread)) return;
  if (stack == JNI_FALSE) {
    int32_t status = DsoThreads::local_status(thread, (uint64_t)thread_id);
    ThreadToNativeFromVM in_native(thread);
    if (DsoNode::lib().djava_tm_answer_thread_state(DsoNode::tm(), (uint64_t)request,
                                                    (uint64_t)reply_to, status) != 0) {
      log_warning(dso)("answering a thread state query: %s", DsoNode::lib().djava_tm_last_error());
    }
    return;
  }
  stringStream frames;
  int32_t status = DsoThreads::local_stack_trace(thread, (uint64_t)thread_id, &frames);
  ThreadToNativeFromVM in_native(thread);
  if (DsoNode::lib().djava_tm_answer_thread_stack(DsoNode::tm(), (uint64_t)request,
                                                  (uint64_t)reply_to, status, frames.base(),
                                                  frames.size()) != 0) {
    log_warning(dso)("answering a stack trace query: %s", DsoNode::lib().djava_tm_last_error());
  }
JVM_END

// Another node unparked a thread (djava_tm_unpark): the event pump passes
// it on.
NODE_ENTRY(void, Node_unpark(JNIEnv* env, jclass, jlong thread_id, jboolean interrupt))
  if (!require_member(thread)) return;
  DsoThreads::unpark_here(thread, (uint64_t)thread_id, interrupt != JNI_FALSE);
JVM_END

#define CC (char*)
#define FN_PTR(f) CAST_FROM_FN_PTR(void*, &f)

static JNINativeMethod node_methods[] = {
  { CC"isMember", CC"()Z",                   FN_PTR(Node_isMember) },
  { CC"program",  CC"()J",                   FN_PTR(Node_program) },
  { CC"publish",  CC"(Ljava/lang/Object;)J", FN_PTR(Node_publish) },
  { CC"attach",   CC"(J)Ljava/lang/Object;", FN_PTR(Node_attach) },
  { CC"idOf",     CC"(Ljava/lang/Object;)J", FN_PTR(Node_idOf) },
  { CC"nextEvent", CC"(J)Ldjava/runtime/Event;", FN_PTR(Node_nextEvent) },
  { CC"answerResource", CC"(J[BLjava/lang/String;)V", FN_PTR(Node_answerResource) },
  { CC"fetchResource", CC"(JLjava/lang/String;I)[B", FN_PTR(Node_fetchResource) },
  { CC"console", CC"(JJI[BII)V", FN_PTR(Node_console) },
  { CC"registerProgram", CC"(JLjava/lang/ClassLoader;I)V", FN_PTR(Node_registerProgram) },
  { CC"endProgram", CC"(J)V", FN_PTR(Node_endProgram) },
  { CC"dropProgram", CC"(J)Ljava/lang/String;", FN_PTR(Node_dropProgram) },
  { CC"answerStatistics", CC"(JJ)V", FN_PTR(Node_answerStatistics) },
  { CC"startThread", CC"(Ljava/lang/Thread;Ljava/lang/ClassLoader;J)V",
    FN_PTR(Node_startThread) },
  { CC"programOf", CC"(Ljava/lang/Thread;)J", FN_PTR(Node_programOf) },
  { CC"stopThread", CC"(Ljava/lang/Thread;)Z", FN_PTR(Node_stopThread) },
  { CC"isThreadServer", CC"()Z", FN_PTR(Node_isThreadServer) },
  { CC"nodeName", CC"()Ljava/lang/String;", FN_PTR(Node_nodeName) },
  { CC"programDefaults", CC"()Ljava/lang/Object;", FN_PTR(Node_programDefaults) },
  { CC"programDelayer", CC"()Ljava/util/concurrent/ScheduledThreadPoolExecutor;",
    FN_PTR(Node_programDelayer) },
  { CC"clearSecurityManager", CC"()V", FN_PTR(Node_clearSecurityManager) },
  { CC"threadFailed", CC"(JJLjava/lang/String;)V", FN_PTR(Node_threadFailed) },
  { CC"settleEnded", CC"(JLjava/lang/String;)V", FN_PTR(Node_settleEnded) },
  { CC"leaveGroup", CC"(J)Z", FN_PTR(Node_leaveGroup) },
  { CC"answerThreadState", CC"(JJJZ)V", FN_PTR(Node_answerThreadState) },
  { CC"moduleOptions", CC"()[Ljava/lang/String;", FN_PTR(Node_moduleOptions) },
  { CC"openPackage", CC"(Ljava/lang/Module;Ljava/lang/String;Ljava/lang/Module;Z)V",
    FN_PTR(Node_openPackage) },
  { CC"addReads", CC"(Ljava/lang/Module;Ljava/lang/Module;)V", FN_PTR(Node_addReads) },
  { CC"unpark", CC"(JZ)V", FN_PTR(Node_unpark) },
};

JVM_ENTRY(void, JVM_RegisterDjavaNodeMethods(JNIEnv* env, jclass node_class))
  ThreadToNativeFromVM ttnfv(thread);
  int ok = env->RegisterNatives(node_class, node_methods,
                                sizeof(node_methods) / sizeof(JNINativeMethod));
  guarantee(ok == 0, "djava: registering djava.runtime.Node's natives failed");
JVM_END
