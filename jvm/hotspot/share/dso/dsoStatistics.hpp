/*
 * djava: -XX:+PrintDistributedStatistics, per class.
 *
 * Performance in a distributed heap is never transparent: a program is slow
 * because some of its classes go remote. This table says which: for every
 * class with replicas on this node, how many objects, how many this node
 * published, the cache misses, invalidations and flushes of their chunks,
 * the bytes they moved and the monitor enters that went through the monitor
 * service (with the time they took). The cache's counters are per chunk
 * (djava_sos_chunk_stats); the monitor counters live in the replica table's
 * entries; nothing is hashed on an access path. A replica GC collected
 * (dsoReplicaTable.hpp) still counts: its entry's part is kept when the
 * entry is reclaimed, and settled soon after into its class's totals (its
 * chunk's counters taken from the cache), so that the cache may release
 * the chunk (docs/SOS.md, "Freeing chunks while a program runs"). An object
 * collected here and met again counts once for each replica it had.
 */

#ifndef SHARE_DSO_DSOSTATISTICS_HPP
#define SHARE_DSO_DSOSTATISTICS_HPP

#include "memory/allStatic.hpp"
#include "utilities/globalDefinitions.hpp"
#include "utilities/growableArray.hpp"

class JavaThread;
class outputStream;
struct DsoReplica;
struct djava_sos_chunk;

class DsoStatistics : AllStatic {
 public:
  // The node's totals and the classes of `program` (0: every program),
  // most bytes moved first. In VM state.
  static void print(JavaThread* current, outputStream* st, uint64_t program, const char* title);

  // Keeps the part of an entry whose replica GC collected, before the entry
  // is freed; its chunks are retained in the cache until settled. Under the
  // replica table's lock.
  static void retire(const DsoReplica* e);
  // Reclaims the entries of collected replicas and folds the retired parts
  // into their classes' totals, letting the cache release their chunks.
  // In VM state; may safepoint.
  static void settle(JavaThread* current);
  static bool has_retired();
  // The program ended here: its retired parts and totals go, the retired
  // parts' chunks appended to released (the cache may forget them). Under
  // the table's lock.
  static void forget_program(uint64_t program,
                             GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* released);
  // A thread of program started on this node (a thread server runs it, or
  // a launcher kept it here); counted until the program is forgotten.
  static void thread_started(uint64_t program);
  // Appends the chunks the retired parts still name. Under the table's lock.
  static void retained_chunks(GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* out);

 private:
  // settle's work, with the settle lock held (dsoStatistics.cpp).
  static void settle_locked(JavaThread* current);
};

#endif // SHARE_DSO_DSOSTATISTICS_HPP
