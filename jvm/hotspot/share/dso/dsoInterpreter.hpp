/*
 * djava: what Zero's bytecode interpreter does with shared objects.
 *
 * bytecodeInterpreter.cpp (patches/0004) puts DSO_CHECK_ACCESS before every
 * field and array access and DSO_CHECK_MONITOR before monitorenter. For a
 * local object the check is one load of the mark word and a sign test; a
 * replica of a shared object calls into the VM.
 *
 * Until the shared-object cache is wired in, the VM refuses every access to a
 * replica with an InternalError naming the object: a replica's bytes are
 * never presented as current without coherence.
 */

#ifndef SHARE_DSO_DSOINTERPRETER_HPP
#define SHARE_DSO_DSOINTERPRETER_HPP

#include "dso/dsoMark.hpp"
#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"

class JavaThread;

class DsoInterpreter : AllStatic {
 public:
  // Gains the access the bytecode needs (read: S or M; write: M), or throws.
  static void access_shared(JavaThread* current, oopDesc* obj, jboolean is_write);
  // monitorenter on a replica goes to the distributed monitor service.
  static void enter_shared(JavaThread* current, oopDesc* obj);
};

// Used inside BytecodeInterpreter::run, where CALL_VM, THREAD and
// handle_exception are defined.
#define DSO_CHECK_ACCESS(obj, is_write)                                         \
  if (DsoMark::is_shared((obj)->mark())) {                                      \
    CALL_VM(DsoInterpreter::access_shared(THREAD, (obj), (is_write)),           \
            handle_exception);                                                  \
  }

#define DSO_CHECK_MONITOR(obj)                                                  \
  if (DsoMark::is_shared((obj)->mark())) {                                      \
    CALL_VM(DsoInterpreter::enter_shared(THREAD, (obj)), handle_exception);     \
  }

#endif // SHARE_DSO_DSOINTERPRETER_HPP
