/*
 * djava: how a replica of a shared object is told apart from a local object.
 *
 * On 64-bit HotSpot the 25 high bits of an unlocked object's mark word are
 * unused (markWord.hpp). A replica carries there a flag, the sign bit, and its
 * index in the node's replica table; its identity-hash field holds the
 * object's cluster-wide identity hash. So:
 *  - "is this object shared?" is one load and a sign test: a local object's
 *    mark never has the sign bit (a displaced mark is a user-space pointer,
 *    below 2^47), and
 *  - a shared object's replica is found by an indexed table read, with no
 *    hashing and no lock.
 * Why the bits survive: young GC copies the mark and changes only the age;
 * full GC preserves every mark that carries a hash, and a replica always
 * carries one; hashing (copy_set_hash) and monitor inflation (the mark moves
 * into the ObjectMonitor and back) keep the whole word. DsoSelfTest checks
 * all of this on the running VM (-XX:+DjavaSelfTest).
 *
 * A shared object's header must not be displaced by HotSpot's own locking
 * while the fast test reads it; is_shared_any() also looks through a
 * displaced mark, for the paths that may meet one.
 */

#ifndef SHARE_DSO_DSOMARK_HPP
#define SHARE_DSO_DSOMARK_HPP

#include "memory/allStatic.hpp"
#include "oops/markWord.hpp"
#include "oops/oop.hpp"
#include "utilities/globalDefinitions.hpp"

class DsoMark : AllStatic {
 public:
  static const int index_shift = markWord::hash_shift + markWord::hash_bits;
  static const int index_bits = BitsPerWord - 1 - index_shift;
  static const uint max_index = (1u << index_bits) - 1;
  static const uintptr_t shared_bit = uintptr_t(1) << (BitsPerWord - 1);
  static const uintptr_t index_mask_in_place = uintptr_t(max_index) << index_shift;

  // The fast test: a shared object's own (undisplaced) mark.
  static bool is_shared(markWord mark) {
    return (intptr_t)mark.value() < 0;
  }

  static bool is_shared(oop obj) {
    return is_shared(obj->mark());
  }

  // The same as one plain load, for the interpreter's per-bytecode test:
  // oopDesc::mark() goes through Atomic::load, and on Zero the compiler then
  // keeps the loaded word in a stack slot and reads it back (two more
  // instructions and a memory round trip on every field write of a local
  // object). A relaxed atomic load is one mov.
  static bool is_shared_relaxed(const oopDesc* obj) {
    return __atomic_load_n(reinterpret_cast<const intptr_t*>(obj->mark_addr()), __ATOMIC_RELAXED) < 0;
  }

  static uint index(markWord mark) {
    return (uint)((mark.value() & index_mask_in_place) >> index_shift);
  }

  static markWord tagged(markWord mark, uint index) {
    assert(mark.is_neutral() && !mark.has_no_hash(), "only an unlocked, hashed mark takes a tag");
    assert(index > 0 && index <= max_index, "index %u out of range", index);
    return markWord((mark.value() & ~index_mask_in_place) | shared_bit |
                    ((uintptr_t)index << index_shift));
  }

  static markWord untagged(markWord mark) {
    return markWord(mark.value() & ~(shared_bit | index_mask_in_place));
  }

  // The mark that carries the tag, looking through a stack lock or an
  // inflated monitor. Only safe where the lock cannot go away meanwhile
  // (the owner thread, or at a safepoint).
  static markWord header_of(oop obj) {
    markWord mark = obj->mark();
    return mark.has_displaced_mark_helper() ? mark.displaced_mark_helper() : mark;
  }

  static bool is_shared_any(oop obj) {
    return is_shared(header_of(obj));
  }
};

STATIC_ASSERT(DsoMark::index_shift == 39);  // unused:25 starts above hash:31 on LP64
STATIC_ASSERT(DsoMark::index_bits == 24);

#endif // SHARE_DSO_DSOMARK_HPP
