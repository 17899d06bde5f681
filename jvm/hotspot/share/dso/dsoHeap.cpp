/*
 * djava: the node's side of the shared heap (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoClassInit.hpp"
#include "dso/dsoFence.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoInterpreter.hpp"
#include "dso/dsoNamedValues.hpp"
#include "dso/dsoClassNames.hpp"
#include "dso/dsoMarshal.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoMonitors.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReferences.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoSynchronizers.hpp"
#include "dso/dsoThreads.hpp"
#include "dso/dsoThrowables.hpp"
#include "dso/dsoStatics.hpp"
#include "runtime/mutexLocker.hpp"
#include "runtime/objectMonitor.inline.hpp"
#include "runtime/threadSMR.hpp"
#include "utilities/growableArray.hpp"
#include "jni.h"
#include "logging/log.hpp"
#include "memory/resourceArea.hpp"
#include "dso/dsoGlobals.hpp"
#include "gc/shared/collectedHeap.hpp"
#include "gc/shared/gcCause.hpp"
#include "memory/universe.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/objArrayKlass.hpp"
#include "oops/oop.inline.hpp"
#include "oops/oopHandle.inline.hpp"
#include "oops/typeArrayKlass.hpp"
#include "runtime/atomic.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/jniHandles.inline.hpp"
#include "memory/iterator.inline.hpp"
#include "oops/access.inline.hpp"
#include "oops/compressedOops.inline.hpp"
#include "runtime/safepointVerifiers.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/synchronizer.hpp"
#include "runtime/thread.inline.hpp"
#include "utilities/exceptions.hpp"
#include "utilities/resourceHash.hpp"

extern struct JavaVM_ main_vm;

djava_sos_client* DsoHeap::_client = NULL;
static volatile size_t published = 0;

size_t DsoHeap::published_count() {
  return Atomic::load(&published);
}

// ---- what may be shared -------------------------------------------------------

const char* DsoHeap::unshareable_reason(oop obj) {
  Klass* k = obj->klass();
  if (k->is_objArray_klass() || k->is_typeArray_klass()) {
    return NULL;
  }
  if (DsoClassNames::is_made_at_run_time(InstanceKlass::cast(k))) {
    return DsoClassNames::unshareable_reason(InstanceKlass::cast(k));  // NULL: a lambda, a proxy
  }
  // Objects whose meaning is this VM's own state: native resources, class
  // loading and linkage, GC-visible references, threads.
  if (k->is_subclass_of(vmClasses::Thread_klass())) {
    return DsoThreads::belongs_to_program(obj) ? NULL
               : "the JDK started this thread for this node's own work";
  }
  if (k->is_subclass_of(vmClasses::Reference_klass())) {
    return DsoReferences::unshareable_reason(k);  // weak and soft ones can be
  }
  struct { Klass* klass; const char* why; } native_state[] = {
    { vmClasses::ClassLoader_klass(),     "class loaders are per node" },
    { vmClasses::Module_klass(),          "modules are per node" },
    { vmClasses::MemberName_klass(),      "it points into this node's class metadata" },
    { vmClasses::MethodHandle_klass(),    "it points into this node's class metadata" },
    { vmClasses::MethodType_klass(),      "it points into this node's class metadata" },
    { vmClasses::CallSite_klass(),        "it points into this node's class metadata" },
    { vmClasses::ProtectionDomain_klass(), "security contexts are per node" },
  };
  for (size_t i = 0; i < ARRAY_SIZE(native_state); i++) {
    if (k->is_subclass_of(native_state[i].klass)) {
      return native_state[i].why;
    }
  }
  if (k->name()->equals("java/io/FileDescriptor")) {
    return "it holds a file descriptor of this node";
  }
  return NULL;
}

bool DsoHeap::is_node_local_field(Klass* k, int offset, int* size) {
  return DsoThreads::is_node_local_field(k, offset, size) ||
         DsoThrowables::is_node_local_field(k, offset, size) ||
         DsoReferences::is_node_local_field(k, offset, size);
}

static bool travels_by_value(oop obj) {
  ResourceMark rm;
  return java_lang_String::is_instance(obj) || java_lang_Class::is_instance(obj) ||
         DsoNamedValues::name_of(obj) != NULL;
}

// ---- publication -----------------------------------------------------------------

// Makes obj shared with a new id from this node's range and a chunk in state
// M; returns its replica index, or 0 if obj is locked (HotSpot's own lock
// would hide the tag). No safepoint.
static uint publish_one(Thread* current, oop obj, uint64_t program) {
  ResourceMark rm(current);
  Klass* k = obj->klass();
  djava_sos_meta meta;
  meta.class_name = DsoClassNames::shared_name(k);
  meta.program = program;
  meta.element_type = k->is_typeArray_klass() ? TypeArrayKlass::cast(k)->element_type()
                      : k->is_objArray_klass() ? T_OBJECT : 0;
  meta.array_length = obj->is_array() ? (uint32_t)((arrayOop)obj)->length() : 0;
  meta.identity_hash = DsoReplicaTable::identity_hash_for_publication(current, obj);
  if (meta.identity_hash == 0) {
    return 0;
  }
  djava_sos_error error;
  int elems_shift = DsoBlocks::elems_shift_for(obj);
  djava_sos_chunk* chunk;
  DsoBlocks* blocks = NULL;
  if (elems_shift == 0) {
    chunk = DsoNode::lib().djava_sos_alloc(DsoNode::sos(), DsoMarshal::fixed_size(obj), &meta,
                                           &error);
  } else {
    // The array's own chunk, then its blocks, with consecutive ids.
    uint32_t count = DsoBlocks::count_for(meta.array_length, elems_shift);
    size_t* sizes = NEW_C_HEAP_ARRAY(size_t, (size_t)count + 1, mtInternal);
    sizes[0] = DsoMarshal::blocks_header_size;
    for (uint32_t k = 0; k < count; k++) {
      int from = (int)((uint64_t)k << elems_shift);
      int to = (int)MIN2((uint64_t)meta.array_length, ((uint64_t)k + 1) << elems_shift);
      sizes[k + 1] = DsoMarshal::fixed_size_of_elements(obj, from, to);
    }
    chunk = DsoNode::lib().djava_sos_alloc_run(DsoNode::sos(), (size_t)count + 1, sizes, &meta,
                                               &error);
    FREE_C_HEAP_ARRAY(size_t, sizes);
    if (chunk != NULL) {
      uint64_t base = DsoNode::lib().djava_sos_id(chunk);
      blocks = DsoBlocks::create(base, obj, elems_shift);
      for (uint32_t k = 0; k < count; k++) {
        blocks->set_chunk(k, DsoNode::lib().djava_sos_chunk_for(DsoNode::sos(), base + 1 + k));
      }
    }
  }
  if (chunk == NULL) {
    log_warning(dso)("publishing a %s: %s", k->external_name(), error.message);
    return 0;
  }
  uint64_t id = DsoNode::lib().djava_sos_id(chunk);
  DsoSynchronizers::prepare_publication(obj);
  // Pinned (this node has the only copy until another asks for it) and
  // found by the chunk before the tag is in: from then on another thread
  // may send the id elsewhere, and a flush come back for it.
  uint index = DsoReplicaTable::publish(current, obj, id, chunk, program, true /* new_chunk */,
                                        blocks);
  if (index == 0) {
    // Nobody knows the id: the chunk goes, without a message (this may be
    // the cache's receiver thread, which a request's answer would need).
    DsoNode::lib().djava_sos_discard(chunk);
    if (blocks != NULL) {
      for (uint32_t k = 0; k < blocks->_count; k++) {
        DsoNode::lib().djava_sos_discard(blocks->_chunks[k]);
      }
      DsoBlocks::destroy(blocks);
    }
    return 0;
  }
  // After the tag (DsoFence::stamp); a flush until then waits (encode_for_flush).
  DsoReplica* e = DsoReplicaTable::entry(index);
  uint64_t fence = DsoFence::stamp();
  Atomic::release_store(&e->_fence_stamp, fence);
  DsoFence::request(fence);
  Atomic::inc(&published);
  log_trace(dso)("published " UINT64_FORMAT_X " (%s)", id, k->external_name());
  return index;
}

// The header that carries obj's tag, as the calling thread may read it: the
// mark, or the displaced header of a stack lock the caller itself holds.
// Thread.start() is synchronized, so the thread being shipped is published
// while its starter holds it locked, and its own closure may lead back to it
// (a pool's worker -> the pool -> its set of workers -> the worker's thread).
static markWord header_seen_by(JavaThread* current, oop obj) {
  markWord mark = obj->mark();
  if (mark.has_locker() && current->is_lock_owned((address)mark.locker())) {
    return mark.locker()->displaced_header();
  }
  return mark;
}

// An object whose HotSpot monitor is inflated while nobody holds or waits
// on it: the deflation thread would restore its header, but only within a
// minute (GuaranteedAsyncDeflationInterval) unless asked.
static bool has_idle_monitor(oop obj) {
  markWord mark = obj->mark();
  if (!mark.has_monitor()) {
    return false;
  }
  ObjectMonitor* monitor = mark.monitor();
  return monitor->owner() == NULL && monitor->waiters() == 0;
}

static void request_monitor_deflation() {
  ObjectSynchronizer::set_is_async_deflation_requested(true);
  MonitorLocker ml(MonitorDeflation_lock, Mutex::_no_safepoint_check_flag);
  ml.notify_all();
}

// Whether another thread of this node holds obj locked (synchronized): its
// HotSpot lock hides the header the tag goes into until it lets go.
static bool locked_by_another(JavaThread* current, oop obj) {
  markWord mark = obj->mark();
  if (mark.has_locker()) {
    return !current->is_lock_owned((address)mark.locker());
  }
  if (mark.has_monitor()) {
    void* owner = mark.monitor()->owner();
    return owner != NULL && owner != current && !current->is_lock_owned((address)owner);
  }
  return false;
}

// The HotSpot monitor of obj, if threads of this node wait on it
// (Object.wait, Thread.join) and none holds it.
static ObjectMonitor* monitor_waited_on(oop obj) {
  markWord mark = obj->mark();
  if (!mark.has_monitor()) {
    return NULL;
  }
  ObjectMonitor* monitor = mark.monitor();
  return monitor->owner() == NULL && monitor->waiters() > 0 ? monitor : NULL;
}

uint64_t DsoHeap::publish(JavaThread* current, Handle obj, TRAPS) {
  if (obj.is_null() || travels_by_value(obj())) {
    return 0;
  }
  markWord header = header_seen_by(current, obj());
  if (DsoMark::is_shared(header)) {
    return DsoReplicaTable::entry(DsoMark::index(header))->_global_id;
  }
  const char* why = unshareable_reason(obj());
  if (why != NULL) {
    ResourceMark rm(current);
    THROW_MSG_0(vmSymbols::java_lang_IllegalArgumentException(),
                err_msg("djava: a %s cannot be shared: %s", obj->klass()->external_name(), why));
  }
  uint index = publish_one(current, obj(), DsoThreads::current_program(current));
  // HotSpot's lock hides the header the tag goes into, as a flush of a
  // reference to the object finds (docs/HEAP.md), and publication meets it
  // as the flush does. Another thread of this node holding the object is
  // waited for: Thread.start() is synchronized, so a thread started here
  // that shares itself at once (its first shared lock) meets its starter
  // still holding it. Threads waiting on it (Thread.join on a thread that
  // then shares itself) are asked to step aside. An idle monitor (HotSpot
  // keeps one long after its last use) is deflated on request.
  const int bound_ms = 10 * 1000;
  const char* held_by = NULL;
  for (int waited_ms = 0; index == 0 && waited_ms < bound_ms; waited_ms += 5) {
    if (DsoMark::is_shared(header_seen_by(current, obj()))) {
      break;  // made shared meanwhile by another thread of this node: below
    }
    ObjectMonitor* waited_on = NULL;
    if (locked_by_another(current, obj())) {
      held_by = "another thread held it";
    } else if ((waited_on = monitor_waited_on(obj())) != NULL) {
      held_by = "threads waited on it";
      DsoMonitors::ask_waiters_to_step_aside(current, waited_on);
    } else if (has_idle_monitor(obj())) {
      held_by = "its HotSpot monitor was not deflated";
      request_monitor_deflation();
    } else {
      held_by = NULL;
      break;
    }
    {
      ThreadBlockInVM blocked(current);
      os::naked_short_sleep(5);
    }
    index = publish_one(current, obj(), DsoThreads::current_program(current));
  }
  if (index == 0) {
    // Another thread of this node made it shared meanwhile (two threads
    // that await one condition publish it at once): its id, then.
    header = header_seen_by(current, obj());
    if (DsoMark::is_shared(header)) {
      return DsoReplicaTable::entry(DsoMark::index(header))->_global_id;
    }
    DsoNode::stop_if_left(current);
    ResourceMark rm(current);
    THROW_MSG_0(vmSymbols::java_lang_IllegalStateException(),
                err_msg("djava: a %s cannot be shared while it is locked (synchronized) on "
                        "this node%s%s%s", obj->klass()->external_name(),
                        held_by != NULL ? " (" : "", held_by != NULL ? held_by : "",
                        held_by != NULL ? " for 10 s)" : ""));
  }
  return DsoReplicaTable::entry(index)->_global_id;
}

namespace {

typedef ResourceHashtable<address, bool, primitive_hash<address>, primitive_equals<address>, 4099>
    SeenObjects;

// Collects the local objects an object references through fields that
// travel (not a Thread's node-local ones; not a throwable's stackTrace
// placeholder, whose frames travel as text). Publication takes the
// shareable ones and meets each once by making it shared; a scan (given
// `seen`) takes the unshareable ones too, each once.
class LocalReferences : public BasicOopIterateClosure {
 public:
  LocalReferences(JavaThread* current, GrowableArray<oop>* out, SeenObjects* seen = NULL)
    : _current(current), _out(out), _seen(seen), _from(NULL) {}
  void set_from(oop from) { _from = from; }
  virtual void do_oop(oop* p) { visit(p, RawAccess<>::oop_load(p)); }
  virtual void do_oop(narrowOop* p) { visit(p, RawAccess<>::oop_load(p)); }
  bool first_visit(oop v) { return _seen == NULL || _seen->put(cast_from_oop<address>(v), true); }
 private:
  void visit(void* p, oop v) {
    int offset = (int)((address)p - cast_from_oop<address>(_from));
    int size;
    if (v == NULL || DsoHeap::is_node_local_field(_from->klass(), offset, &size) ||
        DsoThrowables::travels_as_frames(_from, offset) ||
        DsoMark::is_shared(header_seen_by(_current, v)) || travels_by_value(v) ||
        (_seen == NULL && DsoHeap::unshareable_reason(v) != NULL)) {
      return;
    }
    if (first_visit(v)) {
      _out->append(v);
    }
  }
  JavaThread* _current;
  GrowableArray<oop>* _out;
  SeenObjects* _seen;
  oop _from;
};

}  // namespace

oop DsoHeap::unshareable_in_local_closure(JavaThread* current, Handle root, int limit) {
  NoSafepointVerifier nsv;
  ResourceMark rm(current);
  GrowableArray<oop> pending;
  LocalReferences reach(current, &pending, new SeenObjects());
  reach.first_visit(root());
  reach.set_from(root());
  root->oop_iterate(&reach);
  for (int looked = 0; !pending.is_empty() && looked < limit; looked++) {
    oop obj = pending.pop();
    if (unshareable_reason(obj) != NULL) {
      return obj;
    }
    reach.set_from(obj);
    obj->oop_iterate(&reach);
  }
  return NULL;
}

void DsoHeap::publish_local_closure(JavaThread* current, Handle root,
                                    GrowableArrayCHeap<Handle, mtInternal>* stack_locked) {
  // No safepoint while raw oops are held: publication never takes one.
  NoSafepointVerifier nsv;
  ResourceMark rm(current);
  const int limit = 1000000;  // beyond that, publication stays lazy
  uint64_t program = DsoThreads::current_program(current);
  GrowableArray<oop> pending;
  LocalReferences refs(current, &pending);
  refs.set_from(root());
  root->oop_iterate(&refs);
  int published = 0;
  while (!pending.is_empty() && published < limit) {
    oop obj = pending.pop();
    if (DsoMark::is_shared(header_seen_by(current, obj))) {
      continue;  // reached twice
    }
    if (publish_one(current, obj, program) == 0) {
      // Another thread holds it locked (or HotSpot's monitor of it is
      // inflated): it stays local for now, and becomes shared when the
      // bytes of the object that led here leave this node, which waits
      // until it is unlocked (DsoHeap's produce).
      continue;
    }
    published++;
    if (obj->mark().has_locker()) {
      stack_locked->append(Handle(current, obj));  // by this thread: publish_one succeeded
    }
    refs.set_from(obj);
    obj->oop_iterate(&refs);
  }
}

uint DsoHeap::publish_referenced(oop obj, uint64_t program) {
  assert(unshareable_reason(obj) == NULL, "the encoding makes it foreign instead");
  // Only an unlocked object: a lock, even the encoding thread's own, would
  // have to become the cluster's monitor first (DsoMonitors), which a flush
  // cannot wait for. The flush waits instead (DsoHeap's produce).
  if (!obj->mark().is_neutral()) {
    return 0;
  }
  uint index = publish_one(Thread::current(), obj, program);
  if (index == 0 && DsoMark::is_shared(obj->mark())) {
    return DsoMark::index(obj->mark());  // another thread published it first
  }
  if (index == 0 && obj->mark().is_neutral()) {
    log_warning(dso)("a %s cannot be made shared: this node's replica table or chunk ids are "
                     "used up, or it is too large", obj->klass()->external_name());
  }
  return index;
}

// ---- foreign objects ---------------------------------------------------------------

static GrowableArray<OopHandle>* foreign_objects = NULL;

static Mutex* foreign_lock() {
  static Mutex* lock = new Mutex(Mutex::leaf, "DsoForeign_lock", true, Mutex::_safepoint_check_never);
  return lock;
}

uint32_t DsoHeap::foreign_number(oop obj) {
  MutexLocker ml(foreign_lock(), Mutex::_no_safepoint_check_flag);
  if (foreign_objects == NULL) {
    foreign_objects = new (ResourceObj::C_HEAP, mtInternal) GrowableArray<OopHandle>(8, mtInternal);
  }
  for (int i = 0; i < foreign_objects->length(); i++) {
    if (foreign_objects->at(i).peek() == obj) {
      return (uint32_t)i + 1;
    }
  }
  // Held for good: other nodes may hand the reference back.
  foreign_objects->append(OopHandle(Universe::vm_global(), obj));
  return (uint32_t)foreign_objects->length();
}

oop DsoHeap::foreign_object(uint32_t number) {
  MutexLocker ml(foreign_lock(), Mutex::_no_safepoint_check_flag);
  if (foreign_objects == NULL || number == 0 || (int)number > foreign_objects->length()) {
    return NULL;
  }
  return foreign_objects->at((int)number - 1).resolve();
}

oop DsoHeap::foreign_replica(JavaThread* current, uint64_t program, uint32_t owner_node,
                             uint32_t number, const char* class_name, TRAPS) {
  uint64_t id = (UCONST64(1) << 63) | ((uint64_t)(owner_node & 0x7fffffff) << 32) | number;
  uint index = DsoReplicaTable::index_of(id);
  if (index != 0) {
    return DsoReplicaTable::replica(index);
  }
  Klass* k = resolve_class(current, program, class_name, CHECK_NULL);
  if (!k->is_instance_klass()) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: a foreign %s cannot be an array", class_name));
  }
  InstanceKlass* ik = InstanceKlass::cast(k);
  ik->link_class(CHECK_NULL);  // linked, not initialized: see replica_of
  oop fresh = ik->allocate_instance(CHECK_NULL);
  uint hash = (uint)((id * 0x9E3779B97F4A7C15ULL) >> 40) & markWord::hash_mask;
  index = DsoReplicaTable::materialize(current, fresh, id, hash != 0 ? hash : 1, NULL, program);
  if (index == 0) {
    THROW_MSG_NULL(vmSymbols::java_lang_OutOfMemoryError(), "djava: this node's replica table is full");
  }
  oop replica = DsoReplicaTable::replica(index);
  if (replica == fresh) {
    // No chunk: every access is refused (DsoInterpreter, DsoAccess).
    DsoReplicaTable::pin(DsoReplicaTable::entry(index), fresh);
  }
  return replica;
}

uint64_t DsoHeap::id_of(oop replica) {
  return DsoReplicaTable::entry(DsoMark::index(replica->mark()))->_global_id;
}

// ---- replicas of objects from elsewhere ----------------------------------------------

// Thread servers' class loaders, one a program (few programs at a time).
struct ProgramLoader {
  uint64_t program;
  OopHandle loader;
};
static GrowableArray<ProgramLoader>* program_loaders = NULL;

static Mutex* loaders_lock() {
  // Never a safepoint: flushes (possibly in Java state) look loaders up.
  // Below leaf: a stack walk inside a handshake (DsoThrowables::
  // describe_thread_stack) looks loaders up holding the target's
  // HandshakeState lock, a leaf; under this one, only OopStorage's.
  static Mutex* lock = new Mutex(Mutex::leaf - 1, "DsoProgramLoaders_lock", true,
                                 Mutex::_safepoint_check_never);
  return lock;
}

void DsoHeap::register_loader(JavaThread* current, uint64_t program, Handle loader) {
  MutexLocker ml(loaders_lock(), Mutex::_no_safepoint_check_flag);
  if (program_loaders == NULL) {
    program_loaders = new (ResourceObj::C_HEAP, mtInternal) GrowableArray<ProgramLoader>(4, mtInternal);
  }
  program_loaders->append(ProgramLoader{program, OopHandle(Universe::vm_global(), loader())});
}

// The position of program's loader in program_loaders, or -1. Under loaders_lock.
static int loader_index(uint64_t program) {
  for (int i = 0; program_loaders != NULL && i < program_loaders->length(); i++) {
    if (program_loaders->at(i).program == program) {
      return i;
    }
  }
  return -1;
}

void DsoHeap::drop_loader(uint64_t program) {
  MutexLocker ml(loaders_lock(), Mutex::_no_safepoint_check_flag);
  int i = loader_index(program);
  if (i >= 0) {
    program_loaders->at(i).loader.release(Universe::vm_global());
    program_loaders->delete_at(i);
  }
}

void DsoHeap::drop_program(JavaThread* current, uint64_t program, char* summary,
                           size_t length) {
  // A thread inside an access still uses its replica's entry: none may run.
  int running = DsoThreads::await_program_threads(current, program, 5000);
  if (running > 0) {
    jio_snprintf(summary, length, "%d of its threads still run after 5 s: its shared objects "
                 "stay", running);
    return;
  }
  GrowableArrayCHeap<djava_sos_chunk*, mtInternal> chunks;
  DsoReplicaTable::chunks_of(program, &chunks);
  {
    // A chunk's mutex may be held by a flush waiting for a safepoint.
    ThreadToNativeFromVM in_native(current);
    for (int i = 0; i < chunks.length(); i++) {
      DsoNode::lib().djava_sos_discard(chunks.at(i));
    }
  }
  GrowableArrayCHeap<djava_sos_chunk*, mtInternal> kept;
  // The cache may forget every handle of the program the JVM had: its
  // replicas' (discarded above) and those of replicas collected earlier.
  size_t kept_of_program;
  size_t dropped = DsoReplicaTable::drop_program(program, &kept, &chunks, &kept_of_program);
  if (kept_of_program > 0) {
    log_warning(dso)("program " UINT64_FORMAT ": %zu shared objects in use or with a displaced "
                     "header stay", program, kept_of_program);
  }
  // Nothing here references the program's other chunks now (their entries
  // and their statistics' retired parts went with drop_program): the cache
  // forgets its handles of them, or a thread server would keep one per
  // chunk of every program it ran.
  size_t forgotten;
  size_t handles;
  {
    ThreadToNativeFromVM in_native(current);
    forgotten = DsoNode::lib().djava_sos_forget_program(
        DsoNode::sos(), program, kept.length() > 0 ? kept.adr_at(0) : NULL, (size_t)kept.length(),
        chunks.length() > 0 ? chunks.adr_at(0) : NULL, (size_t)chunks.length());
    handles = DsoNode::lib().djava_sos_handle_count(DsoNode::sos());
  }
  jio_snprintf(summary, length, "released %zu of its shared objects, %zu remain for other "
               "programs; the cache forgot %zu handles, %zu remain", dropped,
               DsoReplicaTable::live_count(), forgotten, handles);
}

bool DsoHeap::runs_program(uint64_t program) {
  MutexLocker ml(loaders_lock(), Mutex::_no_safepoint_check_flag);
  return loader_index(program) >= 0;
}

uint64_t DsoHeap::program_of_loader(oop loader) {
  MutexLocker ml(loaders_lock(), Mutex::_no_safepoint_check_flag);
  for (int i = 0; program_loaders != NULL && i < program_loaders->length(); i++) {
    if (program_loaders->at(i).loader.resolve() == loader) {
      return program_loaders->at(i).program;
    }
  }
  return 0;
}

oop DsoHeap::loader_of_program(uint64_t program) {
  // A launching node resolves with its application class loader: its own
  // program's classes, and another program's (djava.runtime.Node.attach
  // between two launchers of the same classes) likewise.
  if (program == DsoNode::program() || program == 0 || !DsoNode::is_thread_server()) {
    return SystemDictionary::java_system_loader();
  }
  MutexLocker ml(loaders_lock(), Mutex::_no_safepoint_check_flag);
  int i = loader_index(program);
  return i >= 0 ? program_loaders->at(i).loader.resolve() : NULL;
}

Klass* DsoHeap::resolve_class(JavaThread* current, uint64_t program, const char* class_name,
                              TRAPS) {
  if (DsoClassNames::is_made_at_run_time(class_name)) {  // a lambda's or proxy's class
    return DsoClassNames::resolve(current, program, class_name, THREAD);
  }
  TempNewSymbol name = SymbolTable::new_symbol(class_name);
  Handle loader(current, loader_of_program(program));
  if (loader.is_null()) {
    THROW_MSG_NULL(vmSymbols::java_lang_NoClassDefFoundError(),
                   err_msg("djava: %s of program %" PRIu64 ": this node runs no thread of that "
                           "program", class_name, program));
  }
  return SystemDictionary::resolve_or_fail(name, loader, Handle(), true, THREAD);
}

// How many times attach makes a replica that GC takes before it is returned,
// and drop_orphan_copy finds the chunk's owner changed as it drops its copy.
static const int attach_attempts = 8;

// A copy the cache holds of a chunk no live replica here has is an orphan:
// GC collected the replica its bytes were installed into, and a fresh
// replica would be empty. Drops it, so that the next access fetches the
// bytes again, unless another thread made a replica since (the copy is then
// that replica's, perhaps with a write upgrade under way that the server
// grants without bytes: dropping it would lose the copy the server counts
// on). Returns that replica's index, or 0 with *status the drop's: OK, or
// IN_USE if the chunk is modified here with no replica. Safepoints: the
// chunk's mutex may be held by a flush waiting for one to end.
static uint drop_orphan_copy(JavaThread* current, djava_sos_chunk* chunk, uint64_t id,
                             djava_sos_status* status) {
  for (int attempt = 0; ; attempt++) {
    // The owner first: a replica made after this read changes it.
    uintptr_t owner = DsoNode::lib().djava_sos_user(chunk);
    uint index = DsoReplicaTable::index_of(id);
    if (index != 0) {
      return index;
    }
    {
      ThreadToNativeFromVM in_native(current);
      *status = DsoNode::lib().djava_sos_drop_copy(chunk, owner);
    }
    if (*status == DJAVA_SOS_OK || DsoNode::lib().djava_sos_user(chunk) == owner ||
        attempt == attach_attempts) {
      return DsoReplicaTable::index_of(id);
    }
  }
}

oop DsoHeap::replica_of(JavaThread* current, uint64_t program, uint64_t id,
                        const char* class_name, uint identity_hash, uint array_length,
                        int elems_shift, TRAPS) {
  uint index = DsoReplicaTable::index_of(id);
  if (index != 0) {
    return DsoReplicaTable::replica(index);
  }
  Klass* k = resolve_class(current, program, class_name, CHECK_NULL);
  oop fresh;
  if (k->is_instance_klass()) {
    InstanceKlass* ik = InstanceKlass::cast(k);
    // Linked, not initialized: an object arriving is not a `new` here (JLS
    // 12.4.1), and its class was initialized where the object was made.
    // Initializing here, inside a decode, could wait for a class another
    // thread of this node is initializing while that thread waits for one
    // this decode holds (a superclass whose statics name an instance of the
    // subclass): a daemon takes the statics soon after instead, so that the
    // compilers see the class initialized (dsoClassInit.hpp).
    ik->link_class(CHECK_NULL);
    fresh = ik->allocate_instance(CHECK_NULL);
    DsoClassInit::replica_made(current, ik);  // initialized off this decode; no safepoint
    if (ik->is_subclass_of(vmClasses::Thread_klass())) {
      Handle thread(current, fresh);
      DsoThreads::init_node_local_fields(current, thread, CHECK_NULL);
      fresh = thread();
    }
  } else if (k->is_typeArray_klass()) {
    fresh = TypeArrayKlass::cast(k)->allocate(array_length, CHECK_NULL);
  } else {
    fresh = ObjArrayKlass::cast(k)->allocate(array_length, CHECK_NULL);
  }
  if (identity_hash == markWord::no_hash || identity_hash > markWord::hash_mask) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: shared object " UINT64_FORMAT_X " has no valid identity hash", id));
  }
  Handle kept(current, fresh);
  // Until the entry names the handle: the cache lets go of unnamed ones.
  DsoHandlesHeld held(current);
  djava_sos_chunk* chunk = DsoNode::lib().djava_sos_chunk_for(DsoNode::sos(), id);
  djava_sos_status dropped;
  index = drop_orphan_copy(current, chunk, id, &dropped);
  fresh = kept();
  if (index != 0) {
    return DsoReplicaTable::replica(index);  // another thread made one meanwhile
  }
  if (dropped != DJAVA_SOS_OK) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: shared object " UINT64_FORMAT_X " is modified on this node "
                           "but has no replica here", id));
  }
  if (elems_shift < 0 || elems_shift > 30 || (elems_shift > 0 && !fresh->is_array())) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: shared object " UINT64_FORMAT_X " (%s) has a bad block layout (%d)",
                           id, fresh->klass()->external_name(), elems_shift));
  }
  DsoBlocks* blocks = NULL;
  if (elems_shift > 0) {
    // No block is looked up yet: the zeroed pages go back until used.
    blocks = DsoBlocks::create(id, fresh, elems_shift);
    size_t released = blocks->make_releasable(fresh);
    log_debug(dso)("replica of " UINT64_FORMAT_X " (%s, %u blocks): %zu KiB not kept", id,
                   fresh->klass()->external_name(), blocks->_count, released / K);
  }
  index = DsoReplicaTable::materialize(current, fresh, id, identity_hash, chunk, program, blocks);
  if (index == 0) {
    DsoBlocks::destroy(blocks);
    THROW_MSG_NULL(vmSymbols::java_lang_OutOfMemoryError(),
                   "djava: this node's replica table is full");
  }
  // Not pinned: a read copy at most, until a write access is granted.
  return DsoReplicaTable::replica(index);
}


// The replica an install makes for attach on this thread, held strongly
// until attach has a handle to it: only the table's weak handle names it
// otherwise, and a GC as the load comes back from native state took it
// (a shipped thread then failed to start: "no shared object X: OK").
static THREAD_LOCAL uint64_t attaching_id = 0;
static THREAD_LOCAL jobject attached = NULL;

oop DsoHeap::attach(JavaThread* current, uint64_t id, TRAPS) {
  // Until the install names the handle from a replica's entry.
  DsoHandlesHeld held(current);
  djava_sos_chunk* chunk = NULL;
  for (int attempt = 0; attempt < attach_attempts; attempt++) {
    uint index = DsoReplicaTable::index_of(id);
    if (index != 0) {
      return DsoReplicaTable::replica(index);  // held until the next safepoint
    }
    if (chunk == NULL) {
      chunk = DsoNode::lib().djava_sos_chunk_for(DsoNode::sos(), id);
      if (chunk == NULL) {
        THROW_MSG_NULL(vmSymbols::java_lang_IllegalArgumentException(),
                       "djava: 0 is no object's id");
      }
    }
    // No replica here: a copy the cache still holds is an orphan (GC took
    // its replica; a thread's Thread object once its starter let go of it)
    // and would make the load below succeed without making a replica, as
    // replica_of says. The load then fetches, and its install makes one,
    // held for this thread (attached) until it has a handle.
    djava_sos_error error;
    djava_sos_status status;
    index = drop_orphan_copy(current, chunk, id, &status);
    if (index != 0) {
      return DsoReplicaTable::replica(index);
    }
    attaching_id = id;
    bool accessing = false;
    {
      ThreadToNativeFromVM in_native(current);
      if (status == DJAVA_SOS_OK) {
        status = DsoNode::lib().djava_sos_load(chunk, &error);
        accessing = status == DJAVA_SOS_OK;
      } else {
        jio_snprintf(error.message, sizeof(error.message),
                     "it is modified on this node but has no replica here");
      }
    }
    attaching_id = 0;
    Handle made;
    if (attached != NULL) {
      made = Handle(current, JNIHandles::resolve(attached));
      JNIHandles::destroy_global(attached);
      attached = NULL;
    }
    if (accessing) {
      // A load may be granted the only copy (a migratory chunk, docs/SOS.md):
      // the replica is then pinned before the access ends, as
      // begin_access_range does, or GC could take the only current bytes.
      uint made_index = DsoReplicaTable::index_of_chunk(chunk);
      if (made.not_null() && made_index != 0 && DsoReplicaTable::is_modified(chunk)) {
        DsoReplicaTable::pin(DsoReplicaTable::entry(made_index), made());
      }
      DsoNode::lib().djava_sos_release(chunk);
    }
    if (DjavaStressAttachGC) {
      Universe::heap()->collect(GCCause::_java_lang_system_gc);
    }
    if (HAS_PENDING_EXCEPTION) {
      return NULL;
    }
    if (made.not_null() && status == DJAVA_SOS_OK) {
      return made();
    }
    if (status != DJAVA_SOS_OK) {
      index = DsoReplicaTable::index_of(id);  // another thread made one meanwhile
      if (index != 0) {
        return DsoReplicaTable::replica(index);
      }
      DsoNode::stop_if_left(current);
      THROW_MSG_NULL(vmSymbols::java_lang_IllegalArgumentException(),
                     err_msg("djava: no shared object " UINT64_FORMAT_X ": %s: %s", id,
                             DsoNode::lib().djava_sos_status_name(status), error.message));
    }
  }
  THROW_MSG_NULL(vmSymbols::java_lang_IllegalStateException(),
                 err_msg("djava: shared object " UINT64_FORMAT_X ": its replica here was collected "
                         "as soon as it was made, %d times", id, attach_attempts));
}

// ---- accesses --------------------------------------------------------------------

// The chunk of block k of e's array, looked up on this node's first use of
// the block. A copy the cache holds of it may be an orphan, as in
// drop_orphan_copy (GC took the replica it was installed into): it is
// dropped before the block names this entry.
static djava_sos_chunk* block_chunk(JavaThread* current, DsoReplica* e, uint32_t k, TRAPS) {
  DsoBlocks* b = e->_blocks;
  djava_sos_chunk* c = Atomic::load_acquire(&b->_chunks[k]);
  if (c != NULL) {
    return c;
  }
  uint64_t id = b->_base_id + 1 + k;
  DsoHandlesHeld held(current);  // until the block names the entry
  c = DsoNode::lib().djava_sos_chunk_for(DsoNode::sos(), id);
  for (int attempt = 0; ; attempt++) {
    uintptr_t owner = DsoNode::lib().djava_sos_user(c);
    if (owner == e->_user) {
      break;  // another thread of this node looked it up meanwhile
    }
    djava_sos_status status;
    {
      ThreadToNativeFromVM in_native(current);
      status = DsoNode::lib().djava_sos_drop_copy(c, owner);
    }
    if (status == DJAVA_SOS_OK) {
      DsoNode::lib().djava_sos_set_user(c, e->_user);
      break;
    }
    if (DsoNode::lib().djava_sos_user(c) == owner || attempt == attach_attempts) {
      THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                     err_msg("djava: block %u of shared array " UINT64_FORMAT_X " is modified on "
                             "this node but has no replica here", k, b->_base_id));
    }
  }
  b->set_chunk(k, c);
  return c;
}

// The blocks [*first, *last] of e's array that hold its bytes [from, to).
static void blocks_of_range(DsoReplica* e, oop obj, jlong from, jlong to, uint32_t* first,
                            uint32_t* last) {
  arrayOop a = arrayOop(obj);
  int l2es = Klass::layout_helper_log2_element_size(a->klass()->layout_helper());
  jlong base = arrayOopDesc::base_offset_in_bytes(
      Klass::layout_helper_element_type(a->klass()->layout_helper()));
  jlong length = a->length();
  jlong first_element = from <= base ? 0 : (from - base) >> l2es;
  jlong last_element = to - 1 <= base ? 0 : (to - 1 - base) >> l2es;
  first_element = MIN2(first_element, length - 1);
  last_element = MAX2(first_element, MIN2(last_element, length - 1));
  *first = (uint32_t)(first_element >> e->_blocks->_elems_shift);
  *last = (uint32_t)(last_element >> e->_blocks->_elems_shift);
}

// A block's state here (I when its chunk is not looked up yet).
static uint64_t state_of(volatile uint64_t* word) {
  return word == NULL ? DJAVA_SOS_WORD_STATE_I
                      : __atomic_load_n(word, __ATOMIC_ACQUIRE) & DJAVA_SOS_WORD_STATE_MASK;
}

// What a prefetch asks for: read copies, write access, or write access
// only to chunks no node has written since their making.
enum class Fetch { read, write, first_write };

// Asks for the chunks ids names in one frame and returns at once: a
// failure shows again in the access that follows. With at_least, a read or
// write only when that many of them (or the first) are still to be asked
// for: a scan's window refilled a batch at a time.
static void prefetch(JavaThread* current, const uint64_t* ids, size_t n, Fetch fetch,
                     size_t at_least = 0) {
  djava_sos_error error;
  ThreadToNativeFromVM in_native(current);
  if (at_least > 1 && fetch != Fetch::first_write) {
    DsoNode::lib().djava_sos_prefetch_window(DsoNode::sos(), ids, n, fetch == Fetch::write ? 1 : 0,
                                             at_least, &error);
    return;
  }
  switch (fetch) {
    case Fetch::read:
      DsoNode::lib().djava_sos_prefetch(DsoNode::sos(), ids, n, &error);
      break;
    case Fetch::write:
      DsoNode::lib().djava_sos_prefetch_exclusive(DsoNode::sos(), ids, n, &error);
      break;
    case Fetch::first_write:
      DsoNode::lib().djava_sos_prefetch_first_writes(DsoNode::sos(), ids, n, &error);
      break;
  }
}

// The window of blocks a sequential scan keeps asked for ahead of it, and
// the batch it is refilled by (docs/HEAP.md, Arrays in blocks).
static const uint32_t blocks_ahead = 15;
static const uint32_t blocks_batch = 8;

// An access to block k misses here while block k - 1 has a copy here: a
// sequential scan, so the blocks of the window k .. k + blocks_ahead this
// node lacks are asked for in one frame (the access that follows waits for
// k's answer like any other): for writing if the access writes or block
// k - 1 is modified here (a scan that writes as it goes, such as
// a[i] += x), else for reading. A scan that overtakes the frames misses on
// blocks asked for already; the frame then goes only once a batch of the
// window is left to ask for, so a scan sends a frame a batch, not one a
// block. Wrong, it costs up to blocks_ahead blocks' bytes, and copies other
// nodes must take back (for writing: a writer of the next blocks misses
// again).
static void fetch_ahead(JavaThread* current, DsoReplica* e, uint32_t k, bool write, TRAPS) {
  DsoBlocks* b = e->_blocks;
  uint64_t own = state_of(Atomic::load_acquire(&b->_words[k]));
  if (k == 0 || own == DJAVA_SOS_WORD_STATE_M || (!write && own == DJAVA_SOS_WORD_STATE_S)) {
    return;  // no miss (a runtime path's access, which no inline test preceded)
  }
  uint64_t previous = state_of(Atomic::load_acquire(&b->_words[k - 1]));
  if (previous == DJAVA_SOS_WORD_STATE_I) {
    return;
  }
  bool exclusive = write || previous == DJAVA_SOS_WORD_STATE_M;
  uint64_t enough = exclusive ? DJAVA_SOS_WORD_STATE_M : DJAVA_SOS_WORD_STATE_S;
  uint64_t ids[blocks_ahead + 1];
  size_t n = 0;
  for (uint32_t j = k; j < b->_count && j <= k + blocks_ahead; j++) {
    uint64_t state = state_of(Atomic::load_acquire(&b->_words[j]));
    if (j > k && (state == DJAVA_SOS_WORD_STATE_M || state == enough)) {
      break;  // fetched already: the scan reaches it next
    }
    block_chunk(current, e, j, CHECK);
    ids[n++] = b->_base_id + 1 + j;
  }
  prefetch(current, ids, n, exclusive ? Fetch::write : Fetch::read, blocks_batch);
}

// The state here of the copy of the object element k of a names (I when it
// is none, or an array in blocks).
static uint64_t state_of_named(objArrayOop a, uint k) {
  oop o = a->obj_at(k);
  if (o == NULL || !DsoMark::is_shared(o)) {
    return DJAVA_SOS_WORD_STATE_I;
  }
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(o->mark()));
  return e->_blocks != NULL ? DJAVA_SOS_WORD_STATE_I : state_of(e->_word);
}

// How far ahead of a walk over an array's elements the objects they name
// are asked for, and how often (docs/HEAP.md, "Rows fetched ahead").
static const uint named_ahead = 16;
static const uint named_every = 4;

// An access misses on obj, which never had bytes here and which element k
// of reference array a names (a row of a double[][] that arrived), while
// the object element k - 1 names has a copy here that a walk like this one
// left: a read copy for a read (and element k - 2's not modified here: a
// sweep that writes the rows it reads, as a grid's does, would then write
// each of them after the others' read copies were made), a modified one
// for a write. A walk over a's elements (a matrix's rows, a grid's) would
// miss on each object in turn, a round trip apiece. At every named_every-th element the objects of the
// next named_ahead elements that never had bytes here either are asked for
// in one frame with obj (the cache leaves out those asked for already; the
// access that follows waits for obj's answer like any other), for reading
// or writing as the access. So the walk waits at its start, and then only
// when it overtakes the frames. Only first copies: an object whose copy
// here was taken away is being written elsewhere (a neighbour's rows in a
// grid), and a read copy of it would cost that writer an upgrade. The
// elements are read without an access of a: a hint (whatever they name is
// a valid object; a wrong guess costs bytes, and copies other nodes take
// back).
static void fetch_named_after(JavaThread* current, oop obj, DsoReplica* e, bool write) {
  uint by = Atomic::load_acquire(&e->_named_by);
  uint k = e->_named_at;
  if (by == 0 || k == 0 || k % named_every != 0 || Atomic::load_acquire(&e->_held_bytes) ||
      state_of(e->_word) != DJAVA_SOS_WORD_STATE_I) {
    return;
  }
  oop named_by = DsoReplicaTable::replica_if_live(by);
  if (named_by == NULL || !named_by->is_objArray() ||
      k >= (uint)objArrayOop(named_by)->length() || objArrayOop(named_by)->obj_at(k) != obj) {
    return;  // collected, or its entry made anew since
  }
  objArrayOop a = objArrayOop(named_by);
  uint64_t previous = state_of_named(a, k - 1);
  uint64_t before = k >= 2 ? state_of_named(a, k - 2) : DJAVA_SOS_WORD_STATE_I;
  Fetch fetch;
  if (write) {
    if (previous != DJAVA_SOS_WORD_STATE_M) {
      return;
    }
    fetch = Fetch::write;
  } else if (previous == DJAVA_SOS_WORD_STATE_M ||
             (previous == DJAVA_SOS_WORD_STATE_S && before == DJAVA_SOS_WORD_STATE_M)) {
    fetch = Fetch::first_write;
  } else if (previous == DJAVA_SOS_WORD_STATE_S && before == DJAVA_SOS_WORD_STATE_S) {
    fetch = Fetch::read;
  } else {
    return;
  }
  uint64_t ids[named_ahead + 1];
  size_t n = 0;
  ids[n++] = e->_global_id;
  uint length = (uint)a->length();
  for (uint j = k + 1; j < length && j <= k + named_ahead; j++) {
    oop next = a->obj_at(j);
    if (next == NULL || !DsoMark::is_shared(next)) {
      continue;
    }
    DsoReplica* ne = DsoReplicaTable::entry(DsoMark::index(next->mark()));
    if (ne->_blocks != NULL || ne->_chunk == NULL) {
      continue;  // an array in blocks: its own walk fetches its blocks ahead
    }
    if (Atomic::load_acquire(&ne->_held_bytes)) {
      break;  // had bytes here: the walk is this node's own from here, or another's
    }
    ids[n++] = ne->_global_id;
  }
  if (n < 2) {
    return;
  }
  prefetch(current, ids, n, fetch);
}

djava_sos_chunk* DsoHeap::chunk_at(JavaThread* current, oop obj, jlong offset, TRAPS) {
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(obj->mark()));
  if (e->_blocks == NULL) {
    return e->_chunk;
  }
  uint32_t first, last;
  blocks_of_range(e, obj, offset, offset + 1, &first, &last);
  return block_chunk(current, e, first, THREAD);
}

// One chunk's access; throws if it fails, naming obj.
static bool begin_chunk_access(JavaThread* current, Handle obj, djava_sos_chunk* chunk,
                               bool write, TRAPS) {
  djava_sos_error error;
  djava_sos_status status;
  {
    // A miss waits for the network: GC and other threads go on meanwhile.
    // The install callback decodes the fetched bytes on this thread.
    ThreadToNativeFromVM in_native(current);
    status = write ? DsoNode::lib().djava_sos_lock(chunk, &error)
                   : DsoNode::lib().djava_sos_load(chunk, &error);
  }
  if (status == DJAVA_SOS_OK && HAS_PENDING_EXCEPTION) {
    // Decoding failed (class not found, ...): the exception stands, and the
    // access it was for never happens.
    DsoNode::lib().djava_sos_release(chunk);
    return false;
  }
  if (status == DJAVA_SOS_OK) {
    return true;
  }
  if (HAS_PENDING_EXCEPTION) {
    return false;
  }
  DsoNode::stop_if_left(current);
  if (status == DJAVA_SOS_DISCONNECTED) {
    DsoNode::cluster_lost(current, error.message);
  }
  ResourceMark rm(current);
  THROW_MSG_(vmSymbols::java_lang_InternalError(),
             err_msg("djava: cannot %s a %s: %s: %s", write ? "write" : "read",
                     obj->klass()->external_name(), DsoNode::lib().djava_sos_status_name(status),
                     error.message), false);
}

void DsoHeap::begin_access_range(JavaThread* current, Handle obj, jlong from, jlong to,
                                 bool write, TRAPS) {
  markWord mark = obj->mark();
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(mark));
  djava_sos_chunk* chunk = e->_chunk;
  if (chunk == NULL) {
    ResourceMark rm(current);
    THROW_MSG(vmSymbols::java_lang_InternalError(),
              err_msg("djava: shared object " UINT64_FORMAT_X " (%s) has no chunk on this node "
                      "(mark " INTPTR_FORMAT ", replica entry %u)", e->_global_id,
                      obj->klass()->external_name(), mark.value(), DsoMark::index(mark)));
  }
  if (e->_blocks == NULL) {
    fetch_named_after(current, obj(), e, write);
    if (begin_chunk_access(current, obj, chunk, write, THREAD) &&
        (write || DsoReplicaTable::is_modified(chunk))) {
      // In M now (a write's grant, or a read's of a migratory chunk): the
      // only current copy of the bytes is this replica. The access holds
      // off any flush until it ends, so the pin cannot come after one.
      DsoReplicaTable::pin(e, obj());
    }
    return;
  }
  uint32_t first, last;
  blocks_of_range(e, obj(), from, to, &first, &last);
  if (first == last) {
    fetch_ahead(current, e, first, write, CHECK);
  }
  for (uint32_t k = first; k <= last; k++) {
    djava_sos_chunk* block = block_chunk(current, e, k, THREAD);
    if (block == NULL || !begin_chunk_access(current, obj, block, write, THREAD)) {
      for (uint32_t held = first; held < k; held++) {
        DsoNode::lib().djava_sos_release(e->_blocks->_chunks[held]);
      }
      return;
    }
  }
  bool modified = write;
  for (uint32_t k = first; k <= last && !modified; k++) {
    modified = DsoReplicaTable::is_modified(e->_blocks->_chunks[k]);
  }
  if (modified) {
    DsoReplicaTable::pin_blocked(e, obj());
  }
}

void DsoHeap::end_access_range(oop obj, jlong from, jlong to) {
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(obj->mark()));
  if (e->_blocks == NULL) {
    DsoNode::lib().djava_sos_release(e->_chunk);
    return;
  }
  uint32_t first, last;
  blocks_of_range(e, obj, from, to, &first, &last);
  for (uint32_t k = first; k <= last; k++) {
    DsoNode::lib().djava_sos_release(e->_blocks->_chunks[k]);
  }
}

// ---- the cache's callbacks ----------------------------------------------------------

// The program whose class loader resolves the classes an object's bytes
// name, in both directions: a class's statics belong to the program of the
// class, not to whichever thread touched the mirror (a thread server's own
// thread reads a program class's mirror when it links a lambda of that
// class); any other object to the program its chunk was made for.
static uint64_t program_of_replica(JavaThread* current, oop replica, const djava_sos_meta* meta) {
  if (java_lang_Class::is_instance(replica)) {
    Klass* k = java_lang_Class::as_Klass(replica);
    uint64_t program =
        k != NULL && k->is_instance_klass() ? DsoStatics::program_of(InstanceKlass::cast(k)) : 0;
    if (program != 0) {
      return program;
    }
  } else if (meta != NULL && meta->program != 0) {
    return meta->program;
  }
  return DsoThreads::current_program(current);
}

// After a fetch, on the accessing Java thread (in native, inside
// djava_sos_load/lock): decode the bytes into the replica.
static int install(void* context, djava_sos_chunk* chunk, uint64_t id, const djava_sos_meta* meta,
                   const void* bytes, size_t size, char* error, size_t error_capacity) {
  JavaThread* current = JavaThread::current();
  ThreadInVMfromNative in_vm(current);
  HandleMark hm(current);
  uint index = DsoReplicaTable::index_of_chunk(chunk);
  Handle replica;
  if (index != 0) {
    replica = Handle(current, DsoReplicaTable::replica(index));
  }
  if (replica.is_null() && meta->class_name != NULL) {
    // Attached by id alone (DsoHeap::attach), or the replica was collected
    // and its entry not reclaimed yet: the meta says what to make (and the
    // bytes of an array kept in blocks, how).
    int elems_shift = meta->element_type != 0 ? DsoMarshal::blocks_header_shift(bytes, size) : 0;
    oop made = DsoHeap::replica_of(current, meta->program, id, meta->class_name,
                                   meta->identity_hash, meta->array_length, elems_shift, current);
    if (current->has_pending_exception()) {
      ResourceMark rm(current);
      oop message = java_lang_Throwable::message(current->pending_exception());
      jio_snprintf(error, error_capacity, "%s",
                   message != NULL ? java_lang_String::as_utf8_string(message) : "no replica");
      return 1;
    }
    replica = Handle(current, made);
  }
  if (replica.is_null()) {
    jio_snprintf(error, error_capacity, "chunk " UINT64_FORMAT_X " has no replica on this node", id);
    return 1;
  }
  if (attaching_id == id && attached == NULL) {
    attached = JNIHandles::make_global(replica);  // for attach, which lets go
  }
  // A class's static fields (a mirror) are a named chunk: no class in meta.
  if (!java_lang_Class::is_instance(replica())) {
    ResourceMark rm(current);
    if (meta->class_name == NULL || !DsoClassNames::is_named(replica->klass(), meta->class_name)) {
      jio_snprintf(error, error_capacity, "chunk " UINT64_FORMAT_X " holds a %s, its replica is a %s",
                   id, meta->class_name != NULL ? meta->class_name : "(no class)",
                   replica->klass()->name()->as_C_string());
      return 1;
    }
  }
  uint64_t program = program_of_replica(current, replica(), meta);
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(replica->mark()));
  if (e->_blocks == NULL) {
    DsoMarshal::decode(current, program, replica, (const u1*)bytes, size, current);
    if (!current->has_pending_exception()) {
      Atomic::release_store(&e->_held_bytes, true);
    }
  } else if (id == e->_global_id) {
    // The array's own chunk: only its layout, which this node has.
    if (DsoMarshal::blocks_header_shift(bytes, size) != e->_blocks->_elems_shift) {
      jio_snprintf(error, error_capacity, "chunk " UINT64_FORMAT_X " does not describe its "
                   "array's blocks as references to it do", id);
      return 1;
    }
  } else {
    uint64_t k = id - e->_global_id - 1;
    if (id <= e->_global_id || k >= e->_blocks->_count) {
      jio_snprintf(error, error_capacity, "chunk " UINT64_FORMAT_X " is no block of array "
                   UINT64_FORMAT_X, id, e->_global_id);
      return 1;
    }
    int from, to;
    e->_blocks->elements_of((uint32_t)k, arrayOop(replica())->length(), &from, &to);
    DsoMarshal::decode_elements(current, program, replica, from, to, (const u1*)bytes, size,
                                current);
  }
  if (current->has_pending_exception()) {
    // The exception stays pending for begin_access to throw.
    ResourceMark rm(current);
    oop message = java_lang_Throwable::message(current->pending_exception());
    jio_snprintf(error, error_capacity, "%s",
                 message != NULL ? java_lang_String::as_utf8_string(message) : "decoding failed");
    return 1;
  }
  return 0;
}

// The cache's own threads may produce bytes for a flush: they must be
// JavaThreads to read the heap safely.
static jobject cache_thread_group = NULL;

void DsoHeap::prepare_cache_thread(JavaThread* current) {
  cache_thread_group = JNIHandles::make_global(Handle(current, Universe::system_thread_group()));
}

JavaThread* DsoHeap::attach_cache_thread() {
  Thread* t = Thread::current_or_null();
  if (t == NULL) {
    JNIEnv* env;
    JavaVMAttachArgs args = { JNI_VERSION_1_2, (char*)"djava sos-client", cache_thread_group };
    if (main_vm.AttachCurrentThreadAsDaemon((void**)&env, &args) != JNI_OK) {
      fatal("djava: the shared-object cache's thread cannot attach to the VM");
    }
    t = Thread::current();
  }
  assert(t->is_Java_thread(), "the cache calls back on Java threads or its own");
  return t->as_Java_thread();
}

// A flush put off because the bytes reference an object that cannot be
// shared yet: says why when the wait grows long (sos-server cuts a node off
// whose flush stays unanswered, by default after 30 s), and asks for idle
// HotSpot monitors to be deflated (an object keeps an inflated monitor long
// after its last lock, and its header is in the monitor meanwhile).
static void flush_put_off(JavaThread* current, DsoReplica* e, uint64_t id, oop replica,
                          oop blocker) {
  jlong now = os::javaTimeNanos();
  if (e->_flush_deferred_ns == 0) {
    e->_flush_deferred_ns = now;
  }
  markWord mark = blocker->mark();
  address owner = NULL;
  bool waited_on = false;
  bool idle = has_idle_monitor(blocker);
  if (idle) {
    request_monitor_deflation();
  } else if (mark.has_locker()) {
    owner = (address)mark.locker();
  } else if (mark.has_monitor()) {
    owner = (address)mark.monitor()->owner();
    waited_on = mark.monitor()->waiters() > 0;
    if (owner == NULL && waited_on) {
      // What they wait for may need this flush: they let go for it.
      DsoMonitors::ask_waiters_to_step_aside(current, mark.monitor());
    }
  }
  const jlong warn_after = NANOSECS_PER_SEC, warn_every = 10 * NANOSECS_PER_SEC;
  if (now - e->_flush_deferred_ns < warn_after ||
      (e->_flush_warned_ns != 0 && now - e->_flush_warned_ns < warn_every)) {
    return;
  }
  e->_flush_warned_ns = now;
  ResourceMark rm(current);
  stringStream why;
  if (mark.is_neutral()) {
    why.print("could not make shared (see the warning before)");
  } else if (idle) {
    why.print("no thread holds, but whose HotSpot monitor is not deflated yet");
  } else if (waited_on) {
    why.print("threads wait on (Object.wait)");
  } else {
    oop name = NULL;
    if (owner != NULL) {
      ThreadsListHandle tlh(current);
      JavaThread* t = Threads::owning_thread_from_monitor_owner(tlh.list(), owner);
      name = t != NULL && t->threadObj() != NULL ? java_lang_Thread::name(t->threadObj()) : NULL;
    }
    if (name != NULL) {
      why.print("thread \"%s\" holds locked (synchronized)", java_lang_String::as_utf8_string(name));
    } else {
      why.print("another thread holds locked (synchronized)");
    }
  }
  log_warning(dso)("shared object " UINT64_FORMAT_X " (%s) is wanted by another node, but it "
                   "references a %s that %s; it cannot be shared until then (waiting %.1f s)",
                   id, replica->klass()->external_name(), blocker->klass()->external_name(),
                   why.as_string(), (now - e->_flush_deferred_ns) / 1e9);
}

// A first flush put off for the publication fence: a fence takes one
// handshake, so a wait beyond a second means a thread that does not reach
// one (dsoFence.cpp says which, if it can); sos-server cuts the node off
// when it lasts 30 s.
static void flush_waits_for_fence(DsoReplica* e, uint64_t id, oop replica, uint64_t fence) {
  jlong now = os::javaTimeNanos();
  if (e->_flush_deferred_ns == 0) {
    e->_flush_deferred_ns = now;
  }
  const jlong warn_after = NANOSECS_PER_SEC, warn_every = 10 * NANOSECS_PER_SEC;
  if (now - e->_flush_deferred_ns < warn_after ||
      (e->_flush_warned_ns != 0 && now - e->_flush_warned_ns < warn_every)) {
    return;
  }
  e->_flush_warned_ns = now;
  ResourceMark rm;
  log_warning(dso)("shared object " UINT64_FORMAT_X " (%s) is wanted by another node, but its "
                   "first flush waits for publication fence " UINT64_FORMAT " (%s); waiting "
                   "%.1f s", id, replica->klass()->external_name(), fence,
                   DsoFence::describe(), (now - e->_flush_deferred_ns) / 1e9);
}

// Encodes the chunk's replica for a flush, or says it must wait. In VM or
// Java state: no safepoint moves the replica meanwhile.
static size_t encode_for_flush(JavaThread* current, djava_sos_chunk* chunk, uint64_t id,
                               void* buffer, size_t capacity) {
  uint index = DsoReplicaTable::index_of_chunk(chunk);
  oop replica = index != 0 ? DsoReplicaTable::replica(index) : (oop)NULL;
  if (replica == NULL) {
    // Cannot happen: a chunk in M is pinned (DsoReplicaTable::pin); if it
    // does, the reader gets bytes it refuses loudly, never a zeroed object.
    log_error(dso)("chunk " UINT64_FORMAT_X " has no replica here to flush", id);
    return 0;
  }
  // Objects the bytes reference that become shared here belong to the
  // program of the object being flushed (not of whichever thread flushes).
  uint64_t program = program_of_replica(current, replica, DsoNode::lib().djava_sos_meta_of(chunk));
  DsoReplica* e = DsoReplicaTable::entry(index);
  // A newly published object: threads that tested it local may be storing
  // into it still (dsoFence.hpp).
  uint64_t fence = Atomic::load_acquire(&e->_fence_stamp);
  if (fence == DsoReplicaTable::fence_unstamped) {
    return DJAVA_SOS_PRODUCE_LATER;  // tagged a moment ago: its publisher stamps it next
  }
  if (fence != 0) {
    if (!DsoFence::flush_may_go(fence)) {
      flush_waits_for_fence(e, id, replica, fence);
      return DJAVA_SOS_PRODUCE_LATER;
    }
    e->_fence_stamp = 0;
  }
  oop blocker = NULL;
  size_t size;
  DsoMarshal::Refs refs;
  if (e->_blocks == NULL) {
    size = DsoMarshal::encode(replica, (u1*)buffer, capacity, program, &blocker, &refs);
  } else if (id == e->_global_id) {
    size = DsoMarshal::encode_blocks_header(e->_blocks->_elems_shift, e->_blocks->_count,
                                            (u1*)buffer, capacity);
    // Its blocks are reachable with it.
    refs.run_heads.append(id);
    refs.run_blocks.append(e->_blocks->_count);
  } else {
    int from, to;
    e->_blocks->elements_of((uint32_t)(id - e->_global_id - 1), arrayOop(replica)->length(),
                            &from, &to);
    size = DsoMarshal::encode_elements(replica, from, to, (u1*)buffer, capacity, program,
                                       &blocker, &refs);
  }
  if (size == DsoMarshal::not_now) {
    flush_put_off(current, e, id, replica, blocker);
    return DJAVA_SOS_PRODUCE_LATER;
  }
  e->_flush_deferred_ns = 0;
  e->_flush_warned_ns = 0;
  if (size <= capacity) {
    // The server's edges from this chunk to those its bytes name.
    bool runs = refs.run_heads.length() > 0;
    DsoNode::lib().djava_sos_produced_refs(chunk,
                                           refs.ids.length() > 0 ? refs.ids.adr_at(0) : NULL,
                                           (size_t)refs.ids.length(),
                                           runs ? refs.run_heads.adr_at(0) : NULL,
                                           runs ? refs.run_blocks.adr_at(0) : NULL,
                                           (size_t)refs.run_heads.length());
    // The bytes are on their way to the server: what references the
    // replica here is what keeps it (an array in blocks: once none is
    // modified here).
    DsoReplicaTable::unpin_after_flush(e, chunk);
  }
  return size;
}

static size_t produce(void* context, djava_sos_chunk* chunk, uint64_t id, void* buffer,
                      size_t capacity) {
  JavaThread* current = DsoHeap::attach_cache_thread();
  if (current->thread_state() == _thread_in_native) {
    ThreadInVMfromNative in_vm(current);
    return encode_for_flush(current, chunk, id, buffer, capacity);
  }
  // A Java thread whose release ended the last access: in Java or VM state.
  return encode_for_flush(current, chunk, id, buffer, capacity);
}

static void cache_thread_ending(void* context) {
  if (Thread::current_or_null() != NULL) {
    main_vm.DetachCurrentThread();
  }
}

static const djava_sos_callbacks the_callbacks = {
  NULL, install, produce, NULL, cache_thread_ending, DsoInterpreter::quiesce_writers
};

const djava_sos_callbacks* DsoHeap::callbacks() {
  return &the_callbacks;
}
