/*
 * djava: java.util.concurrent's synchronizers that are shared objects
 * (dsoSynchronizers.cpp holds the natives of SharedSynchronizers, our class
 * in jvm/java.base).
 */

#ifndef SHARE_DSO_DSOSYNCHRONIZERS_HPP
#define SHARE_DSO_DSOSYNCHRONIZERS_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "utilities/globalDefinitions.hpp"

class DsoSynchronizers : AllStatic {
 public:
  // obj is about to be published. A ReentrantLock or a CyclicBarrier gets
  // its `shared` field set (patches/0035, 0036), so that its lock() asks
  // the VM whether to take the monitor at the service, and its await
  // whether to go to the service, only when it is shared: one never shared
  // pays a field read. Before the tag, so every copy has it. No safepoint.
  static void prepare_publication(oop obj);

  // A synchronizer's monitor at the service is not its object's (the one
  // synchronized on it enters): the shared id with the top bit set, which
  // no shared id has.
  static uint64_t monitor_of(oop sync);
  static bool is_synchronizer_monitor(uint64_t monitor) {
    return (monitor >> 63) != 0;
  }
};

#endif  // SHARE_DSO_DSOSYNCHRONIZERS_HPP
