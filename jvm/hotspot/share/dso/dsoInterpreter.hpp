/*
 * djava: what Zero's bytecode interpreter does with shared objects.
 *
 * bytecodeInterpreter.cpp (patches/0004) puts DSO_CHECK_ACCESS before every
 * field and array access; monitors of replicas go to the runtime
 * (patches/0009, dsoMonitors.hpp). For a
 * local object the check is one load of the mark word and a sign test; a
 * replica of a shared object calls into the VM.
 *
 * The slow path gains the access through the node's shared-object cache
 * (dsoHeap.hpp): a read needs S or M, a write M. A write's access lasts until
 * its store is done (DSO_END_WRITE after the store), so that a flush or an
 * invalidate never tears or loses it. A replica without a chunk (a VM that
 * is not a cluster node) is refused with an InternalError naming it: its
 * bytes are never presented as current without coherence.
 *
 * GC may run during the slow path (a miss waits for the network): the
 * macros take the object back from vm_result, as it may have moved.
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
  // Leaves the (possibly moved) object in vm_result.
  static void access_shared(JavaThread* current, oopDesc* obj, jboolean is_write);
  // Ends a write's access, after its store.
  static void end_write(oopDesc* obj);
  // The cached case without leaving Java state: true with the access begun
  // (a read's already ended) when this node holds the copy it needs.
  static bool try_access(oopDesc* obj, jboolean is_write);
};

// Used inside BytecodeInterpreter::run, where CALL_VM, THREAD and
// handle_exception are defined.
#define DSO_CHECK_ACCESS(obj, is_write)                                         \
  if (DsoMark::is_shared((obj)->mark()) &&                                      \
      !DsoInterpreter::try_access((obj), (is_write))) {                         \
    CALL_VM(DsoInterpreter::access_shared(THREAD, (obj), (is_write)),           \
            handle_exception);                                                  \
    obj = (decltype(obj))THREAD->vm_result();                                   \
    THREAD->set_vm_result(NULL);                                                \
  }

#define DSO_END_WRITE(obj)                                                      \
  if (DsoMark::is_shared((obj)->mark())) {                                      \
    DsoInterpreter::end_write(obj);                                             \
  }

#endif // SHARE_DSO_DSOINTERPRETER_HPP
