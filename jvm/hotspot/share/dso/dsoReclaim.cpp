/*
 * djava: the reclaim thread (see the header).
 */

#include "precompiled.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReclaim.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoStatistics.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/os.hpp"
#include "runtime/thread.inline.hpp"

namespace {

// Often enough that a program streaming objects through the cluster
// releases them in step with its GCs; rarely enough to cost nothing idle.
const int period_ms = 100;

}  // namespace

void DsoReclaim::thread_entry(JavaThread* self, JavaThread* THREAD) {
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
  }
}

void DsoReclaim::start(JavaThread* current) {
  DsoNode::start_daemon(current, "djava reclaim", &thread_entry);
}
