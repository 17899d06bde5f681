/*
 * djava: what the compilers' shared-object checks have in common (C1's in
 * dso/c1, C2's in dso/c2): the kinds of access their slow path is told
 * (DsoInterpreter::compiled_access), and which field accesses a compiled
 * check treats apart.
 */

#ifndef SHARE_DSO_DSOCOMPILEDACCESS_HPP
#define SHARE_DSO_DSOCOMPILEDACCESS_HPP

#include "memory/allStatic.hpp"
#include "utilities/macros.hpp"

class ciEnv;
class ciField;

class DsoCompiledAccess : AllStatic {
 public:
  // Bits of the kind the slow path is told.
  enum Kind {
    read          = 0,
    write         = 1,
    thread_status = 2,  // a read of Thread.threadStatus
    dynamic       = 4,  // Unsafe or an atomic: the base may be null, and
                        // a mirror's own fields and threadStatus are told
                        // by the offset at run time
    indexed       = 8   // an array element: the slow path gets its offset
                        // (an array kept in blocks needs the element's block)
  };
  // An access that needs no check.
  static const int no_check = -1;

#if COMPILER1_OR_COMPILER2
  // The kind of a compiled access (`kind`: read or write) of `field`, an
  // instance field: no_check for java.lang.Class's own fields, which are
  // each node's (a mirror's statics are checked), and thread_status for a
  // read of Thread.threadStatus (a remote thread's state is asked of its
  // node).
  static int of_instance_field(ciEnv* env, ciField* field, int kind);
#endif
};

#endif // SHARE_DSO_DSOCOMPILEDACCESS_HPP
