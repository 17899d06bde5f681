/*
 * djava: Java threads of a distributed program (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/javaThreadStatus.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoInheritedLocals.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoMonitors.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoStatistics.hpp"
#include "dso/dsoThreads.hpp"
#include "dso/dsoThrowables.hpp"
#include "logging/log.hpp"
#include "memory/resourceArea.hpp"
#include "oops/fieldStreams.inline.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/oop.inline.hpp"
#include "memory/oopFactory.hpp"
#include "oops/objArrayOop.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/handshake.hpp"
#include "runtime/atomic.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "runtime/jniHandles.inline.hpp"
#include "runtime/mutexLocker.hpp"
#include "runtime/os.hpp"
#include "runtime/safepoint.hpp"
#include "runtime/synchronizer.hpp"
#include "runtime/thread.inline.hpp"
#include "runtime/threadSMR.inline.hpp"
#include "runtime/vframe.inline.hpp"
#include "utilities/growableArray.hpp"
#include "utilities/defaultStream.hpp"
#include "utilities/ostream.hpp"
#include "utilities/resourceHash.hpp"

// ---- Thread's node-local fields -------------------------------------------------

namespace {

struct LocalField {
  int offset;
  int size;
};

// What a Thread object means on one node only. Its group is shared: a
// program's thread groups are ordinary shared objects (the system group, the
// root, is each node's own: DsoNamedValues), so a group counts and lists its
// threads wherever they run, and Thread.exit where a thread ends takes it out.
// So is parkBlocker: LockSupport.getBlocker(t) on any node reads what t
// parked on (the thread's own node writes it, where its Thread object stays
// modified while nobody else looks; a reader costs the next park a write
// miss, and makes the blocker shared if it was not).
const char* const node_local_field_names[] = {
  "contextClassLoader", "inheritedAccessControlContext", "threadLocals",
  "inheritableThreadLocals", "stackSize", "threadStatus", "blocker",
  "blockerLock", "threadLocalRandomSeed", "threadLocalRandomProbe",
  "threadLocalRandomSecondarySeed",
};

const int max_local_fields = 16;
LocalField local_fields[max_local_fields];
int local_field_count = 0;
int group_offset = -1;
int context_loader_offset = -1;
int blocker_lock_offset = -1;
int eetop_offset = -1;

// A live thread's eetop on the wire, and on nodes not running it: never a
// JavaThread's address (those are word-aligned).
JavaThread* const alive_elsewhere = (JavaThread*)1;

// This node's replica of the shared Thread `id`, or NULL if it has none.
oop thread_replica(uint64_t id) {
  uint index = DsoReplicaTable::index_of(id);
  oop obj = index != 0 ? DsoReplicaTable::replica(index) : (oop)NULL;
  return obj != NULL && obj->is_a(vmClasses::Thread_klass()) ? obj : (oop)NULL;
}

// The thread of this VM that runs thread_obj (tlh keeps it), or NULL: not
// started, ended, or running on another node.
// How long an asker waits for another node's answer about a thread (its
// state, its stack); past it, the asker keeps what it knows (the program
// fails anyway if that node is gone).
const int64_t thread_query_timeout_ms = 2000;

JavaThread* running_here(ThreadsListHandle& tlh, oop thread_obj) {
  JavaThread* t = java_lang_Thread::thread(thread_obj);
  return t != NULL && t != alive_elsewhere && tlh.includes(t) ? t : NULL;
}

volatile size_t shipped = 0;
// Program threads started here because they reach what cannot be shared.
volatile size_t kept_local = 0;
// How many objects of a thread's local closure Thread.start looks at for
// one that cannot be shared; beyond, the thread is shipped (what it meets
// later reads as a foreign object there).
const int local_closure_scan_limit = 100000;

// The launching node's remote non-daemon threads (await_remote_threads).
Monitor* remote_threads_lock = NULL;
uint32_t live_non_daemon = 0;
bool live_count_seen = false;
GrowableArray<uint64_t>* shipped_non_daemon = NULL;

// Set by thread_exiting for thread_ended, on the exiting thread.
THREAD_LOCAL bool exiting_by_exception = false;
THREAD_LOCAL char exiting_detail[512];

// Set by console_sent, on the thread that printed; cleared once the
// launcher confirmed it wrote the output.
THREAD_LOCAL bool console_unconfirmed = false;
// The launcher answers this resource once it wrote the console output that
// reached it before the request (djava.runtime.ConsoleRouter.WRITTEN).
const char* const console_written = "djava:console-written";
// How long a thread's end waits for that answer; the manager answers every
// request, so this bounds only a stuck launcher.
const int64_t console_confirm_ms = 10000;

// The group of each thread the launcher shipped (global JNI handles), by the
// Thread's id, until the thread's node asks the launcher to take the
// thread out of it (leave_group_at_launcher); under remote_threads_lock.
typedef ResourceHashtable<uint64_t, jobject, primitive_hash<uint64_t>, primitive_equals<uint64_t>,
                          1031, ResourceObj::C_HEAP, mtInternal> KeptGroups;
KeptGroups* kept_groups = NULL;
// What a thread server asks the launcher, followed by the Thread's id in hex
// (djava.runtime.Launcher answers it with Node.leaveGroup); with
// after_written before the id, the launcher answers once it wrote the
// console output that reached it before, as for console_written.
const char* const leave_group_prefix = "djava:leave-group:";
const char* const after_written = "written:";

}  // namespace

int DsoThreads::_thread_status_offset = -1;

void DsoThreads::initialize() {
  InstanceKlass* ik = vmClasses::Thread_klass();
  for (JavaFieldStream fs(ik); !fs.done(); fs.next()) {
    if (fs.access_flags().is_static()) {
      continue;
    }
    if (fs.name()->equals("eetop")) eetop_offset = fs.offset();
    if (fs.name()->equals("threadStatus")) _thread_status_offset = fs.offset();
    if (fs.name()->equals("group")) group_offset = fs.offset();
    for (size_t i = 0; i < ARRAY_SIZE(node_local_field_names); i++) {
      if (fs.name()->equals(node_local_field_names[i]) && local_field_count < max_local_fields) {
        BasicType t = Signature::basic_type(fs.signature());
        int size = is_reference_type(t) ? heapOopSize : type2aelembytes(t);
        local_fields[local_field_count++] = { fs.offset(), size };
        if (fs.name()->equals("contextClassLoader")) context_loader_offset = fs.offset();
        if (fs.name()->equals("blockerLock")) blocker_lock_offset = fs.offset();
      }
    }
  }
  guarantee(group_offset > 0 && context_loader_offset > 0 && blocker_lock_offset > 0 &&
            eetop_offset > 0,
            "djava: java.lang.Thread has no group, contextClassLoader, blockerLock or eetop field");
  remote_threads_lock = new Monitor(Mutex::nonleaf, "DsoRemoteThreads_lock", true,
                                    Mutex::_safepoint_check_always);
  shipped_non_daemon = new (ResourceObj::C_HEAP, mtInternal) GrowableArray<uint64_t>(8, mtInternal);
  kept_groups = new (ResourceObj::C_HEAP, mtInternal) KeptGroups();
}

void DsoThreads::init_node_local_fields(JavaThread* current, Handle thread, TRAPS) {
  oop lock = vmClasses::Object_klass()->allocate_instance(CHECK);
  thread->obj_field_put(blocker_lock_offset, lock);
}

void DsoThreads::refresh_status_of_remote(oop thread_obj) {
  bool alive = java_lang_Thread::thread(thread_obj) != NULL;
  if (alive && runs_here(thread_obj)) {
    return;
  }
  JavaThreadStatus status = java_lang_Thread::get_thread_status(thread_obj);
  if (alive && status != JavaThreadStatus::RUNNABLE) {
    java_lang_Thread::set_thread_status(thread_obj, JavaThreadStatus::RUNNABLE);
  } else if (!alive && status != JavaThreadStatus::NEW) {
    // Seen started (here or in an earlier copy), now ended.
    java_lang_Thread::set_thread_status(thread_obj, JavaThreadStatus::TERMINATED);
  }
}

void DsoThreads::eetop_to_wire(oop thread_obj, u1* block, int base) {
  if (java_lang_Thread::thread(thread_obj) != NULL) {
    jlong marker = (jlong)(intptr_t)alive_elsewhere;
    memcpy(block + (eetop_offset - base), &marker, sizeof(marker));
  }
}

bool DsoThreads::keeps_eetop(oop thread_obj, int* offset) {
  JavaThread* t = java_lang_Thread::thread(thread_obj);
  if (t == NULL || t == alive_elsewhere) {
    return false;
  }
  ThreadsListHandle tlh;
  *offset = eetop_offset;
  return tlh.includes(t);
}

size_t DsoThreads::shipped_count() {
  return Atomic::load(&shipped);
}

size_t DsoThreads::kept_local_count() {
  return Atomic::load(&kept_local);
}

bool DsoThreads::is_node_local_field(Klass* k, int offset, int* size) {
  if (local_field_count == 0 || !k->is_subclass_of(vmClasses::Thread_klass())) {
    return false;
  }
  for (int i = 0; i < local_field_count; i++) {
    if (local_fields[i].offset == offset) {
      *size = local_fields[i].size;
      return true;
    }
  }
  return false;
}

// ---- which program ------------------------------------------------------------------

uint64_t DsoThreads::program_of(oop thread_obj) {
  if (thread_obj == NULL || !DsoMark::is_shared(thread_obj->mark())) {
    return 0;
  }
  return DsoReplicaTable::entry(DsoMark::index(thread_obj->mark()))->_program;
}

// The program of a thread that a shipped thread started on this node and
// that stays here (it reaches what cannot be shared): its Thread is local,
// or was shared later without a program, but its thread group is the
// program's (shared) or one under it made here. 0 if there is none.
static uint64_t program_of_group(oop thread_obj) {
  oop group = java_lang_Thread::threadGroup(thread_obj);
  for (int depth = 0; group != NULL && depth < 100; depth++) {
    markWord mark = group->mark();
    if (DsoMark::is_shared(mark)) {
      return DsoReplicaTable::entry(DsoMark::index(mark))->_program;
    }
    if (!mark.is_neutral()) {
      return 0;  // locked here: its header, and any tag, is in the lock
    }
    group = java_lang_ThreadGroup::parent(group);
  }
  return 0;
}

uint64_t DsoThreads::program_served(oop thread_obj) {
  uint64_t program = program_of(thread_obj);
  if (program == 0 && thread_obj != NULL && DsoNode::is_member() && DsoNode::is_thread_server() &&
      belongs_to_program(thread_obj)) {
    program = program_of_group(thread_obj);
  }
  return program;
}

int DsoThreads::await_program_threads(JavaThread* current, uint64_t program, jlong timeout_ms) {
  const jlong deadline = os::javaTimeMillis() + timeout_ms;
  for (;;) {
    int running = 0;
    {
      ThreadsListHandle tlh(current);
      for (uint i = 0; i < tlh.length(); i++) {
        JavaThread* t = tlh.thread_at(i);
        if (t != current && program_of(t->threadObj()) == program) {
          running++;
        }
      }
    }
    if (running == 0 || os::javaTimeMillis() >= deadline) {
      return running;
    }
    ThreadBlockInVM blocked(current);
    os::naked_short_sleep(10);
  }
}

uint64_t DsoThreads::current_program(JavaThread* current) {
  uint64_t program = program_of(current->threadObj());
  return program != 0 ? program : DsoNode::program();
}

// ---- shipping ---------------------------------------------------------------------

// A thread belongs to the program unless the JDK or djava started it for
// itself: those live in the system thread group (or under it) or are
// InnocuousThreads.
bool DsoThreads::belongs_to_program(oop thread) {
  if (thread->klass()->name()->equals("jdk/internal/misc/InnocuousThread")) {
    return false;
  }
  oop group = java_lang_Thread::threadGroup(thread);
  if (group == NULL) {
    return false;
  }
  // The system group is the root and never shared: a shared group (whose
  // replica's fields may not be here) or one with a parent is the program's.
  return DsoMark::is_shared(group->mark()) || java_lang_ThreadGroup::parent(group) != NULL;
}

// Shutdown hooks run on the node that is shutting down.
static bool started_by_shutdown(JavaThread* current) {
  ResourceMark rm(current);
  RegisterMap reg_map(current);
  int depth = 0;
  for (javaVFrame* vf = current->last_java_vframe(&reg_map); vf != NULL && depth < 6;
       vf = vf->java_sender(), depth++) {
    if (vf->method()->method_holder()->name()->equals("java/lang/ApplicationShutdownHooks")) {
      return true;
    }
  }
  return false;
}

// Why a thread cannot run on another node: an object its fields reference
// (or, for a lambda there, its captured arguments) cannot be shared; NULL
// if none. Found here, Thread.start() throws; found later, while the
// thread's bytes are encoded, it would end the VM. In the resource area.
static const char* unshareable_reference(oop holder, bool is_thread) {
  InstanceKlass* ik = InstanceKlass::cast(holder->klass());
  for (InstanceKlass* c = ik; c != NULL; c = c->java_super()) {
    for (JavaFieldStream fs(c); !fs.done(); fs.next()) {
      int size;
      if (fs.access_flags().is_static() || !is_reference_type(Signature::basic_type(fs.signature())) ||
          (is_thread && DsoThreads::is_node_local_field(ik, fs.offset(), &size))) {
        continue;
      }
      oop v = holder->obj_field(fs.offset());
      if (v == NULL || DsoMark::is_shared(v->mark()) || java_lang_String::is_instance(v) ||
          java_lang_Class::is_instance(v)) {
        continue;
      }
      const char* why = DsoHeap::unshareable_reason(v);
      if (why == NULL && is_thread && v->klass()->is_instance_klass() &&
          InstanceKlass::cast(v->klass())->is_hidden()) {
        why = unshareable_reference(v, false);  // a lambda: what it captured
      }
      if (why != NULL) {
        stringStream st;
        if (is_thread) {
          st.print("its field %s.%s holds a %s, which cannot be shared: %s", c->external_name(),
                   fs.name()->as_C_string(), v->klass()->external_name(), why);
        } else {
          st.print("it captured a %s (%s), which cannot be shared: %s",
                   v->klass()->external_name(), fs.name()->as_C_string(), why);
        }
        return st.as_string();
      }
    }
  }
  return NULL;
}

// Writes a Thread this node holds modified home, keeping a read copy,
// where another node reads it next (its joiners once it ended): home
// answers that read itself, one round trip rather than two through a
// recall from here.
static void write_home(JavaThread* current, oop thread_obj) {
  djava_sos_chunk* chunk = DsoReplicaTable::entry(DsoMark::index(thread_obj->mark()))->_chunk;
  if (chunk == NULL) {
    return;
  }
  DsoHandlesHeld held(current);
  ThreadToNativeFromVM in_native(current);
  if (DsoReplicaTable::is_modified(chunk)) {
    DsoNode::lib().djava_sos_write_back(chunk);  // IN_USE: it stays, and is recalled as before
  }
}

// Writes eetop, the shared "alive" marker, of a shared thread. False, with
// an exception pending, if the cluster refused the access.
static bool set_alive_marker(JavaThread* current, Handle thread, JavaThread* value) {
  JavaThread* THREAD = current;
  DsoHeap::begin_access(current, thread, true, CHECK_false);
  java_lang_Thread::release_set_thread(thread(), value);
  DsoHeap::end_access(thread());
  return true;
}

// A thread that could not be shipped is left unstarted, as Thread.start()
// expects when start0 throws; the pending exception is kept.
static void unstart(JavaThread* current, Handle thread) {
  JavaThread* THREAD = current;
  Handle pending(current, PENDING_EXCEPTION);
  CLEAR_PENDING_EXCEPTION;
  set_alive_marker(current, thread, NULL);
  CLEAR_PENDING_EXCEPTION;  // the first failure is the one to report
  java_lang_Thread::set_thread_status(thread(), JavaThreadStatus::NEW);
  THREAD->set_pending_exception(pending(), __FILE__, __LINE__);
}

bool DsoThreads::ship(JavaThread* current, jobject jthread) {
  if (!DsoNode::is_member() || !DjavaShipThreads ||
      (DsoNode::is_thread_server() && program_of(current->threadObj()) == 0)) {
    return false;  // a thread server's own threads stay local
  }
  HandleMark hm(current);
  Handle thread(current, JNIHandles::resolve_non_null(jthread));
  if (!belongs_to_program(thread()) || java_lang_Thread::thread(thread()) != NULL ||
      started_by_shutdown(current)) {
    return false;  // local, or started already (the usual path says so)
  }
  JavaThread* THREAD = current;
  {
    // A thread that reaches what cannot leave this node (a file descriptor,
    // a process's pipe, a class loader, a weak reference, ...) runs here,
    // where what it uses is: placed elsewhere it would fail on first use.
    ResourceMark rm(current);
    const char* why = unshareable_reference(thread(), true);
    if (why == NULL) {
      oop blocker = DsoHeap::unshareable_in_local_closure(current, thread, local_closure_scan_limit);
      if (blocker != NULL) {
        stringStream reason;
        reason.print("it reaches a %s, which cannot be shared: %s", blocker->klass()->external_name(),
                     DsoHeap::unshareable_reason(blocker));
        why = reason.as_string();
      }
    }
    if (why != NULL) {
      oop name = java_lang_Thread::name(thread());
      log_info(dso)("thread \"%s\" runs on this node: %s",
                    name != NULL ? java_lang_String::as_utf8_string(name) : "?", why);
      Atomic::inc(&kept_local);
      return false;
    }
  }
  bool daemon = java_lang_Thread::is_daemon(thread());
  uint64_t program = current_program(current);
  // What the thread inherited at construction stays in this node's map of
  // it: a snapshot goes with it.
  Handle inherited = DsoInheritedLocals::snapshot(current, thread, CHECK_(true));
  uint64_t inherited_id = inherited.is_null() ? 0 : DsoHeap::publish(current, inherited, CHECK_(true));
  uint64_t id = DsoHeap::publish(current, thread, CHECK_(true));
  // Thread.start() is synchronized: the starter holds the thread with
  // HotSpot's stack lock, which hides the tag of a shared object; it holds
  // the cluster's monitor instead from now on.
  DsoMonitors::adopt_stack_lock(current, thread, CHECK_(true));
  // Alive from now on, on every node (eetop != 0; see the header).
  if (!set_alive_marker(current, thread, alive_elsewhere)) {
    return true;
  }
  java_lang_Thread::set_thread_status(thread(), JavaThreadStatus::RUNNABLE);
  GrowableArrayCHeap<Handle, mtInternal> stack_locked;
  DsoHeap::publish_local_closure(current, thread, &stack_locked);
  for (int i = 0; i < stack_locked.length() && !HAS_PENDING_EXCEPTION; i++) {
    DsoMonitors::adopt_stack_lock(current, stack_locked.at(i), THREAD);
  }
  if (HAS_PENDING_EXCEPTION) {
    unstart(current, thread);  // the exception says why
    return true;
  }
  int rc;
  {
    ThreadToNativeFromVM in_native(current);
    rc = DsoNode::lib().djava_tm_submit(DsoNode::tm(), program, id, daemon ? 1 : 0, inherited_id);
    // A thread server hears how the threads it started end: if one never
    // runs, its joiners here are woken by this node (settle_never_ran),
    // since the launcher may be unable to make a replica of it.
    if (rc == 0 && DsoNode::is_thread_server() &&
        DsoNode::lib().djava_tm_watch(DsoNode::tm(), program, id) != 0) {
      log_warning(dso)("watching thread " UINT64_FORMAT_X ": %s", id,
                       DsoNode::lib().djava_tm_last_error());
    }
  }
  if (rc != 0) {
    ResourceMark rm(current);
    Exceptions::fthrow(THREAD_AND_LOCATION, vmSymbols::java_lang_InternalError(),
                       "djava: the thread manager refused thread \"%s\": %s",
                       java_lang_Thread::name(thread()) != NULL
                           ? java_lang_String::as_utf8_string(java_lang_Thread::name(thread()))
                           : "?", DsoNode::lib().djava_tm_last_error());
    unstart(current, thread);
    return true;
  }
  if (!daemon) {
    MutexLocker ml(current, remote_threads_lock);
    shipped_non_daemon->append(id);
  }
  if (!DsoNode::is_thread_server()) {
    oop group = java_lang_Thread::threadGroup(thread());
    if (group != NULL) {
      jobject kept = JNIHandles::make_global(Handle(current, group));
      MutexLocker ml(current, remote_threads_lock);
      kept_groups->put(id, kept);
    }
  }
  Atomic::inc(&shipped);
  log_info(dso)("shipped thread " UINT64_FORMAT_X " (%s)%s", id, thread->klass()->external_name(),
                daemon ? ", a daemon" : "");
  return true;
}

// The body of a shipped thread on a server: Thread.run(), as a started
// thread of this VM would.
static void shipped_thread_entry(JavaThread* thread, TRAPS) {
  HandleMark hm(THREAD);
  Handle obj(THREAD, thread->threadObj());
  JavaValue result(T_VOID);
  JavaCalls::call_virtual(&result, obj, vmClasses::Thread_klass(), vmSymbols::run_method_name(),
                          vmSymbols::void_method_signature(), THREAD);
}

void DsoThreads::start_shipped(JavaThread* current, Handle thread, Handle loader,
                               uint64_t inherited_locals, TRAPS) {
  // A thread may be placed on the node that started it, before the starting
  // thread has left Thread.start(), which is synchronized: the Thread's
  // header is then displaced into the starter's stack lock, and its tag with
  // it. The starter leaves start() right after the thread manager took the
  // thread; wait for that (bounded), in a safepoint-safe state.
  for (int waited_ms = 0; thread->mark().has_locker() && waited_ms < 10 * 1000; waited_ms++) {
    ThreadToNativeFromVM in_native(current);
    os::naked_short_sleep(1);
  }
  if (!DsoMark::is_shared(thread->mark())) {
    ResourceMark rm(current);
    THROW_MSG(vmSymbols::java_lang_IllegalArgumentException(),
              err_msg("djava: not a shipped thread (its header: %s)",
                      thread->mark().has_locker()    ? "still locked by its starter"
                      : thread->mark().has_monitor() ? "an inflated monitor"
                                                     : "untagged"));
  }
  // Its group is the one Thread.start added it to, on the starting node.
  thread->obj_field_put(context_loader_offset, loader());
  DsoInheritedLocals::install(current, thread, inherited_locals, CHECK);
  DsoStatistics::thread_started(program_of(thread()));
  jobject jthread = JNIHandles::make_local(current, thread());
  // eetop is shared as "alive": 1 on the wire from shipping until the end
  // (set_alive_marker), whatever this node's native thread, which stays in
  // this node's copy alone (eetop_to_wire, keeps_eetop). So a read access
  // does: another node's copy stays valid while the thread runs, and a
  // join there reads it without recalling it from here.
  DsoHeap::begin_access(current, thread, false, CHECK);
  JavaThread* native_thread = NULL;
  {
    MutexLocker mu(current, Threads_lock);
    native_thread = new JavaThread(&shipped_thread_entry, 0);
    if (native_thread->osthread() != NULL) {
      native_thread->prepare(jthread);
    }
  }
  DsoHeap::end_access(thread());
  if (native_thread->osthread() == NULL) {
    native_thread->smr_delete();
    THROW_MSG(vmSymbols::java_lang_OutOfMemoryError(), os::native_thread_creation_failed_msg());
  }
  Thread::start(native_thread);
}

// ---- waiting across nodes ----------------------------------------------------------

// Unparks sent to another node's thread and received for one of this node's
// (PrintDistributedStatistics).
static volatile uint64_t unparks_sent = 0;
static volatile uint64_t unparks_received = 0;

void DsoThreads::bound_park(JavaThread* current, jboolean* is_absolute, jlong* time) {
  if (!DsoNode::is_member() || DsoNode::is_leaving()) {
    return;
  }
  oop thread_obj = current->threadObj();
  if (thread_obj == NULL || !belongs_to_program(thread_obj)) {
    return;
  }
  // Another node's unpark arrives through the thread manager; the bound only
  // limits how long one lost with a node (or dropped at a program's end)
  // can keep a thread parked.
  const jlong poll_ns = poll_interval_ms * NANOSECS_PER_MILLISEC;
  if (*is_absolute) {
    // An absolute deadline in ms since the epoch: keep it if it is sooner.
    if (*time - os::javaTimeMillis() <= poll_ns / NANOSECS_PER_MILLISEC) {
      return;
    }
    *is_absolute = false;
    *time = poll_ns;
  } else if (*time == 0 || *time > poll_ns) {
    *time = poll_ns;
  }
}

bool DsoThreads::unpark_elsewhere(JavaThread* current, oop thread_obj, bool interrupt) {
  if (!DsoNode::is_member() || DsoNode::is_leaving() || !DsoMark::is_shared(thread_obj->mark())) {
    return false;
  }
  JavaThread* t = java_lang_Thread::thread(thread_obj);
  if (t != NULL) {
    // eetop is a pointer of this VM only where the thread runs (elsewhere
    // 0 or 1).
    ThreadsListHandle tlh(current);
    if (tlh.includes(t)) {
      return false;
    }
  }
  // Not started, ended, or running on another node: the manager knows which.
  uint64_t program = program_of(thread_obj);
  uint64_t id = DsoHeap::id_of(thread_obj);
  Atomic::inc(&unparks_sent);
  ThreadToNativeFromVM in_native(current);
  if (DsoNode::lib().djava_tm_unpark(DsoNode::tm(), program != 0 ? program : DsoNode::program(),
                                     id, interrupt ? 1 : 0) != 0) {
    log_debug(dso)("unpark of thread " UINT64_FORMAT_X ": %s", id,
                   DsoNode::lib().djava_tm_last_error());
  }
  return true;
}

void DsoThreads::unpark_here(JavaThread* current, uint64_t id, bool interrupt) {
  oop thread_obj = thread_replica(id);
  if (thread_obj == NULL) {
    return;  // no such thread here (it ended, and GC collected its Thread)
  }
  ThreadsListHandle tlh(current);
  JavaThread* t = running_here(tlh, thread_obj);
  if (t != NULL) {
    Atomic::inc(&unparks_received);
    if (interrupt) {
      t->interrupt();  // wakes a sleep and a monitor wait too; the flag is already set
    } else {
      t->parker()->unpark();
    }
  }
}

uint64_t DsoThreads::unparks_sent_count() {
  return Atomic::load(&unparks_sent);
}

uint64_t DsoThreads::unparks_received_count() {
  return Atomic::load(&unparks_received);
}

jlong DsoThreads::sleep_slice(JavaThread* current, jlong millis) {
  oop thread_obj = current->threadObj();
  if (!DsoNode::is_member() || DsoNode::is_leaving() || thread_obj == NULL ||
      !DsoMark::is_shared(thread_obj->mark())) {
    return millis;
  }
  return MIN2(millis, poll_interval_ms);
}

bool DsoThreads::runs_here(oop thread_obj) {
  if (!DsoMark::is_shared(thread_obj->mark())) {
    return true;
  }
  JavaThread* t = java_lang_Thread::thread(thread_obj);
  if (t == NULL) {
    return true;  // not started, or ended: the usual path says so
  }
  ThreadsListHandle tlh;
  return tlh.includes(t);
}

bool DsoThreads::stop_here(JavaThread* current, Handle thread_obj) {
  Handle death = Exceptions::new_exception(current, vmSymbols::java_lang_ThreadDeath(),
                                           (const char*)NULL);
  ThreadsListHandle tlh(current);
  JavaThread* target = running_here(tlh, thread_obj());  // eetop is node-local
  if (target == NULL || target == current) {
    return false;
  }
  JavaThread::send_async_exception(thread_obj(), death());
  return true;
}

JavaThread* DsoThreads::thread_here_at_safepoint(oop thread_obj) {
  assert(SafepointSynchronize::is_at_safepoint(), "the thread list must not change");
  JavaThread* t = java_lang_Thread::thread(thread_obj);
  if (t == NULL || !DsoMark::is_shared(thread_obj->mark())) {
    return t;
  }
  // A shared Thread's eetop is this VM's thread, or the marker of one alive
  // elsewhere: only the thread list tells them apart without trusting it.
  return ThreadsSMRSupport::get_java_thread_list()->includes(t) ? t : NULL;
}

void DsoThreads::interrupted(JavaThread* target) {
  djava_monitor_client* client = DsoMonitors::client();
  if (client == NULL || !DsoNode::is_member() || DsoNode::is_leaving()) {
    return;
  }
  DsoNode::lib().djava_monitor_poke(client, DsoMonitors::thread_key(target));
}

bool DsoThreads::is_interrupted(JavaThread* current, bool clear) {
  oop thread_obj = current->threadObj();
  if (thread_obj == NULL || !DsoMark::is_shared(thread_obj->mark()) || !DsoNode::is_member()) {
    return current->is_interrupted(clear);
  }
  JavaThread* THREAD = current;
  Handle t(current, thread_obj);
  DsoHeap::begin_access(current, t, false, THREAD);
  if (HAS_PENDING_EXCEPTION) {
    CLEAR_PENDING_EXCEPTION;
    return current->is_interrupted(clear);
  }
  bool interrupted = java_lang_Thread::interrupted(t());
  DsoHeap::end_access(t());
  if (interrupted && clear) {
    DsoHeap::begin_access(current, t, true, THREAD);
    if (HAS_PENDING_EXCEPTION) {
      CLEAR_PENDING_EXCEPTION;
    } else {
      java_lang_Thread::set_interrupted(t(), false);
      DsoHeap::end_access(t());
    }
  }
  return interrupted;
}

// ---- the end of a thread ------------------------------------------------------------

// The launcher's half of a shipped thread's Thread.exit(): the group it
// kept for the thread (ship) lets the thread go, on the launcher, where the
// group is. False when it kept none (a thread another node started).
static jobject take_kept_group(JavaThread* current, uint64_t id) {
  MutexLocker ml(current, remote_threads_lock);
  jobject* kept = kept_groups->get(id);
  if (kept == NULL) {
    return NULL;
  }
  jobject group = *kept;
  kept_groups->remove(id);
  return group;
}

// Lets go of the group kept for `id`, if any: the thread left it some other
// way (where it ended, with an uncaught exception or a failed request; or
// here, having never run).
static void forget_kept_group(JavaThread* current, uint64_t id) {
  jobject kept = take_kept_group(current, id);
  if (kept != NULL) {
    JNIHandles::destroy_global(kept);
  }
}

bool DsoThreads::leave_kept_group(JavaThread* current, uint64_t id) {
  JavaThread* THREAD = current;
  jobject kept = take_kept_group(current, id);
  if (kept == NULL) {
    return false;
  }
  Handle group(current, JNIHandles::resolve(kept));
  JNIHandles::destroy_global(kept);
  uint index = DsoReplicaTable::index_of(id);
  oop obj = index != 0 ? DsoReplicaTable::replica(index) : (oop)NULL;
  if (obj == NULL) {
    return false;  // collected: its group no longer lists it
  }
  Handle t(current, obj);
  JavaValue result(T_VOID);
  TempNewSymbol terminated = SymbolTable::new_symbol("threadTerminated");
  JavaCalls::call_special(&result, group, vmClasses::ThreadGroup_klass(), terminated,
                          vmSymbols::thread_void_signature(), t, THREAD);
  CLEAR_PENDING_EXCEPTION;  // a destroyed group: nothing left to tell it
  return true;
}

// Thread.exit() takes an ending thread out of its group before its joiners
// hear of its end. The group of a thread the launcher started is the
// launcher's (main's, shared): taken out where the thread ran, the group's
// monitor and its bytes moved to that node and back to the launcher at its
// next start, about four round trips a thread, one thread after another.
// So the thread asks the launcher to do it, where the group is (one round
// trip through the thread manager), and then ends as Thread.exit() would
// with its group gone. Not for a thread with an uncaught exception (its
// group is the handler that reports it) nor one the launcher did not start
// (it answers that it keeps no group for it): those leave their group here.
static void leave_group_at_launcher(JavaThread* thread, uint64_t program) {
  JavaThread* THREAD = thread;
  Handle t(thread, thread->threadObj());
  DsoHeap::begin_access(thread, t, false, THREAD);
  if (HAS_PENDING_EXCEPTION) {
    CLEAR_PENDING_EXCEPTION;
    return;
  }
  bool grouped = java_lang_Thread::threadGroup(t()) != NULL;
  DsoHeap::end_access(t());
  if (!grouped) {
    return;
  }
  // A thread that printed has the launcher confirm its output with the
  // same answer (confirm_console), not with a round trip of its own.
  bool confirms_console = console_unconfirmed;
  char name[64];
  jio_snprintf(name, sizeof(name), "%s%s" UINT64_FORMAT_X, leave_group_prefix,
               confirms_console ? after_written : "", DsoHeap::id_of(t()));
  djava_tm_buffer answer = { NULL, 0 };
  int rc;
  {
    ThreadToNativeFromVM in_native(thread);
    rc = DsoNode::lib().djava_tm_fetch_resource(DsoNode::tm(), program, name, console_confirm_ms,
                                                &answer);
  }
  DsoNode::lib().djava_tm_buffer_free(&answer);
  if (rc != DJAVA_TM_FETCH_FOUND) {
    return;  // Thread.exit() takes it out here
  }
  if (confirms_console) {
    console_unconfirmed = false;
  }
  DsoHeap::begin_access(thread, t, true, THREAD);
  if (HAS_PENDING_EXCEPTION) {
    CLEAR_PENDING_EXCEPTION;
    return;
  }
  t->obj_field_put(group_offset, NULL);
  DsoHeap::end_access(t());
  // With no group JavaThread::exit does not call Thread.exit(); the rest of
  // it (thread-locals' ends, its fields let go) is the thread's still.
  JavaValue result(T_VOID);
  JavaCalls::call_virtual(&result, t, vmClasses::Thread_klass(), vmSymbols::exit_method_name(),
                          vmSymbols::void_method_signature(), THREAD);
  CLEAR_PENDING_EXCEPTION;
}

bool DsoThreads::thread_exiting(JavaThread* thread, oop uncaught_exception) {
  exiting_by_exception = false;
  exiting_detail[0] = '\0';
  uint64_t program = program_of(thread->threadObj());
  if (program != 0 && DsoNode::is_thread_server() && DsoHeap::loader_of_program(program) == NULL) {
    // Its program ended here (ThreadServer stops what is left of it): the
    // handler (its thread group, a chunk of the program) is gone with it.
    return false;
  }
  if (program != 0 && DsoNode::is_thread_server() && uncaught_exception == NULL &&
      DsoMark::is_shared(thread->threadObj()->mark())) {
    leave_group_at_launcher(thread, program);
  }
  if (uncaught_exception != NULL && !uncaught_exception->is_a(vmClasses::ThreadDeath_klass())) {
    ResourceMark rm(thread);
    exiting_by_exception = true;
    oop message = java_lang_Throwable::message(uncaught_exception);
    jio_snprintf(exiting_detail, sizeof(exiting_detail), "%s%s%s",
                 uncaught_exception->klass()->external_name(), message != NULL ? ": " : "",
                 message != NULL ? java_lang_String::as_utf8_string(message) : "");
  }
  return true;
}

void DsoThreads::console_sent() {
  console_unconfirmed = true;
}

// A thread's console output travels to the launcher through the thread
// manager, apart from its end, which joiners elsewhere see through the
// Thread object. So before the end is visible, the launcher confirms it
// wrote what the thread printed: a joiner's output after join() then
// follows the thread's, as on java (jtreg distributed/RemoteStdout).
static void confirm_console(JavaThread* thread, uint64_t program) {
  if (!console_unconfirmed) {
    return;
  }
  console_unconfirmed = false;
  djava_tm_buffer answer = { NULL, 0 };
  int rc;
  {
    ThreadToNativeFromVM in_native(thread);
    rc = DsoNode::lib().djava_tm_fetch_resource(DsoNode::tm(), program, console_written,
                                                console_confirm_ms, &answer);
  }
  DsoNode::lib().djava_tm_buffer_free(&answer);
  if (rc != DJAVA_TM_FETCH_FOUND) {
    log_info(dso)("the launcher did not confirm a thread's console output: %s",
                  DsoNode::lib().djava_tm_last_error());
  }
}

void DsoThreads::thread_ended(JavaThread* thread, Handle thread_obj) {
  // After the node left, only the thread ending the VM ends (main in
  // destroy_vm, whose Thread is shared with the program's thread group):
  // nobody elsewhere waits for it, the program has ended.
  if (!DsoNode::is_member() || DsoNode::is_leaving() || !DsoMark::is_shared(thread_obj->mark())) {
    return;
  }
  uint64_t program = program_of(thread_obj());
  uint64_t id = DsoHeap::id_of(thread_obj());
  if (program != 0 && DsoNode::is_thread_server()) {
    confirm_console(thread, program);
  }
  if (!set_alive_marker(thread, thread_obj, NULL)) {
    // The cluster failed: its thread manager reports the program failed.
    JavaThread* THREAD = thread;
    CLEAR_PENDING_EXCEPTION;
  }
  // Only thread servers run shipped threads. A launcher's own thread whose
  // Thread became shared (main, reachable from a FutureTask's waiters, say)
  // ends here without the thread manager ever having run it.
  if (program == 0 || !DsoNode::is_thread_server()) {
    return;
  }
  // Its joiners, woken by the notify that follows, read it next; its last
  // write was the marker.
  write_home(thread, thread_obj());
  ThreadToNativeFromVM in_native(thread);
  if (DsoNode::lib().djava_tm_thread_ended(DsoNode::tm(), program, id, exiting_by_exception ? 1 : 0,
                                           exiting_detail) != 0) {
    log_warning(dso)("reporting the end of thread " UINT64_FORMAT_X ": %s", id,
                     DsoNode::lib().djava_tm_last_error());
  }
}

// The monitor would move to this node and back for each thread: its
// starter on another node held it last (Thread.start is synchronized), and
// its joiners there take it again. Nothing needs it held here. A joiner
// reads isAlive() under the monitor before it waits: either it reads the
// marker this thread cleared first, or it is the monitor's holder or a
// waiter when the signal comes, which the service applies in the
// monitor's next free turn, so its wait cannot miss it.
bool DsoThreads::end_without_monitor(JavaThread* thread, Handle thread_obj) {
  if (!DsoNode::is_member() || DsoNode::is_leaving() || !DsoNode::is_thread_server() ||
      !DsoMark::is_shared(thread_obj->mark()) || program_of(thread_obj()) == 0) {
    return false;
  }
  thread->clear_pending_exception();
  java_lang_Thread::set_thread_status(thread_obj(), JavaThreadStatus::TERMINATED);
  thread_ended(thread, thread_obj);
  java_lang_Thread::release_set_thread(thread_obj(), NULL);
  DsoMonitors::signal_all(thread, thread_obj());
  thread->clear_pending_exception();
  return true;
}

// What Thread.exit does for a thread that never ran: its group (shared)
// lets it go, and it has none any more.
static void leave_group(JavaThread* current, Handle t) {
  JavaThread* THREAD = current;
  forget_kept_group(current, DsoHeap::id_of(t()));  // the group is the Thread's own, below
  DsoHeap::begin_access(current, t, true, THREAD);
  if (HAS_PENDING_EXCEPTION) {
    CLEAR_PENDING_EXCEPTION;  // the cluster failed: the program fails with it
    return;
  }
  Handle group(current, t->obj_field(group_offset));
  t->obj_field_put(group_offset, NULL);
  DsoHeap::end_access(t());
  if (group.is_null()) {
    return;
  }
  JavaValue result(T_VOID);
  TempNewSymbol terminated = SymbolTable::new_symbol("threadTerminated");
  JavaCalls::call_special(&result, group, vmClasses::ThreadGroup_klass(), terminated,
                          vmSymbols::thread_void_signature(), t, THREAD);
  CLEAR_PENDING_EXCEPTION;  // a destroyed group: nothing left to tell it
}

void DsoThreads::settle_never_ran(JavaThread* current, uint64_t id, const char* detail) {
  JavaThread* THREAD = current;
  uint index = DsoReplicaTable::index_of(id);
  oop obj = index != 0 ? DsoReplicaTable::replica(index) : (oop)NULL;
  if (obj == NULL && detail != NULL && detail[0] != '\0') {
    // A thread a thread-server thread started, never seen here: its
    // joiners may be anywhere, and its shared Thread reaches them all.
    obj = DsoHeap::attach(current, id, THREAD);
    if (HAS_PENDING_EXCEPTION) {
      // Its class may exist only where it was started (defined at run
      // time there). The starting node, which watches the thread, wakes the
      // joiners; the user still hears of it here.
      CLEAR_PENDING_EXCEPTION;
      if (!DsoNode::is_thread_server()) {
        jio_fprintf(defaultStream::error_stream(), "djava: thread " UINT64_FORMAT_X " never ran: %s\n",
                    id, detail);
      }
      return;
    }
  }
  if (obj == NULL || !obj->is_a(vmClasses::Thread_klass())) {
    return;
  }
  Handle t(current, obj);
  DsoHeap::begin_access(current, t, false, THREAD);
  if (HAS_PENDING_EXCEPTION) {
    CLEAR_PENDING_EXCEPTION;  // the cluster failed: the program fails with it
    return;
  }
  bool cleared_where_it_ran = java_lang_Thread::thread(t()) == NULL;
  DsoHeap::end_access(t());
  if (cleared_where_it_ran) {
    forget_kept_group(current, id);  // asked for before it ended, if at all
    return;  // it ran, ended there and said so there
  }
  if (!set_alive_marker(current, t, NULL)) {
    CLEAR_PENDING_EXCEPTION;
    return;
  }
  java_lang_Thread::set_thread_status(t(), JavaThreadStatus::TERMINATED);
  leave_group(current, t);
  oop name = java_lang_Thread::name(t());
  // On the launcher's console; a thread server's log would hide it.
  if (!DsoNode::is_thread_server()) {
    jio_fprintf(defaultStream::error_stream(), "djava: thread \"%s\" never ran: %s\n",
                name != NULL ? java_lang_String::as_utf8_string(name) : "?",
                detail != NULL ? detail : "its thread server could not start it");
  }
  ObjectLocker lock(t, current);
  lock.notify_all(current);
  CLEAR_PENDING_EXCEPTION;
}

void DsoThreads::refresh_remote_state(JavaThread* current, oopDesc* obj) {
  Handle t(current, obj);
  // A Thread that runs elsewhere: alive (eetop, a shared field this access
  // just made coherent, holds the marker) and not one of this node's.
  if (t->klass()->is_subclass_of(vmClasses::Thread_klass()) &&
      java_lang_Thread::thread(t()) == alive_elsewhere && DsoNode::is_member() &&
      !DsoNode::is_leaving()) {
    uint64_t id = DsoHeap::id_of(t());
    uint64_t program = program_of(t());
    int32_t status = -1;
    int rc;
    {
      ThreadToNativeFromVM in_native(current);
      // Bounded: a node that went away answers nothing, and the program
      // then fails anyway; the local guess (RUNNABLE) stands meanwhile.
      rc = DsoNode::lib().djava_tm_query_thread_state(DsoNode::tm(), program, id,
                                                       thread_query_timeout_ms, &status);
    }
    if (rc == 0 && status >= 0 && java_lang_Thread::thread(t()) == alive_elsewhere) {
      java_lang_Thread::set_thread_status(t(), (JavaThreadStatus)status);
    }
  }
  current->set_vm_result(t());
}

int32_t DsoThreads::local_status(JavaThread* current, uint64_t id) {
  oop obj = thread_replica(id);
  if (obj == NULL) {
    return -1;
  }
  ThreadsListHandle tlh(current);
  return running_here(tlh, obj) != NULL ? (int32_t)java_lang_Thread::get_thread_status(obj) : -1;
}

namespace {

// Writes a thread's frames where its stack can be walked: run by the thread
// itself at a handshake poll, or by the asker while the thread is blocked.
class DescribeStack : public HandshakeClosure {
 public:
  explicit DescribeStack(stringStream* out) : HandshakeClosure("djava describe stack"), _out(out) {}
  void do_thread(Thread* t) {
    ResourceMark rm;
    DsoThrowables::describe_thread_stack(t->as_Java_thread(), _out);
  }

 private:
  stringStream* _out;
};

}  // namespace

int32_t DsoThreads::local_stack_trace(JavaThread* current, uint64_t id, stringStream* frames) {
  oop obj = thread_replica(id);
  if (obj == NULL) {
    return -1;
  }
  ThreadsListHandle tlh(current);
  JavaThread* target = running_here(tlh, obj);
  if (target == NULL) {
    return -1;
  }
  int32_t status = (int32_t)java_lang_Thread::get_thread_status(obj);
  DescribeStack describe(frames);
  Handshake::execute(&describe, target);
  return status;
}

void DsoThreads::add_remote_stack_traces(JavaThread* current, objArrayHandle threads,
                                         objArrayHandle traces, TRAPS) {
  if (!DsoNode::is_member() || DsoNode::is_leaving()) {
    return;
  }
  for (int i = 0; i < threads->length() && i < traces->length(); i++) {
    if (traces->obj_at(i) != NULL || !DsoMark::is_shared(threads->obj_at(i)->mark())) {
      continue;
    }
    Handle t(current, threads->obj_at(i));
    // eetop is shared: the access makes it coherent.
    DsoHeap::begin_access(current, t, false, CHECK);
    bool elsewhere = java_lang_Thread::thread(t()) == alive_elsewhere;
    DsoHeap::end_access(t());
    if (!elsewhere) {
      continue;
    }
    uint64_t id = DsoHeap::id_of(t());
    uint64_t program = program_of(t());
    int32_t status = -1;
    djava_tm_buffer frames = { NULL, 0 };
    int rc;
    {
      ThreadToNativeFromVM in_native(current);
      rc = DsoNode::lib().djava_tm_query_thread_stack(DsoNode::tm(), program, id,
                                                       thread_query_timeout_ms, &status, &frames);
    }
    if (rc == 0 && status >= 0 && frames.len > 0) {
      oop trace = DsoThrowables::make_stack_trace(current, (const char*)frames.data, THREAD);
      if (!HAS_PENDING_EXCEPTION) {
        traces->obj_at_put(i, trace);
      }
    }
    DsoNode::lib().djava_tm_buffer_free(&frames);
    if (HAS_PENDING_EXCEPTION) {
      return;
    }
  }
}

objArrayOop DsoThreads::program_threads(JavaThread* current, objArrayHandle local, TRAPS) {
  if (!DsoNode::is_member()) {
    return local();
  }
  uint64_t program = current_program(current);
  GrowableArray<Handle> all;
  for (int i = 0; i < local->length(); i++) {
    oop t = local->obj_at(i);
    uint64_t of = program_of(t);
    if (of == 0 || of == program || !DsoNode::is_thread_server()) {
      all.append(Handle(current, t));  // another program's thread on a server: not this one's
    }
  }
  if (program != 0) {
    // The program's live threads wherever they run, from its thread groups.
    JavaCallArguments args;
    oop listed = DsoNode::call_runtime("djava/runtime/ProgramThreads", "all",
                                       "()[Ljava/lang/Thread;", &args, CHECK_NULL);
    objArrayHandle everywhere(current, (objArrayOop)listed);
    for (int i = 0; !everywhere.is_null() && i < everywhere->length(); i++) {
      oop t = everywhere->obj_at(i);
      bool known = t == NULL;
      for (int j = 0; j < all.length() && !known; j++) {
        known = all.at(j)() == t;
      }
      if (!known) {
        all.append(Handle(current, t));
      }
    }
  }
  objArrayOop result = oopFactory::new_objArray(vmClasses::Thread_klass(), all.length(), CHECK_NULL);
  for (int i = 0; i < all.length(); i++) {
    result->obj_at_put(i, all.at(i)());
  }
  return result;
}

void DsoThreads::note_live_non_daemon(uint64_t program, uint32_t count) {
  if (remote_threads_lock == NULL || program != DsoNode::program()) {
    return;
  }
  MonitorLocker ml(remote_threads_lock, Mutex::_no_safepoint_check_flag);
  live_non_daemon = count;
  live_count_seen = true;
  ml.notify_all();
}

void DsoThreads::await_remote_threads(JavaThread* current) {
  if (!DsoNode::is_member() || DsoNode::is_thread_server() || remote_threads_lock == NULL) {
    return;
  }
  // The threads this node shipped, each until it ends (the thread manager's
  // state, so a thread that ended before this call counts too) ...
  GrowableArray<uint64_t> ids;
  {
    MutexLocker ml(current, remote_threads_lock);
    for (int i = 0; i < shipped_non_daemon->length(); i++) ids.append(shipped_non_daemon->at(i));
  }
  if (ids.is_empty()) {
    return;
  }
  log_debug(dso)("waiting for %d remote non-daemon threads", ids.length());
  {
    ThreadToNativeFromVM in_native(current);
    for (int i = 0; i < ids.length(); i++) {
      DsoNode::lib().djava_tm_wait_thread(DsoNode::tm(), DsoNode::program(), ids.at(i), -1);
    }
  }
  // ... then the ones those started elsewhere: the program's count.
  MonitorLocker ml(current, remote_threads_lock);
  while (live_count_seen && live_non_daemon > 0) {
    ml.wait(100);
  }
}

// ---- System.exit on a thread server -----------------------------------------------------

// The status of System.exit or Runtime.halt from the caller's frames.
static bool exit_status(JavaThread* current, jint* status) {
  ResourceMark rm(current);
  RegisterMap reg_map(current);
  for (javaVFrame* vf = current->last_java_vframe(&reg_map); vf != NULL; vf = vf->java_sender()) {
    Method* m = vf->method();
    Symbol* holder = m->method_holder()->name();
    int slot = -1;
    if (holder->equals("java/lang/Shutdown") && m->name()->equals("exit")) slot = 0;
    if (holder->equals("java/lang/Runtime") && m->name()->equals("halt")) slot = 1;
    if (slot >= 0) {
      StackValueCollection* locals = vf->locals();
      *status = locals->int_at(slot);
      return true;
    }
  }
  return false;
}

void DsoThreads::before_halt(JavaThread* current, TRAPS) {
  if (!DsoNode::is_member() || !DsoNode::is_thread_server()) {
    return;
  }
  // A thread kept beside its starter calls the program's exit too.
  uint64_t program = program_served(current->threadObj());
  if (program == 0) {
    return;  // the server itself is exiting
  }
  jint status = 1;
  exit_status(current, &status);
  char detail[300];
  {
    ResourceMark rm(current);
    oop name = java_lang_Thread::name(current->threadObj());
    jio_snprintf(detail, sizeof(detail), "System.exit(%d) in thread \"%s\" on %s", status,
                 name != NULL ? java_lang_String::as_utf8_string(name) : "?", DsoNode::node_name());
  }
  {
    ThreadToNativeFromVM in_native(current);
    DsoNode::lib().djava_tm_program_exit(DsoNode::tm(), program, status, detail);
  }
  log_info(dso)("program %" PRIu64 ": %s", program, detail);
  // As in java, the exiting thread does not end before the program does:
  // were it to end now, a join on it elsewhere could return (and its caller
  // go on) before the launcher takes the exit. It waits until this server
  // drops the program (the launcher has exited), bounded in case the
  // cluster never says so, then ends.
  const jlong bound_ms = 60 * 1000;
  for (jlong waited = 0; waited < bound_ms && DsoHeap::runs_program(program);
       waited += poll_interval_ms) {
    ThreadToNativeFromVM in_native(current);
    os::naked_short_sleep(poll_interval_ms);
  }
  THROW(vmSymbols::java_lang_ThreadDeath());
}
