/*
 * djava: the node's table of replicas of shared objects.
 *
 * Index -> entry is an array read (the interpreter's path for a cached shared
 * object, through the index in the replica's mark, dsoMark.hpp); global id ->
 * index is a hash lookup, used only when a reference arrives from elsewhere.
 * Replicas are held by weak handles in an OopStorage of their own: GC moves
 * them, and an unreferenced replica may be collected and materialized again
 * later from the shared-object system. Entries of collected replicas are
 * reclaimed after GC reports dead handles.
 */

#ifndef SHARE_DSO_DSOREPLICATABLE_HPP
#define SHARE_DSO_DSOREPLICATABLE_HPP

#include "memory/allStatic.hpp"
#include "oops/oopHandle.hpp"
#include "oops/oopsHierarchy.hpp"
#include "oops/weakHandle.hpp"
#include "utilities/globalDefinitions.hpp"
#include "utilities/growableArray.hpp"

class Handle;
class Mutex;
class Symbol;
class OopStorage;
class Thread;

struct djava_sos_chunk;

// A large array kept coherent in blocks (docs/HEAP.md, "Arrays in blocks"):
// block k holds elements [k << elems_shift, (k + 1) << elems_shift), and is
// the chunk base id + 1 + k; the array's own chunk (the base id) carries
// only this layout. Each block has its own state on every node, so threads
// on different nodes write disjoint blocks without conflict, and a node
// fetches only the blocks it touches. A block's handle is looked up when
// this node first uses the block (DsoHeap::block_chunk).
struct DsoBlocks {
  uint64_t _base_id;
  uint32_t _count;
  int      _elems_shift;
  djava_sos_chunk* volatile* _chunks;  // _count of them, NULL until looked up
  // For the engines' inline test (cpu/x86/dso, DsoInterpreter): block k's
  // state word once its chunk is looked up, else NULL; the byte offset of
  // element 0; log2 of a block's bytes, as this node lays the array out.
  volatile uint64_t* volatile* _words;
  int      _base;
  int      _byte_shift;
  // Where the last search for a block in M found one (holds_modified):
  // flushes mostly come in the order the blocks were written, so the next
  // search starting there is short.
  uint32_t _modified_hint;
  // A replica of an array published on another node: the pages of the
  // blocks this node has not looked up hold nothing it will read (a
  // block's bytes come with its first grant), so they go back to the OS,
  // and the array costs this node memory for the blocks it uses
  // (release_untouched). The publisher's blocks all hold its bytes.
  bool     _releasable;
  // Where the array was when that was last done: a GC that moves the
  // array writes every page of its new place.
  HeapWord* _released_at;

  static DsoBlocks* create(uint64_t base_id, oop array, int elems_shift);
  static void destroy(DsoBlocks* b);
  // Block k's chunk is looked up: the inline test may use its word.
  void set_chunk(uint32_t k, djava_sos_chunk* chunk);
  // Makes this the layout of a replica made here (see _releasable) and
  // gives back the pages of its untouched blocks.
  size_t make_releasable(oop array);
  // Gives back the pages that lie wholly inside blocks this node has not
  // looked up, unless the array has not moved since the last time. In VM
  // state or at a safepoint, so the array stays where it is. Excludes
  // set_chunk: a block's bytes arrive only after its chunk is set, so a
  // page found with no chunk over it holds nothing yet. Returns the bytes.
  size_t release_untouched(oop array);
  // Replicas whose layout is releasable, live or not yet destroyed.
  static int releasable_count() { return Atomic::load(&_releasable_count); }
  static uint32_t count_for(int length, int elems_shift) {
    return (uint32_t)(((uint64_t)length + (UCONST64(1) << elems_shift) - 1) >> elems_shift);
  }
  // The elements' block size this node gives an array it publishes: log2
  // of elements per block, or 0 to keep it whole (DjavaArrayBlockBytes).
  static int elems_shift_for(oop array);
  // Elements [*from, *to) of block k of an array of length elements.
  void elements_of(uint32_t k, int length, int* from, int* to) const {
    *from = (int)((uint64_t)k << _elems_shift);
    *to = (int)MIN2((uint64_t)length, ((uint64_t)k + 1) << _elems_shift);
  }

 private:
  static volatile int _releasable_count;
};

struct DsoReplica {
  WeakHandle       _replica;    // empty when the entry is free
  OopHandle        _pin;        // holds the replica strongly while set (pin())
  volatile int     _pinned;     // _pin is set, or being set
  volatile uint    _pinned_epoch; // the pin epoch it was pinned in (write_back_candidates)
  uint64_t         _global_id;
  uint64_t         _program;    // the program the object belongs to (0: none)
  Symbol*          _class_name; // its class's (counted), for statistics after GC took it
  djava_sos_chunk* _chunk;      // the cache's handle of the chunk (dsoHeap.cpp)
  volatile uint64_t* _word;     // its state word, tested inline (dsoInterpreter.hpp);
                                // NULL for an array in blocks: its accesses take
                                // the slow path, which finds the block's chunk
  DsoBlocks*       _blocks;     // an array kept in blocks; NULL for a whole object
  uintptr_t        _user;       // the user value of its chunks (index_of_chunk)
  uint             _next_free;  // free-list link, when free
  // For -XX:+PrintDistributedStatistics (dsoStatistics.hpp).
  bool             _published_here;   // this node made the object shared
  // The replica has held its object's bytes: made shared here, or a grant
  // installed them (a replica made from a reference that arrived holds
  // zeros until then). Its final fields that never change are read from
  // it whatever its state (DsoInterpreter::reads_kept_final).
  volatile bool    _held_bytes;
  // The last reference array whose bytes arrived here naming it in an
  // element (a row of a double[][]): that array's entry and the element's
  // index (0 and 0: none). A walk over the array's elements fetches the
  // objects of the elements ahead (DsoHeap, fetch_named_after).
  volatile uint    _named_by;
  volatile uint    _named_at;
  // A class's statics (a mirror): what this node knows of the class's
  // initialization cluster-wide, a DsoStatics::WireState. Until it is
  // known, writes to the mirror (java.lang.Class's own fields) publish no
  // statics: the chunk stays empty.
  volatile u1      _statics_state;
  // The fence its first flush waits for (dsoFence.hpp); 0 once passed, and
  // for objects made shared elsewhere.
  volatile uint64_t _fence_stamp;
  volatile uint64_t _lock_enters;     // monitor enters through the service
  volatile uint64_t _lock_wait_ns;    // time those enters took
  // A flush of the object waiting for an object it references to be
  // unlocked (dsoHeap.cpp): since when, and when that was last reported.
  jlong            _flush_deferred_ns;
  jlong            _flush_warned_ns;
};

class DsoReplicaTable : AllStatic {
 public:
  static void initialize();

  // Makes obj the replica of shared object global_id: installs its identity
  // hash (an existing one is kept) and tags its mark with a new index, which
  // it returns. obj must be unshared, and unlocked or locked by the calling
  // thread. Returns 0, with nothing changed, if another thread holds obj
  // locked or the table is full. chunk, the cache's handle of global_id, is
  // in the entry before the tag is in the header: other threads of this
  // node use the object meanwhile and go to its entry once they see the tag.
  // The chunk's user value (the index) is set before the tag too: another
  // thread may put the id in bytes that leave this node the moment it sees
  // the tag, and a flush asked for then must find the replica.
  // new_chunk: the object's first copy, a chunk made in M for it here. Its
  // entry is pinned and awaits its publication fence (fence_unstamped, for
  // the caller to replace with DsoFence::stamp() once the tag is in) before
  // the tag, so no flush can take the bytes meanwhile.
  // blocks: the array's layout in blocks (the entry owns it from here; the
  // caller destroys it when this returns 0), or NULL.
  static uint publish(Thread* current, oop obj, uint64_t global_id, djava_sos_chunk* chunk,
                      uint64_t program, bool new_chunk = false, DsoBlocks* blocks = NULL);
  // An entry's _fence_stamp between its tag and its stamp (see publish).
  static const uint64_t fence_unstamped = ~UCONST64(0);

  // The identity hash obj will keep when published (it gets one if it has
  // none), or 0 if another thread holds it locked. Before publish().
  static uint identity_hash_for_publication(Thread* current, oop obj);

  // The same for a replica being materialized from elsewhere: fresh, never
  // hashed; identity_hash is the object's cluster-wide identity hash. If
  // global_id has a replica already (another thread materialized it first),
  // returns that one's index and leaves obj alone.
  // chunk, the cache's handle of global_id, is in the entry before any
  // other thread can find it.
  static uint materialize(Thread* current, oop obj, uint64_t global_id, uint identity_hash,
                          djava_sos_chunk* chunk, uint64_t program, DsoBlocks* blocks = NULL);

  // Gives an entry its chunk (or none), and the chunk's state word.
  static void set_chunk(DsoReplica* e, djava_sos_chunk* chunk);

  // The entry a chunk's user value names (0: none), set when the entry is
  // made and cleared when it is freed. The value's high half numbers the
  // entries made, so it never comes back: a thread that read it can tell
  // whether a replica was made since (djava_sos_drop_copy).
  static uint index_of_chunk(const djava_sos_chunk* chunk);

  // A replica is held strongly while this node has the only current copy
  // of its bytes (its chunk in M: since its publication here, or a write
  // access's grant, until a flush sends them away) and while it has no
  // chunk (a foreign object's stand-in). Otherwise only what references it
  // here keeps it: once nothing does, GC collects it, its entry is
  // reclaimed, its read copy dropped, and a reference that arrives later
  // makes a new replica, fetched afresh. pin() may race with itself (two
  // writers granted at once), not with unpin(), which runs in a flush,
  // when no access is in progress.
  static void pin(DsoReplica* e, oop obj);
  static void unpin(DsoReplica* e);
  // unpin for a flush of `flushed`, one of the entry's chunks: an array in
  // blocks stays held while any other of its chunks is in M here. A writer
  // pins after its grant (pin_blocked), both under one lock, so a flush
  // either sees that block in M or unpins before the writer pins again.
  static void unpin_after_flush(DsoReplica* e, djava_sos_chunk* flushed);
  static void pin_blocked(DsoReplica* e, oop obj);
  // Whether this node holds the chunk in M. An access granted M must pin
  // its replica whether it reads or writes: the directory answers a read
  // of a migratory chunk with the only copy (docs/SOS.md).
  static bool is_modified(djava_sos_chunk* c);
  // The chunks of whole objects modified here (pinned) since before the
  // current pin epoch, which this ends: the reclaim thread writes them home
  // (djava_sos_write_back), so that their objects are held only by what
  // references them. A published object nothing here references any more,
  // and no other node asked for, stayed pinned for good otherwise.
  static void write_back_candidates(GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* out);

  // The table, for generated code that finds an entry by the mark's index
  // (cpu/x86/dso); _entries is reserved once and never moves.
  static DsoReplica* const* entries_addr() { return &_entries; }

  static DsoReplica* entry(uint index) {
    assert(index > 0 && index < _high_water, "index %u out of range", index);
    return &_entries[index];
  }

  // The replica at index; NULL if GC collected it.
  static oop replica(uint index);
  // The same for an index kept as a hint (DsoReplica::_named_by), whose
  // entry may have been freed since, or be freed by another thread now:
  // NULL then. Valid until the caller's next safepoint.
  static oop replica_if_live(uint index);

  // The index of global_id's replica, or 0 if this node has none (or GC
  // collected it). The replica stays until the caller's next safepoint.
  static uint index_of(uint64_t global_id);

  // Indices handed out so far, free or not: the table's size.
  static uint high_water() { return _high_water; }

  // Frees the entries whose replicas GC collected; returns how many.
  static size_t reclaim_dead();
  // After a GC: gives back the pages of the blocks no replica here has
  // used, for the replicas the GC moved (DsoBlocks::release_untouched).
  // Returns the bytes.
  static size_t release_untouched_blocks();
  // GC reported collected replicas whose entries are not reclaimed yet.
  static bool has_dead() { return _has_dead; }

  static size_t live_count() { return _live; }

  // The chunks of the program's replicas, for the cache to forget before
  // drop_program (not under the table's lock: a flush holds a chunk's mutex
  // and may publish).
  static void chunks_of(uint64_t program, GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* out);
  // The program is over here: its replicas become ordinary local objects
  // again (untagged, their identity hashes kept), no longer held, and their
  // entries are freed, so that GC collects them and their class loader
  // unloads. None of the program's threads may be running. Returns how
  // many; *kept_of_program counts those left as they are (an access in
  // progress, or a header displaced by a lock, which a replica should never
  // have). kept gets every chunk an entry or a statistics part still names,
  // of any program (the cache must keep those handles), released the chunks
  // of the program's replicas collected earlier (their statistics' parts).
  static size_t drop_program(uint64_t program, GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* kept,
                             GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* released,
                             size_t* kept_of_program);

 private:
  static uint install(Thread* current, Handle h, uint64_t global_id, uint hash, bool set_hash,
                      djava_sos_chunk* chunk, uint64_t program, bool new_chunk, DsoBlocks* blocks);
  static uint install_stack_locked(Thread* current, Handle h, uint64_t global_id,
                                   djava_sos_chunk* chunk, uint64_t program, bool new_chunk,
                                   DsoBlocks* blocks);
  static void record(uint index, Handle h, uint64_t global_id, djava_sos_chunk* chunk,
                     uint64_t program, bool new_chunk, DsoBlocks* blocks);
  // Whether a chunk of the entry other than `except` is in M (blocks only).
  static bool holds_modified(DsoReplica* e, djava_sos_chunk* except);
  // Frees an entry with its handles and id: undoes record() for an object
  // that could not take the tag, or lets go of a collected or dropped one.
  static void forget(uint index);
  static size_t reclaim_dead_locked();
  static uint allocate_index();
  static void free_index(uint index);
  static void gc_notification(size_t num_dead);

  static DsoReplica*  _entries;      // reserved for all indices, committed as used
  static uint         _high_water;   // indices [1, _high_water) have been used
  static uint         _committed;    // indices [0, _committed) are committed
  static uint         _free_head;
  static uint64_t     _made;         // entries made so far (the chunks' user values)
  static size_t       _live;
  static volatile bool _has_dead;
  static OopStorage*  _storage;
  static Mutex*       _lock;
  static Mutex*       _pin_lock;     // pins of arrays in blocks
  static volatile uint _pin_epoch;

  friend class DsoStatistics;  // reads every entry under _lock
};

#endif // SHARE_DSO_DSOREPLICATABLE_HPP
