/*
 * djava: the reclaim thread (see the header).
 */

#include "precompiled.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReclaim.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoStatistics.hpp"
#include "gc/shared/collectedHeap.hpp"
#include "gc/shared/gcCause.hpp"
#include "logging/log.hpp"
#include "memory/universe.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/os.hpp"
#include "runtime/thread.inline.hpp"

namespace {

// Often enough that a program streaming objects through the cluster
// releases them in step with its GCs; rarely enough to cost nothing idle.
const int period_ms = 100;

// A replica costs this node and the cluster far more outside the Java heap
// than in it (its entry, the cache's handle, the server's directory entry:
// about a kilobyte), and a program that streams small objects through the
// cluster fills no heap: its GCs, which alone let the cluster free them,
// never come. So as DirectByteBuffer's allocations do for its native
// memory, replicas ask for a collection themselves: a young one once as
// many entries were made since the last as it left, and at least this
// many (so a program that keeps many replicas live pays a collection per
// doubling, not per batch), a full one when two young ones in a row leave
// most of them (promoted garbage).
const size_t entries_per_collection = 16384;

size_t live_after_last = 0;
unsigned collections_seen = 0;
int young_without_progress = 0;

// A GC that moved a replica of an array in blocks wrote every page of its
// new place, the untouched blocks' too: they go back again.
void release_untouched_blocks() {
  size_t released = DsoReplicaTable::release_untouched_blocks();
  if (released != 0) {
    log_debug(dso)("after a collection: %zu KiB of untouched blocks not kept", released / K);
  }
}

void collect_for_replicas(JavaThread* self) {
  CollectedHeap* heap = Universe::heap();
  unsigned seen = heap->total_collections();
  if (seen != collections_seen) {
    // The program's own GCs: what they left is the new base.
    release_untouched_blocks();
    DsoStatistics::settle(self);
    collections_seen = heap->total_collections();
    live_after_last = DsoReplicaTable::live_count();
    return;
  }
  size_t live = DsoReplicaTable::live_count();
  size_t made = live > live_after_last ? live - live_after_last : 0;
  if (made < MAX2(entries_per_collection, live_after_last)) {
    return;
  }
  // What was modified here since before the last collection goes home
  // first: a published object nothing here references any more, and no
  // other node asked for, is otherwise held for its bytes for good.
  GrowableArrayCHeap<djava_sos_chunk*, mtInternal> modified;
  DsoReplicaTable::write_back_candidates(&modified);
  if (!modified.is_empty()) {
    DsoHandlesHeld held(self);
    ThreadToNativeFromVM in_native(self);
    for (int i = 0; i < modified.length(); i++) {
      DsoNode::lib().djava_sos_write_back(modified.at(i));  // IN_USE: skipped, until next time
    }
  }
  // A young collection, through the cause the WhiteBox API uses for one:
  // every collector takes it as "young only".
  bool full = young_without_progress >= 2;
  heap->collect(full ? GCCause::_java_lang_system_gc : GCCause::_wb_young_gc);
  release_untouched_blocks();
  DsoStatistics::settle(self);
  size_t left = DsoReplicaTable::live_count();
  // Most of what was made since the last collection is still here.
  young_without_progress = full ? 0 : (left > live - made / 2 ? young_without_progress + 1 : 0);
  log_debug(dso)("%s collection for replicas: %zu entries before, %zu after",
                 full ? "a full" : "a young", live, left);
  collections_seen = heap->total_collections();
  live_after_last = left;
}

}  // namespace

void DsoReclaim::thread_entry(JavaThread* self, JavaThread* THREAD) {
  collections_seen = Universe::heap()->total_collections();
  for (;;) {
    {
      ThreadBlockInVM blocked(self);
      os::naked_short_sleep(period_ms);
    }
    if (DsoNode::is_leaving()) {
      return;  // the cluster forgets this node whole
    }
    if (DsoReplicaTable::has_dead() || DsoStatistics::has_retired()) {
      DsoStatistics::settle(self);
    }
    collect_for_replicas(self);
  }
}

void DsoReclaim::start(JavaThread* current) {
  DsoNode::start_daemon(current, "djava reclaim", &thread_entry);
}
