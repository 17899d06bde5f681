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
 *
 * A mirror is shared from the class's definition on (class_defined), not
 * from its initialization: `synchronized (C.class)` may come first, and a
 * monitor HotSpot already holds cannot become the cluster's. On the wire
 * the statics chunk starts with its initialization state (DsoMarshal):
 * empty = no node ran <clinit> yet; initialized, followed by the values; or
 * erroneous, followed by the description of the error <clinit> threw, so
 * that a class whose initializer failed on one node is erroneous on every
 * node (JLS 12.4.2: NoClassDefFoundError, never a second <clinit>).
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

  // SystemDictionary::define_instance_class, before the class is visible
  // to other threads: a program class's mirror becomes the replica of its
  // statics chunk. Failing that (not a member yet), initialize does it.
  static void class_defined(InstanceKlass* ik, JavaThread* current);

  // The initialization state that heads a statics chunk on the wire.
  enum WireState { wire_unknown = 0, wire_initialized = 1, wire_erroneous = 2 };
  // The description of the error the class's <clinit> threw on some node
  // (C heap, owned here), or NULL if it did not fail. No safepoint.
  static const char* initialization_error(uint64_t statics_id);
  // Records that statics_id's <clinit> failed (decoded from the wire, or
  // here). Copies description. No safepoint.
  static void set_initialization_error(uint64_t statics_id, const char* description);

  // The program a class belongs to, or 0 for the JDK's and djava's own.
  static uint64_t program_of(InstanceKlass* ik);

  // The static-field region of a mirror, for the marshalling.
  static int static_block_offset();
  static size_t static_block_size(InstanceKlass* ik);
};

#endif // SHARE_DSO_DSOSTATICS_HPP
