/*
 * djava: entry points of the distributed heap called from HotSpot's start-up.
 */

#include "precompiled.hpp"
#include "dso/dso.hpp"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoSelfTest.hpp"

// Called from init_globals() with the JNI handles (patches/0003).
void dso_init() {
  DsoReplicaTable::initialize();
}

void Dso::vm_initialized(JavaThread* current) {
  if (DjavaSelfTest) {
    DsoSelfTest::run(current);
  }
  if (DistributedJava) {
    DsoNode::join(current);
  }
}

void Dso::before_exit(JavaThread* current) {
  DsoNode::leave(current);
}
