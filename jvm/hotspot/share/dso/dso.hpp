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
  // And its java.base gets lib/djava-java.base.jar in front (the hooks of
  // java.util.concurrent's synchronizers, dsoSynchronizers.cpp): the
  // --patch-module value "java.base=PATH", or NULL when the VM is no node,
  // the jar is missing, or the command line patches java.base itself (the
  // hooks only make shared synchronizers faster; without them they work
  // by coherence alone).
  static const char* java_base_patch(bool java_base_patched);
  // Then: the flags a node needs on this VM.
  static void adjust_vm_flags();
  // The VM has started (end of Threads::create_vm).
  static void vm_initialized(JavaThread* current);
  // The VM is about to exit (before_exit in java.cpp): leave the cluster.
  static void before_exit(JavaThread* current);
};

#endif // SHARE_DSO_DSO_HPP
