/*
 * djava: java.util.concurrent's synchronizers that are shared objects
 * (dsoSynchronizers.cpp holds the natives of SharedSynchronizers, our class
 * in jvm/java.base).
 */

#ifndef SHARE_DSO_DSOSYNCHRONIZERS_HPP
#define SHARE_DSO_DSOSYNCHRONIZERS_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"

class DsoSynchronizers : AllStatic {
 public:
  // obj is about to be published. A ReentrantLock gets its `shared` field
  // set (patches/0035), so that its lock() asks the VM whether to take the
  // monitor at the service only when the lock is shared, and a lock never
  // shared pays a field read. Before the tag, so every copy has it. No
  // safepoint.
  static void prepare_publication(oop obj);
};

#endif  // SHARE_DSO_DSOSYNCHRONIZERS_HPP
