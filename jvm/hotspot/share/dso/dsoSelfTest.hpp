/*
 * djava: the distributed heap's self-test (-XX:+DjavaSelfTest), run on the
 * started VM. It proves on the real heap what the design relies on: the
 * shared-object tag in the mark word and the replica table survive young and
 * full GCs, identity hashing and monitor inflation and deflation; local
 * objects never look shared; unreferenced replicas are collected and their
 * entries reused.
 */

#ifndef SHARE_DSO_DSOSELFTEST_HPP
#define SHARE_DSO_DSOSELFTEST_HPP

#include "memory/allStatic.hpp"

class JavaThread;

class DsoSelfTest : AllStatic {
 public:
  // Prints a summary on success; ends the VM with an error on any failure.
  static void run(JavaThread* current);
  // Unsafe, System.arraycopy, Object.clone, reflection and JNI refuse a
  // replica without a chunk (dsoAccessSelfTest.cpp).
  static void runtime_paths_refuse_replicas(JavaThread* current);
};

#endif // SHARE_DSO_DSOSELFTEST_HPP
