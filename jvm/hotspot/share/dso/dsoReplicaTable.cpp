/*
 * djava: the node's table of replicas of shared objects (see the header).
 */

#include "precompiled.hpp"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReferences.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoStatistics.hpp"
#include "gc/shared/oopStorage.hpp"
#include "gc/shared/oopStorageSet.hpp"
#include "logging/log.hpp"
#include "memory/allocation.hpp"
#include "memory/universe.hpp"
#include "oops/oopHandle.inline.hpp"
#include "oops/oop.inline.hpp"
#include "oops/symbol.hpp"
#include "oops/weakHandle.inline.hpp"
#include "runtime/atomic.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/java.hpp"
#include "runtime/mutex.hpp"
#include "runtime/mutexLocker.hpp"
#include "runtime/objectMonitor.inline.hpp"
#include "runtime/orderAccess.hpp"
#include "runtime/thread.inline.hpp"
#include "runtime/basicLock.hpp"
#include "runtime/os.inline.hpp"
#include "runtime/synchronizer.hpp"
#include "utilities/align.hpp"
#include "utilities/resourceHash.hpp"

typedef ResourceHashtable<uint64_t, uint, primitive_hash<uint64_t>, primitive_equals<uint64_t>,
                          65537, ResourceObj::C_HEAP, mtInternal> DsoIdToIndex;

DsoReplica*   DsoReplicaTable::_entries = NULL;
uint          DsoReplicaTable::_high_water = 1;  // index 0 means "no replica"
uint          DsoReplicaTable::_committed = 0;
uint          DsoReplicaTable::_free_head = 0;
uint64_t      DsoReplicaTable::_made = 0;
size_t        DsoReplicaTable::_live = 0;
volatile bool DsoReplicaTable::_has_dead = false;
volatile uint DsoReplicaTable::_pin_epoch = 0;
OopStorage*   DsoReplicaTable::_storage = NULL;
Mutex*        DsoReplicaTable::_lock = NULL;
Mutex*        DsoReplicaTable::_pin_lock = NULL;

static DsoIdToIndex* _id_to_index = NULL;

// Entries are committed this many at a time (1.5 MB), as the table grows.
static const uint entries_per_commit = 64 * K;

void DsoReplicaTable::initialize() {
  // OopStorageSet counts its storages, so this one is created on every VM;
  // the table's memory is reserved only when the first object is shared.
  _storage = OopStorageSet::create_weak("djava replica table", mtInternal);
  _storage->register_num_dead_callback(&gc_notification);
  // Never a safepoint while taking it: publication runs in flushes, which
  // may happen on a Java thread's release in the interpreter (Java state).
  _lock = new Mutex(Mutex::leaf, "DsoReplicaTable_lock", true, Mutex::_safepoint_check_never);
  _pin_lock = new Mutex(Mutex::leaf, "DsoReplicaTable_pin_lock", true, Mutex::_safepoint_check_never);
}

// ---- arrays in blocks ----------------------------------------------------------------

DsoBlocks* DsoBlocks::create(uint64_t base_id, oop array, int elems_shift) {
  int lh = array->klass()->layout_helper();
  DsoBlocks* b = NEW_C_HEAP_OBJ(DsoBlocks, mtInternal);
  b->_base_id = base_id;
  b->_count = count_for(arrayOop(array)->length(), elems_shift);
  b->_elems_shift = elems_shift;
  b->_base = arrayOopDesc::base_offset_in_bytes(Klass::layout_helper_element_type(lh));
  b->_byte_shift = elems_shift + Klass::layout_helper_log2_element_size(lh);
  b->_modified_hint = 0;
  b->_releasable = false;
  b->_released_at = NULL;
  b->_chunks = NEW_C_HEAP_ARRAY(djava_sos_chunk* volatile, b->_count, mtInternal);
  b->_words = NEW_C_HEAP_ARRAY(volatile uint64_t* volatile, b->_count, mtInternal);
  for (uint32_t k = 0; k < b->_count; k++) {
    b->_chunks[k] = NULL;
    b->_words[k] = NULL;
  }
  return b;
}

void DsoBlocks::destroy(DsoBlocks* b) {
  if (b != NULL) {
    if (b->_releasable) {
      Atomic::dec(&_releasable_count);
    }
    FREE_C_HEAP_ARRAY(djava_sos_chunk* volatile, b->_chunks);
    FREE_C_HEAP_ARRAY(volatile uint64_t* volatile, b->_words);
    FREE_C_HEAP_OBJ(b);
  }
}

volatile int DsoBlocks::_releasable_count = 0;

// Orders set_chunk and release_untouched on every releasable layout. A
// block is looked up once per replica, and pages go back after GCs that
// moved a replica: one lock for all of them costs nothing.
static os::PlatformMutex* release_lock() {
  static os::PlatformMutex* mutex = new os::PlatformMutex();
  return mutex;
}

void DsoBlocks::set_chunk(uint32_t k, djava_sos_chunk* chunk) {
  if (_releasable) {
    release_lock()->lock();
  }
  // The chunk before the word: a writer that finds the word pins the chunk.
  Atomic::cmpxchg(&_chunks[k], (djava_sos_chunk*)NULL, chunk);
  Atomic::release_store(&_words[k], DsoNode::lib().djava_sos_word(chunk));
  if (_releasable) {
    release_lock()->unlock();
  }
}

size_t DsoBlocks::make_releasable(oop array) {
  assert(!_releasable, "once");
  _releasable = true;
  Atomic::inc(&_releasable_count);
  return release_untouched(array);
}

size_t DsoBlocks::release_untouched(oop array) {
  if (!_releasable) {
    return 0;
  }
  HeapWord* at = cast_from_oop<HeapWord*>(array);
  int length = arrayOop(array)->length();
  int log2_element = _byte_shift - _elems_shift;
  address elements = cast_from_oop<address>(array) + _base;
  size_t page = os::vm_page_size();
  size_t released = 0;
  release_lock()->lock();
  if (_released_at != at) {
    for (uint32_t k = 0; k < _count; ) {
      if (Atomic::load(&_chunks[k]) != NULL) {
        k++;
        continue;
      }
      uint32_t end = k + 1;
      while (end < _count && Atomic::load(&_chunks[end]) == NULL) {
        end++;
      }
      int from, to, unused;
      elements_of(k, length, &from, &unused);
      elements_of(end - 1, length, &unused, &to);
      address lo = align_up(elements + ((size_t)from << log2_element), page);
      address hi = align_down(elements + ((size_t)to << log2_element), page);
      if (hi > lo) {
        // Reads as zeros until written: what the replica held there.
        os::free_memory((char*)lo, (size_t)(hi - lo), page);
        released += (size_t)(hi - lo);
      }
      k = end;
    }
    _released_at = at;
  }
  release_lock()->unlock();
  return released;
}

int DsoBlocks::elems_shift_for(oop array) {
  if (DjavaArrayBlockBytes == 0 || !array->is_array()) {
    return 0;
  }
  int log2_block = log2i(DjavaArrayBlockBytes);  // a power of two, or the one below
  int log2_element = Klass::layout_helper_log2_element_size(array->klass()->layout_helper());
  int shift = log2_block - log2_element;
  if (shift < 1) {
    return 0;
  }
  // Two blocks or more: a smaller array moves whole in one round trip for
  // what a block costs (docs/HEAP.md).
  return ((uint64_t)arrayOop(array)->length() >> shift) >= 2 ? shift : 0;
}

void DsoReplicaTable::set_chunk(DsoReplica* e, djava_sos_chunk* chunk) {
  e->_chunk = chunk;
  e->_word = chunk != NULL && e->_blocks == NULL ? DsoNode::lib().djava_sos_word(chunk) : NULL;
}

uint DsoReplicaTable::index_of_chunk(const djava_sos_chunk* chunk) {
  return (uint)(DsoNode::lib().djava_sos_user(chunk) & max_juint);
}

uint DsoReplicaTable::allocate_index() {
  assert_lock_strong(_lock);
  if (_free_head != 0) {
    uint index = _free_head;
    _free_head = _entries[index]._next_free;
    return index;
  }
  if (_high_water > DsoMark::max_index) {
    return 0;
  }
  if (_entries == NULL) {
    size_t bytes = (size_t)(DsoMark::max_index + 1) * sizeof(DsoReplica);
    _entries = (DsoReplica*)os::reserve_memory(bytes, false, mtInternal);
    if (_entries == NULL) {
      vm_exit_out_of_memory(bytes, OOM_MMAP_ERROR, "djava: reserving the replica table");
    }
    _id_to_index = new (ResourceObj::C_HEAP, mtInternal) DsoIdToIndex();
  }
  if (_high_water >= _committed) {
    os::commit_memory_or_exit((char*)&_entries[_committed], entries_per_commit * sizeof(DsoReplica),
                              false, "djava: growing the replica table");
    _committed += entries_per_commit;
  }
  return _high_water++;
}

void DsoReplicaTable::free_index(uint index) {
  assert_lock_strong(_lock);
  DsoReplica* e = &_entries[index];
  e->_replica = WeakHandle();
  e->_pin = OopHandle();
  e->_pinned = 0;
  e->_global_id = 0;
  if (e->_class_name != NULL) {
    e->_class_name->decrement_refcount();
    e->_class_name = NULL;
  }
  DsoBlocks::destroy(e->_blocks);
  e->_blocks = NULL;
  e->_user = 0;
  set_chunk(e, NULL);
  e->_next_free = _free_head;
  _free_head = index;
}

uint DsoReplicaTable::publish(Thread* current, oop obj, uint64_t global_id,
                              djava_sos_chunk* chunk, uint64_t program, bool new_chunk,
                              DsoBlocks* blocks) {
  HandleMark hm(current);  // the handle must not outlive the call: it would keep obj alive
  Handle h(current, obj);
  markWord mark = obj->mark();
  if (mark.has_locker() && current->is_Java_thread() &&
      current->as_Java_thread()->is_lock_owned((address)mark.locker())) {
    return install_stack_locked(current, h, global_id, chunk, program, new_chunk, blocks);
  }
  if (!mark.is_neutral()) {
    return 0;
  }
  // Keeps an identity hash the object already has: it may be in use locally.
  intptr_t hash = ObjectSynchronizer::FastHashCode(current, h());
  return install(current, h, global_id, (uint)hash, false, chunk, program, new_chunk, blocks);
}

uint DsoReplicaTable::identity_hash_for_publication(Thread* current, oop obj) {
  markWord mark = obj->mark();
  if (mark.has_locker() && current->is_Java_thread() &&
      current->as_Java_thread()->is_lock_owned((address)mark.locker())) {
    // Its owner may set the displaced header's hash: nobody else writes it
    // (an inflater copies it, and install_stack_locked checks for that).
    BasicLock* lock = mark.locker();
    markWord displaced = lock->displaced_header();
    if (!displaced.is_neutral()) {
      return 0;
    }
    if (displaced.has_no_hash()) {
      intptr_t hash;
      do {
        hash = os::random() & markWord::hash_mask;
      } while (hash == markWord::no_hash);
      lock->set_displaced_header(displaced.copy_set_hash(hash));
      return (uint)hash;
    }
    return (uint)displaced.hash();
  }
  if (!mark.is_neutral()) {
    return 0;  // another thread holds it locked
  }
  return (uint)ObjectSynchronizer::FastHashCode(current, obj);
}

// An object the publishing thread holds locked (Thread.start() is
// synchronized): the tag goes into the displaced header in that thread's
// BasicLock, which the unlock puts back into the object. Only the owner
// writes there; if another thread inflated the lock meanwhile (to hash the
// object), the header moved into the ObjectMonitor and the tag follows it.
uint DsoReplicaTable::install_stack_locked(Thread* current, Handle h, uint64_t global_id,
                                           djava_sos_chunk* chunk, uint64_t program,
                                           bool new_chunk, DsoBlocks* blocks) {
  MutexLocker ml(_lock, Mutex::_no_safepoint_check_flag);
  uint index = allocate_index();
  if (index == 0) {
    return 0;
  }
  oop obj = h();
  markWord mark = obj->mark();
  BasicLock* lock = mark.locker();
  markWord displaced = lock->displaced_header();
  if (!displaced.is_neutral() || DsoMark::is_shared(displaced)) {
    free_index(index);
    return 0;
  }
  if (displaced.has_no_hash()) {
    free_index(index);  // identity_hash_for_publication gives it one first
    return 0;
  }
  record(index, h, global_id, chunk, program, new_chunk, blocks);  // before the tag (see install)
  lock->set_displaced_header(DsoMark::tagged(displaced, index));
  OrderAccess::fence();
  if (obj->mark() != mark) {
    // Inflated meanwhile: the monitor holds the header now (and may have
    // copied it before the tag): tag it there too.
    while (obj->mark() == markWord::INFLATING()) {
      os::naked_yield();
    }
    markWord now = obj->mark();
    if (now.has_monitor()) {
      ObjectMonitor* m = now.monitor();
      markWord header = m->header();
      if (!DsoMark::is_shared(header)) {
        m->set_header(DsoMark::tagged(header.has_no_hash() ? header.copy_set_hash(displaced.hash())
                                                           : header, index));
      }
    }
  }
  DsoReferences::mark_shared(obj);
  return index;
}

// The entry of a replica about to be tagged: complete before the tag, which
// any thread of this node may act on at once (see publish).
void DsoReplicaTable::record(uint index, Handle h, uint64_t global_id, djava_sos_chunk* chunk,
                             uint64_t program, bool new_chunk, DsoBlocks* blocks) {
  assert_lock_strong(_lock);
  DsoReplica* e = &_entries[index];
  e->_replica = WeakHandle(_storage, h);
  e->_pin = OopHandle();
  e->_pinned = 0;
  e->_global_id = global_id;
  e->_program = program;
  e->_class_name = h->klass()->name();
  e->_class_name->increment_refcount();
  e->_blocks = blocks;
  set_chunk(e, chunk);
  e->_next_free = 0;
  e->_published_here = new_chunk;
  e->_held_bytes = new_chunk;
  e->_named_by = 0;
  e->_named_at = 0;
  e->_statics_state = 0;
  e->_fence_stamp = new_chunk ? fence_unstamped : 0;
  e->_lock_enters = 0;
  e->_lock_wait_ns = 0;
  e->_flush_deferred_ns = 0;
  e->_flush_warned_ns = 0;
  if (new_chunk) {
    pin(e, h());  // this node has the only copy
  }
  e->_user = (uintptr_t)(++_made) << 32 | index;
  if (chunk != NULL) {
    DsoNode::lib().djava_sos_set_user(chunk, e->_user);
  }
  if (blocks != NULL) {
    // The blocks looked up already (all of them where the array was
    // published) name the entry too.
    for (uint32_t k = 0; k < blocks->_count; k++) {
      if (blocks->_chunks[k] != NULL) {
        DsoNode::lib().djava_sos_set_user(blocks->_chunks[k], e->_user);
      }
    }
  }
  _id_to_index->put(global_id, index);
  _live++;
}

uint DsoReplicaTable::materialize(Thread* current, oop obj, uint64_t global_id, uint identity_hash,
                                  djava_sos_chunk* chunk, uint64_t program, DsoBlocks* blocks) {
  HandleMark hm(current);
  Handle h(current, obj);
  return install(current, h, global_id, identity_hash, true, chunk, program, false, blocks);
}

uint DsoReplicaTable::install(Thread* current, Handle h, uint64_t global_id, uint hash, bool set_hash,
                              djava_sos_chunk* chunk, uint64_t program, bool new_chunk,
                              DsoBlocks* blocks) {
  assert(hash != markWord::no_hash && hash <= markWord::hash_mask, "bad identity hash %u", hash);
  MutexLocker ml(_lock, Mutex::_no_safepoint_check_flag);
  if (Atomic::load(&_has_dead)) {
    reclaim_dead_locked();
  }
  uint* present = _id_to_index != NULL ? _id_to_index->get(global_id) : NULL;
  if (present != NULL && _entries[*present]._replica.peek() == NULL) {
    DsoStatistics::retire(&_entries[*present]);
    forget(*present);  // collected, and GC has not reported it yet
    present = NULL;
  }
  if (present != NULL) {
    DsoBlocks::destroy(blocks);
    return *present;  // materialized meanwhile by another thread
  }
  uint index = allocate_index();
  if (index == 0) {
    return 0;
  }
  // The entry is complete before the tag is in the mark: a thread of this
  // node may meet the object (a published one is in use here) and go to
  // its entry the moment it sees the tag (cas_set_mark orders the stores).
  record(index, h, global_id, chunk, program, new_chunk, blocks);
  oop obj = h();
  while (true) {
    markWord mark = obj->mark();
    if (!mark.is_neutral() || DsoMark::is_shared(mark) ||
        (set_hash ? !mark.has_no_hash() : mark.hash() != hash)) {
      _entries[index]._blocks = NULL;  // the caller's to destroy, as for any 0
      forget(index);  // locked meanwhile, or not the object the caller meant
      return 0;
    }
    markWord hashed = set_hash ? mark.copy_set_hash(hash) : mark;
    if (obj->cas_set_mark(DsoMark::tagged(hashed, index), mark) == mark) {
      break;
    }
  }
  DsoReferences::mark_shared(obj);  // no safepoint since the tag: GC sees both or neither
  log_trace(dso)("replica of " UINT64_FORMAT_X " at index %u (%s)", global_id, index,
                 obj->klass()->external_name());
  return index;
}

void DsoReplicaTable::pin(DsoReplica* e, oop obj) {
  if (Atomic::load(&e->_pinned) == 0 && Atomic::cmpxchg(&e->_pinned, 0, 1) == 0) {
    e->_pinned_epoch = Atomic::load(&_pin_epoch);
    e->_pin = OopHandle(Universe::vm_global(), obj);
  }
}

size_t DsoReplicaTable::release_untouched_blocks() {
  if (DsoBlocks::releasable_count() == 0) {
    return 0;
  }
  size_t released = 0;
  MutexLocker ml(_lock, Mutex::_no_safepoint_check_flag);
  for (uint index = 1; index < _high_water; index++) {
    DsoReplica* e = &_entries[index];
    if (e->_blocks != NULL && e->_blocks->_releasable && !e->_replica.is_empty()) {
      oop obj = e->_replica.peek();
      if (obj != NULL) {
        released += e->_blocks->release_untouched(obj);
      }
    }
  }
  return released;
}

void DsoReplicaTable::write_back_candidates(GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* out) {
  MutexLocker ml(_lock, Mutex::_no_safepoint_check_flag);
  uint epoch = Atomic::load(&_pin_epoch);
  for (uint index = 1; index < _high_water; index++) {
    DsoReplica* e = &_entries[index];
    if (!e->_replica.is_empty() && Atomic::load(&e->_pinned) != 0 && e->_blocks == NULL &&
        e->_chunk != NULL && e->_pinned_epoch != epoch && is_modified(e->_chunk)) {
      out->append(e->_chunk);
    }
  }
  Atomic::store(&_pin_epoch, epoch + 1);
}

void DsoReplicaTable::unpin(DsoReplica* e) {
  if (Atomic::load(&e->_pinned) != 0) {
    e->_pin.release(Universe::vm_global());
    e->_pin = OopHandle();
    Atomic::release_store(&e->_pinned, 0);
  }
}

bool DsoReplicaTable::is_modified(djava_sos_chunk* c) {
  return (__atomic_load_n(DsoNode::lib().djava_sos_word(c), __ATOMIC_ACQUIRE) &
          DJAVA_SOS_WORD_STATE_MASK) == DJAVA_SOS_WORD_STATE_M;
}

bool DsoReplicaTable::holds_modified(DsoReplica* e, djava_sos_chunk* except) {
  if (e->_chunk != except && e->_chunk != NULL && is_modified(e->_chunk)) {
    return true;
  }
  // Under _pin_lock: the hint is this search's alone.
  DsoBlocks* b = e->_blocks;
  for (uint32_t i = 0; i < b->_count; i++) {
    uint32_t k = b->_modified_hint + i < b->_count ? b->_modified_hint + i
                                                   : b->_modified_hint + i - b->_count;
    djava_sos_chunk* c = Atomic::load_acquire(&b->_chunks[k]);
    if (c != NULL && c != except && is_modified(c)) {
      b->_modified_hint = k;
      return true;
    }
  }
  return false;
}

void DsoReplicaTable::unpin_after_flush(DsoReplica* e, djava_sos_chunk* flushed) {
  if (e->_blocks == NULL) {
    unpin(e);
    return;
  }
  MutexLocker ml(_pin_lock, Mutex::_no_safepoint_check_flag);
  if (!holds_modified(e, flushed)) {
    unpin(e);
  }
}

void DsoReplicaTable::pin_blocked(DsoReplica* e, oop obj) {
  MutexLocker ml(_pin_lock, Mutex::_no_safepoint_check_flag);
  pin(e, obj);
}

oop DsoReplicaTable::replica(uint index) {
  return entry(index)->_replica.resolve();
}

oop DsoReplicaTable::replica_if_live(uint index) {
  MutexLocker ml(_lock, Mutex::_no_safepoint_check_flag);
  if (index == 0 || index >= _high_water || _entries[index]._replica.is_empty()) {
    return NULL;
  }
  return _entries[index]._replica.resolve();
}

uint DsoReplicaTable::index_of(uint64_t global_id) {
  MutexLocker ml(_lock, Mutex::_no_safepoint_check_flag);
  if (_id_to_index == NULL) {
    return 0;
  }
  uint* index = _id_to_index->get(global_id);
  if (index == NULL || _entries[*index]._replica.peek() == NULL) {
    return 0;  // a collected replica: its entry is reclaimed before another is made
  }
  return *index;
}

void DsoReplicaTable::forget(uint index) {
  assert_lock_strong(_lock);
  DsoReplica* e = &_entries[index];
  // A late install or flush of the chunk must not find a freed (or
  // reused) index; the next replica of the id sets its own. Unnamed, the
  // cache may release the chunk once nothing else holds it (the server
  // frees it once no node does): never waits.
  if (e->_chunk != NULL) {
    DsoNode::lib().djava_sos_set_user(e->_chunk, 0);
    DsoNode::lib().djava_sos_unreferenced(e->_chunk);
  }
  if (e->_blocks != NULL) {
    for (uint32_t k = 0; k < e->_blocks->_count; k++) {
      djava_sos_chunk* c = e->_blocks->_chunks[k];
      if (c != NULL) {
        DsoNode::lib().djava_sos_set_user(c, 0);
        DsoNode::lib().djava_sos_unreferenced(c);
      }
    }
  }
  e->_pin.release(Universe::vm_global());
  e->_replica.release(_storage);
  _id_to_index->remove(e->_global_id);
  _live--;
  free_index(index);
}

static void append_blocks(DsoReplica* e, GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* out) {
  if (e->_blocks != NULL) {
    for (uint32_t k = 0; k < e->_blocks->_count; k++) {
      djava_sos_chunk* c = Atomic::load_acquire(&e->_blocks->_chunks[k]);
      if (c != NULL) {
        out->append(c);
      }
    }
  }
}

static bool has_pins(djava_sos_chunk* c) {
  return c != NULL &&
         (__atomic_load_n(DsoNode::lib().djava_sos_word(c), __ATOMIC_ACQUIRE) >>
          DJAVA_SOS_WORD_PIN_SHIFT) != 0;
}

// An access in progress to any of the entry's chunks.
static bool in_use(DsoReplica* e) {
  if (has_pins(e->_chunk)) {
    return true;
  }
  if (e->_blocks != NULL) {
    for (uint32_t k = 0; k < e->_blocks->_count; k++) {
      if (has_pins(Atomic::load_acquire(&e->_blocks->_chunks[k]))) {
        return true;
      }
    }
  }
  return false;
}

void DsoReplicaTable::chunks_of(uint64_t program,
                                GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* out) {
  MutexLocker ml(_lock, Mutex::_no_safepoint_check_flag);
  for (uint index = 1; index < _high_water; index++) {
    DsoReplica* e = &_entries[index];
    if (!e->_replica.is_empty() && e->_program == program && e->_chunk != NULL) {
      out->append(e->_chunk);
      append_blocks(e, out);
    }
  }
}

size_t DsoReplicaTable::drop_program(uint64_t program,
                                     GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* kept,
                                     GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* released,
                                     size_t* kept_of_program) {
  MutexLocker ml(_lock, Mutex::_no_safepoint_check_flag);
  DsoStatistics::forget_program(program, released);
  size_t dropped = 0;
  size_t kept_here = 0;  // of the program's entries
  for (uint index = 1; index < _high_water; index++) {
    DsoReplica* e = &_entries[index];
    if (e->_replica.is_empty() || e->_program != program) {
      continue;
    }
    // An access in progress (a thread not of the program may hold one: a
    // JDK thread running its code) still uses the entry.
    if (in_use(e)) {
      kept_here++;
      continue;
    }
    oop obj = e->_replica.peek();
    if (obj != NULL) {
      markWord mark = obj->mark();
      if (!DsoMark::is_shared(mark) || DsoMark::index(mark) != index ||
          obj->cas_set_mark(DsoMark::untagged(mark), mark) != mark) {
        kept_here++;
        continue;
      }
      DsoReferences::unmark_shared(obj);  // a local reference again: the GC's to clear
    }
    forget(index);
    dropped++;
  }
  // Every handle still referenced here stays in the cache, whatever program
  // its entry or retired part is of: a reference decoded in another
  // program's object gives that program's entry a chunk of this one.
  kept->clear();
  for (uint index = 1; index < _high_water; index++) {
    DsoReplica* e = &_entries[index];
    if (!e->_replica.is_empty() && e->_chunk != NULL) {
      kept->append(e->_chunk);
      append_blocks(e, kept);
    }
  }
  DsoStatistics::retained_chunks(kept);
  *kept_of_program = kept_here;
  return dropped;
}

size_t DsoReplicaTable::reclaim_dead() {
  MutexLocker ml(_lock, Mutex::_no_safepoint_check_flag);
  return reclaim_dead_locked();
}

size_t DsoReplicaTable::reclaim_dead_locked() {
  assert_lock_strong(_lock);
  Atomic::store(&_has_dead, false);
  size_t reclaimed = 0;
  for (uint index = 1; index < _high_water; index++) {
    DsoReplica* e = &_entries[index];
    if (!e->_replica.is_empty() && e->_replica.peek() == NULL) {
      DsoStatistics::retire(e);
      forget(index);
      reclaimed++;
    }
  }
  log_debug(dso)("reclaimed %zu entries of collected replicas, %zu live", reclaimed, _live);
  return reclaimed;
}

// Called by GC with the number of handles it cleared in our storage.
void DsoReplicaTable::gc_notification(size_t num_dead) {
  if (num_dead > 0) {
    Atomic::store(&_has_dead, true);
  }
}
