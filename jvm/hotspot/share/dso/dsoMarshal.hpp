/*
 * djava: a shared object's bytes on the wire (a chunk's payload), made from
 * and put into its replica with HotSpot's own field layout.
 *
 *   instance      the field block (from the first field to the end of the
 *                 instance) as laid out, reference slots zero; then one
 *                 reference entry per reference slot, in oop-map order; then
 *                 the blob
 *   object array  one reference entry per element; then the blob
 *   type array    the elements as laid out
 *   class         a program class's statics (dsoStatics.hpp): u64 state, then
 *                 for 1 (initialized) the static block laid out as an
 *                 instance's, references first, then the blob; for 2
 *                 (erroneous) the description of the error <clinit> threw
 *                 (UTF-8). No bytes: not initialized yet
 *
 *   reference entry (24 bytes): u64 a, u32 b, u32 kind << 28 | index,
 *                               u32 length, u32 reserved (zero)
 *     null          kind 0
 *     shared object kind 1: a = id, b = identity hash, index = class name,
 *                           length = the array length for an array, reserved
 *                           = log2 of its elements per block for an array
 *                           kept in blocks (0: whole)
 *     string        kind 2: index = its value (modified UTF-8); b = 1 if interned
 *     class         kind 3: index = class name (internal form, or a primitive's name)
 *     foreign       kind 4: an object that cannot be shared (native state): a =
 *                   its number on its node, reserved = that node, index = class
 *                   name; elsewhere it reads as an object refusing every use
 *     JDK value     kind 5: an enum constant, static-final singleton or cached
 *                   box of the JDK: index = its name (dsoNamedValues.hpp); the
 *                   receiver's own instance
 *     stack trace   kind 6: a throwable's stackTrace never materialized where it
 *                   was made: index = its frames (dsoThrowables.hpp); the
 *                   receiver makes a StackTraceElement[] of them
 *   blob: u32 count, then count times (u32 length, bytes): the names and
 *         string values the entries index
 *
 * An array kept in blocks (dsoReplicaTable.hpp, DsoBlocks): its own chunk
 * holds u64 blocks_magic, u32 log2 of elements per block, u32 the number
 * of blocks; each block's chunk holds its elements encoded as an array of
 * just those elements (type array: as laid out; object array: one entry
 * each, then the blob).
 *
 * Strings and classes travel by value and by name, and so do the JDK's
 * values each node has its own of (their identity is node-local); every other referenced object is shared, so a reference is
 * its id plus what a node needs to make an empty replica of it without
 * asking anyone: its class and identity hash. Both nodes must lay the class
 * out alike (same VM flags); a size that does not match is refused.
 */

#ifndef SHARE_DSO_DSOMARSHAL_HPP
#define SHARE_DSO_DSOMARSHAL_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "runtime/handles.hpp"
#include "utilities/exceptions.hpp"
#include "utilities/globalDefinitions.hpp"
#include "utilities/growableArray.hpp"

class JavaThread;

class DsoMarshal : AllStatic {
 public:
  enum RefKind { ref_null = 0, ref_shared = 1, ref_string = 2, ref_class = 3, ref_foreign = 4,
                 ref_named = 5, ref_stack_trace = 6 };
  static const size_t ref_entry_size = 24;
  static const size_t statics_state_size = 8;

  // Encodes obj into buffer when it fits in capacity; returns the encoded
  // size either way. Every object obj references must be shared or travel
  // by value (the publication invariant, dsoHeap.hpp). No safepoint.
  // Local objects it references become shared as objects of program; if
  // one cannot be shared now (a thread holds it locked), writes nothing,
  // sets *unpublishable to it and returns not_now.
  static const size_t not_now = SIZE_MAX;
  // The shared objects an encoding names, for the distributed garbage
  // collector's edges (djava_sos_produced_refs): their ids, and of those
  // the arrays kept in blocks with their block counts.
  struct Refs {
    GrowableArrayCHeap<uint64_t, mtInternal> ids;
    GrowableArrayCHeap<uint64_t, mtInternal> run_heads;
    GrowableArrayCHeap<uint32_t, mtInternal> run_blocks;
    void clear() { ids.clear(); run_heads.clear(); run_blocks.clear(); }
  };
  // refs, if not NULL, gets what a complete encoding names.
  static size_t encode(oop obj, u1* buffer, size_t capacity, uint64_t program,
                       oop* unpublishable, Refs* refs = NULL);

  // Puts bytes into the replica. Resolves referenced classes in program's
  // class loader (may load them) and makes empty replicas of referenced
  // shared objects, so it may allocate. On malformed or mismatched bytes,
  // throws InternalError naming the object.
  static void decode(JavaThread* current, uint64_t program, Handle replica, const u1* bytes,
                     size_t size, TRAPS);

  // The encoded size of an instance's fixed part (field block and entries),
  // or of an array's, before the blob.
  static size_t fixed_size(oop obj);

  // Elements [from, to) of an array, as encode and decode do a whole one's
  // (a block of an array kept in blocks).
  static size_t fixed_size_of_elements(oop array, int from, int to);
  static size_t encode_elements(oop array, int from, int to, u1* buffer, size_t capacity,
                                uint64_t program, oop* unpublishable, Refs* refs = NULL);
  static void decode_elements(JavaThread* current, uint64_t program, Handle array, int from,
                              int to, const u1* bytes, size_t size, TRAPS);

  // The own chunk of an array kept in blocks.
  static const size_t blocks_header_size = 16;
  static const uint64_t blocks_magic = UCONST64(0x534b434f4c426a64);  // "djBLOCKS"
  static size_t encode_blocks_header(int elems_shift, uint32_t count, u1* buffer, size_t capacity);
  // The log2 of elements per block that bytes (an array's own chunk)
  // describe, or 0 if they are not such a header.
  static int blocks_header_shift(const void* bytes, size_t size);
};

#endif // SHARE_DSO_DSOMARSHAL_HPP
