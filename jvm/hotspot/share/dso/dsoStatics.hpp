/*
 * djava: static fields of a program's classes, one copy cluster-wide.
 *
 * HotSpot keeps a class's static fields in its java.lang.Class mirror. For
 * a class of the program (loaded by the program's class loader: the
 * application class loader on the launching node, the program's loader on
 * a thread server), the mirror becomes the replica of a *named* chunk whose
 * id every node computes from (program, class name) alone (sos ids.h: the
 * chunk exists from the start, empty, at its home). getstatic, putstatic
 * and synchronized static methods then go through the cache and the monitor
 * service like any shared object's fields and monitor.
 *
 * <clinit> runs exactly once cluster-wide: the node initializing a class
 * takes the class's cluster monitor, reads the statics chunk, and either
 * takes the values another node's <clinit> produced (the chunk is no longer
 * empty) or runs <clinit> itself and marks the chunk initialized, before it
 * lets the next node in. The JDK's own classes keep node-local statics.
 */

#ifndef SHARE_DSO_DSOSTATICS_HPP
#define SHARE_DSO_DSOSTATICS_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "utilities/exceptions.hpp"

class InstanceKlass;

class DsoStatics : AllStatic {
 public:
  // InstanceKlass::call_class_initializer: true if the class's statics are
  // the cluster's (the initializer has then run here or elsewhere).
  static bool initialize(InstanceKlass* ik, TRAPS);

  // The program a class belongs to, or 0 for the JDK's and djava's own.
  static uint64_t program_of(InstanceKlass* ik);

  // The static-field region of a mirror, for the marshalling.
  static int static_block_offset();
  static size_t static_block_size(InstanceKlass* ik);
};

#endif // SHARE_DSO_DSOSTATICS_HPP
