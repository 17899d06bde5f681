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

  // A synchronizer's monitor at the service (a lock's, a barrier's) is not
  // its object's, which synchronized on it enters: the shared id with this
  // bit flipped. An object that can be locked has it clear (only foreign
  // replicas' ids have it, and they refuse every use).
  static const uint64_t synchronizer_bit = UCONST64(1) << 63;
  static bool is_synchronizer_monitor(uint64_t monitor) {
    return (monitor & synchronizer_bit) != 0;
  }
};

#endif  // SHARE_DSO_DSOSYNCHRONIZERS_HPP
