/*
 * djava: what Zero's bytecode interpreter does with shared objects.
 *
 * bytecodeInterpreter.cpp (patches/0004) puts DSO_CHECK_ACCESS before every
 * field and array access; monitors of replicas go to the runtime
 * (patches/0009, dsoMonitors.hpp). For a local object the check is one load
 * of the mark word and a sign test. For a replica whose copy this node holds
 * it adds an indexed read of the replica table and a test of the chunk's
 * state word, all inline; only a miss, an upgrade or a revocation in
 * progress calls into the VM.
 *
 * A write must not be torn or lost by a flush that reads the copy while the
 * store is under way. The writer announces it in its JavaThread (the word
 * it stores under), then tests the word; the revoker sets BLOCKED, makes
 * every thread's pending announcement visible with one membarrier() (an
 * asymmetric fence: the writers pay no locked instruction) and waits until
 * no thread announces that word (quiesce_writers, called by sos-client).
 * Where membarrier is missing the writer pins the copy with a
 * compare-and-swap instead and unpins it after the store.
 *
 * The slow path gains the access through the node's shared-object cache
 * (dsoHeap.hpp): a read needs S or M, a write M. A write's access lasts until
 * its store is done (DSO_END_WRITE after the store), so that a flush or an
 * invalidate never tears or loses it. A replica without a chunk (a VM that
 * is not a cluster node) is refused with an InternalError naming it: its
 * bytes are never presented as current without coherence.
 *
 * GC may run during the slow path (a miss waits for the network): the
 * macros take the object back from vm_result, as it may have moved.
 */

#ifndef SHARE_DSO_DSOINTERPRETER_HPP
#define SHARE_DSO_DSOINTERPRETER_HPP

#include "dso/abi/sos_client.h"
#include "dso/dsoMark.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoThreads.hpp"
#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "runtime/atomic.hpp"
#include "runtime/handles.hpp"
#include "runtime/thread.hpp"

class DsoInterpreter : AllStatic {
 public:
  // Gains the access the bytecode needs (read: S or M; write: M), or throws.
  // Leaves the (possibly moved) object in vm_result.
  static void access_shared(JavaThread* current, oopDesc* obj, jboolean is_write);
  // The same for element `index` of an array (an array kept in blocks
  // needs that element's block).
  static void access_shared_element(JavaThread* current, arrayOopDesc* array, jint index,
                                    jboolean is_write);

  // The cached case, inline and without leaving Java state: true with the
  // access begun (a read's already ended) when this node holds the copy it
  // needs. It tests the chunk's state word itself (sos_client.h spells out
  // the protocol): a read is one acquire load and a test, a write one
  // compare-and-swap that pins the copy until its store is done. The
  // compiler's atomics, not HotSpot's Atomic: the protocol's orderings are
  // those of sos-client's std::atomic, and Zero's Atomic ignores the
  // ordering asked for and fences twice around every operation.
  static bool try_access(JavaThread* thread, oopDesc* obj, jboolean is_write) {
    DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(obj->mark()));
    // An array in blocks has no word of its own: the slow path (or
    // try_access_element) finds its element's block.
    return try_word(thread, e->_word, &e->_chunk, is_write);
  }

  // The same for element `index` of an array: of an array in blocks, the
  // element's block, if this node has looked its chunk up.
  static bool try_access_element(JavaThread* thread, arrayOopDesc* array, jint index,
                                 jboolean is_write) {
    DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(array->mark()));
    DsoBlocks* b = e->_blocks;
    if (b == NULL) {
      return try_word(thread, e->_word, &e->_chunk, is_write);
    }
    uint32_t k = (uint32_t)index >> b->_elems_shift;
    return try_word(thread, __atomic_load_n(&b->_words[k], __ATOMIC_ACQUIRE), &b->_chunks[k],
                    is_write);
  }

  // try_access's test of a chunk's state word; *chunk is the chunk, read
  // only when a write pins it.
  template <typename ChunkSlot>
  static bool try_word(JavaThread* thread, volatile uint64_t* word, ChunkSlot* chunk,
                       jboolean is_write) {
    if (word == NULL) {
      return false;  // no cache here (the slow path refuses), or a block not looked up
    }
    if (!is_write) {
      uint64_t w = __atomic_load_n(word, __ATOMIC_ACQUIRE);
      return (w & DJAVA_SOS_WORD_STATE_MASK) != DJAVA_SOS_WORD_STATE_I &&
             (w & DJAVA_SOS_WORD_BLOCKED) == 0;
    }
    if (_announced_writes) {
      volatile uint64_t* volatile* slot = thread->dso_inline_write_addr();
      *slot = word;
      // Orders the compiler only: the revoker's membarrier orders the CPUs.
      __atomic_signal_fence(__ATOMIC_SEQ_CST);
      uint64_t w = __atomic_load_n(word, __ATOMIC_ACQUIRE);
      if ((w & (DJAVA_SOS_WORD_STATE_MASK | DJAVA_SOS_WORD_BLOCKED)) == DJAVA_SOS_WORD_STATE_M) {
        return true;
      }
      *slot = NULL;
      return false;
    }
    uint64_t w = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    if ((w & (DJAVA_SOS_WORD_STATE_MASK | DJAVA_SOS_WORD_BLOCKED)) == DJAVA_SOS_WORD_STATE_M &&
        __atomic_compare_exchange_n(word, &w, w + pin, /* weak */ true, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      note_pinned(thread, *chunk);
      return true;
    }
    return false;
  }

  // Ends a write's access, after its store: the announcement, or the pin
  // (of the inline CAS, or of the slow path's access), whichever the
  // thread's slot records. An empty slot: the object was local when the
  // write began and another thread published it before the store ended;
  // the write began no access, so there is none to end (unpinning there
  // would wrap the pin count and block every later revocation).
  static void end_write(JavaThread* thread) {
    volatile uint64_t* volatile* slot = thread->dso_inline_write_addr();
    uintptr_t began = (uintptr_t)*slot;
    if ((began & pinned_mark) == 0) {
      if (began != 0) {
        __atomic_store_n(slot, (volatile uint64_t*)NULL, __ATOMIC_RELEASE);
      }
      return;
    }
    end_pinned_write(thread);
  }

  // A write pinned a chunk's copy (the inline CAS, or the slow path's
  // access: the replica's own chunk, or an array block's): its end must
  // unpin it. The slot then holds the chunk's handle with the low bit set,
  // never a state word, so quiesce_writers does not wait for it (it waits
  // for pins).
  static void note_pinned(JavaThread* thread, djava_sos_chunk* chunk) {
    *thread->dso_inline_write_addr() = (volatile uint64_t*)((uintptr_t)chunk | pinned_mark);
  }

  // end_write of a pinned write. A leaf: the template interpreter calls it
  // with the thread in Java state.
  static void end_pinned_write(JavaThread* thread) {
    volatile uint64_t* volatile* slot = thread->dso_inline_write_addr();
    djava_sos_chunk* chunk = (djava_sos_chunk*)((uintptr_t)*slot & ~pinned_mark);
    *slot = NULL;
    release(chunk);
    if (_second_pinned != NULL) {
      djava_sos_chunk* second = _second_pinned;
      _second_pinned = NULL;
      release(second);
    }
  }

  // Final fields kept (docs/HEAP.md, "Final fields read from the
  // replica"): a final instance field that never changes once its
  // constructor returned is read from the replica whatever its state, if
  // the replica ever held the object's bytes. Those of java.util.concurrent's
  // classes only: their constructors set their final fields before the
  // object can be seen elsewhere, and java.base's module keeps reflection
  // from setting them afterwards. (ArrayBlockingQueue.put reads `this.lock`
  // before it takes the lock, while the queue's object is with the last
  // holder's node: a round trip that the lock's grant would otherwise bring
  // along.) holder_name: the field's declaring class, binary name with '/'.
  static bool keeps_finals_of(const char* holder_name);
  static bool keeps_finals_of(Symbol* holder_name);
  // The replica `obj` held its object's bytes once (DsoReplica::_held_bytes).
  static bool held_bytes(oop obj) {
    DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(obj->mark()));
    return e->_blocks == NULL && Atomic::load_acquire(&e->_held_bytes);
  }
  // The read of obj's instance field at `offset` needs no coherence: a kept
  // final field of a replica that held its bytes.
  static bool reads_kept_final(oop obj, int offset);

  // The template interpreter's slow path (cpu/x86/dso): a bytecode's access
  // of `obj`, a replica, at `field` (an address in it) that the inline
  // cached case did not grant. Gains the access as access_shared does
  // (a write's lasts until end_write), refreshes Thread.threadStatus as
  // DSO_CHECK_FIELD_READ does, and leaves obj and val (the reference a
  // write stores, or NULL), possibly moved, in vm_result and JavaThread::_dso_vm_result_2.
  static void bytecode_read(JavaThread* current, oopDesc* obj, address field, oopDesc* val);
  static void bytecode_write(JavaThread* current, oopDesc* obj, address field, oopDesc* val);
  // C1's and C2's slow path (dso/c1, through Runtime1's dso_access blob;
  // dso/c2, through OptoRuntime's dso_access stub): as bytecode_read/
  // bytecode_write, for an access of `kind` (DsoCompiledAccess::Kind). The
  // compiled frame's registers or spill slots, which hold the object, come
  // back through the blob's or the call's oop map.
  // offset: the byte offset of an array element or Unsafe access in obj,
  // -1 for a field (an array kept in blocks needs the element's block).
  static void compiled_access(JavaThread* current, oopDesc* obj, jint kind, jlong offset);
  // DSO_CHECK_FIELD_READ's refresh of a remote thread's state, from Java state.
  static void refresh_thread_state(JavaThread* current, oopDesc* obj);

  // Whether writes announce themselves (initialize() decided).
  static bool announced_writes() { return _announced_writes; }
  // The low bit of a thread's write slot: its write pinned a copy
  // (note_pinned; chunk handles are word-aligned), else it announced.
  static const uintptr_t pinned_mark = 1;

  // Before the interpreter is generated (the template interpreter's inline
  // writes depend on it) and at node start: writers announce themselves if
  // this kernel has membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), else they
  // pin. Idempotent.
  static void initialize();
  // sos-client's quiesce_writers callback (sos_client.h).
  static void quiesce_writers(void* context, volatile uint64_t* word);

 private:
  static const uint64_t pin = UCONST64(1) << DJAVA_SOS_WORD_PIN_SHIFT;
  // Gains a bytecode's access to the bytes [from, to) of replica h
  // (access_shared, in VM state; from -1: a field, not an array's
  // element). An unaligned Unsafe access may straddle two blocks of an
  // array: a write then pins both until its end (_second_pinned).
  static void gain_access(JavaThread* current, Handle h, jlong from, jlong to, bool is_write,
                          TRAPS);
  // Ends a pinned write's access (djava_sos_release).
  static void release(djava_sos_chunk* chunk);

  static bool _announced_writes;
  // The second block a write straddling two holds until its end.
  static THREAD_LOCAL djava_sos_chunk* _second_pinned;
};

// Used inside BytecodeInterpreter::run, where CALL_VM, THREAD and
// handle_exception are defined.
// A class's mirror is the replica of its statics only: java.lang.Class's own
// fields (its loader, name, reflection caches) are each node's, read and
// written by getfield and putfield without coherence; getstatic and
// putstatic go through it. (In the interpreter's loop, where `opcode` is
// the bytecode at hand; an array is never a mirror.)
#define DSO_COHERENT(obj)                                                       \
  ((Bytecodes::Code)opcode == Bytecodes::_getstatic ||                          \
   (Bytecodes::Code)opcode == Bytecodes::_putstatic ||                          \
   (obj)->klass() != vmClasses::Class_klass())

#define DSO_CHECK_ACCESS(obj, is_write)                                         \
  if (DsoMark::is_shared_relaxed(obj) && DSO_COHERENT(obj) &&                   \
      !DsoInterpreter::try_access(THREAD, (obj), (is_write))) {                 \
    CALL_VM(DsoInterpreter::access_shared(THREAD, (obj), (is_write)),           \
            handle_exception);                                                  \
    obj = (decltype(obj))THREAD->vm_result();                                   \
    THREAD->set_vm_result(NULL);                                                \
  }

// A field read (getfield, getstatic) with its resolved cache entry: as
// DSO_CHECK_ACCESS, and Thread.threadStatus of a thread another node runs
// is asked of that node (DsoThreads::refresh_remote_state; Thread.getState).
// A kept final field (DsoInterpreter::keeps_finals_of) of a replica that
// held its bytes is read from it as it is.
#define DSO_CHECK_FIELD_READ(obj, cache)                                        \
  if (DsoMark::is_shared_relaxed(obj) && DSO_COHERENT(obj) &&                   \
      !DsoInterpreter::try_access(THREAD, (obj), false) &&                      \
      !((cache)->is_final() && (Bytecodes::Code)opcode == Bytecodes::_getfield && \
        DsoInterpreter::keeps_finals_of((cache)->f1_as_klass()->name()) &&      \
        DsoInterpreter::held_bytes(obj))) {                                     \
    CALL_VM(DsoInterpreter::access_shared(THREAD, (obj), false),                \
            handle_exception);                                                  \
    obj = (decltype(obj))THREAD->vm_result();                                   \
    THREAD->set_vm_result(NULL);                                                \
  }                                                                             \
  if (DsoMark::is_shared_relaxed(obj) &&                                        \
      (int)(cache)->f2_as_index() == DsoThreads::thread_status_offset() &&      \
      (Bytecodes::Code)opcode != Bytecodes::_getstatic) {                       \
    CALL_VM(DsoInterpreter::refresh_thread_state(THREAD, (obj)), handle_exception); \
    obj = (decltype(obj))THREAD->vm_result();                                   \
    THREAD->set_vm_result(NULL);                                                \
  }

// An array element's access (Zero's array bytecodes, where `index` is the
// element's).
#define DSO_CHECK_ELEMENT_ACCESS(array, index, is_write)                        \
  if (DsoMark::is_shared_relaxed(array) &&                                      \
      !DsoInterpreter::try_access_element(THREAD, (array), (index), (is_write))) { \
    CALL_VM(DsoInterpreter::access_shared_element(THREAD, (array), (index), (is_write)), \
            handle_exception);                                                  \
    array = (decltype(array))THREAD->vm_result();                               \
    THREAD->set_vm_result(NULL);                                                \
  }

#define DSO_END_WRITE(obj)                                                      \
  if (DsoMark::is_shared_relaxed(obj) && DSO_COHERENT(obj)) {                   \
    DsoInterpreter::end_write(THREAD);                                          \
  }

#endif // SHARE_DSO_DSOINTERPRETER_HPP
