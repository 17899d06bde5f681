/*
 * djava: entry points of the distributed heap ("dso": distributed shared
 * objects) called from HotSpot's start-up. See docs/DESIGN.md.
 */

#ifndef SHARE_DSO_DSO_HPP
#define SHARE_DSO_DSO_HPP

#include "memory/allStatic.hpp"

class JavaThread;

class Dso : AllStatic {
 public:
  // While arguments are finalized: a cluster node's boot class path gets
  // lib/djava-runtime.jar (djava.runtime.*).
  static void extend_boot_class_path();
  // Then: the flags a node needs on this VM.
  static void adjust_vm_flags();
  // The VM has started (end of Threads::create_vm).
  static void vm_initialized(JavaThread* current);
  // The VM is about to exit (before_exit in java.cpp): leave the cluster.
  static void before_exit(JavaThread* current);
};

#endif // SHARE_DSO_DSO_HPP
