/*
 * djava: what the compilers' shared-object checks have in common (C1's in
 * dso/c1, C2's in dso/c2): the kinds of access their slow path is told
 * (DsoInterpreter::compiled_access), which field accesses a compiled
 * check treats apart, and the profile of access sites that C1's profiling
 * code keeps for C2.
 *
 * The profile: one byte per access site (a method and a bytecode index)
 * that C1 compiled with profiling: site_shared once a replica reached the
 * site's check there, site_missed as well once its cached test failed
 * (the slow path ran). C2 tests a site whose byte is still clear with a
 * trap instead of the whole check (it speculates that the site's objects
 * are local, as it speculates on a branch never taken), and a site whose
 * replicas always passed the cached test with that test and a trap
 * instead of the slow-path call; each trap sets its bit before it
 * deoptimizes, so the recompiled method checks that site in full. A site
 * C1 never compiled with profiling has no byte and gets the whole check.
 * Bytes are never freed: a method unloaded and another at its address
 * inherit its sites' bytes, which at worst cost one trap or a full check.
 */

#ifndef SHARE_DSO_DSOCOMPILEDACCESS_HPP
#define SHARE_DSO_DSOCOMPILEDACCESS_HPP

#include "memory/allStatic.hpp"
#include "utilities/globalDefinitions.hpp"
#include "utilities/macros.hpp"

class ciEnv;
class ciField;
class ciMethod;

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
    indexed       = 8,  // an array element: the slow path gets its offset
                        // (an array kept in blocks needs the element's block)
    kept_final    = 16  // a read of a final field a replica keeps
                        // (DsoInterpreter::keeps_finals_of): the slow path
                        // reads it as it is if the replica held its bytes
  };
  // An access that needs no check.
  static const int no_check = -1;

  // Bits of a site's profile byte.
  enum SiteSeen {
    site_shared = 1,  // a replica reached the site
    site_missed = 2   // and failed its cached test there
  };

#if COMPILER1_OR_COMPILER2
  // The kind of a compiled access (`kind`: read or write) of `field`, an
  // instance field: no_check for java.lang.Class's own fields, which are
  // each node's (a mirror's statics are checked), and thread_status for a
  // read of Thread.threadStatus (a remote thread's state is asked of its
  // node); a read of a kept final field is kept_final.
  static int of_instance_field(ciEnv* env, ciField* field, int kind);

  // The profile byte of the access at `bci` in `method` (SiteSeen's
  // bits): 0 until a replica reached it in profiled code. With `create`,
  // made if missing (C1, profiling); else NULL if missing (C2).
  static volatile jbyte* shared_seen(ciMethod* method, int bci, bool create);
#endif
};

#endif // SHARE_DSO_DSOCOMPILEDACCESS_HPP
