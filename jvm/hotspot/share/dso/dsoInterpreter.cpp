/*
 * djava: the interpreter's slow path for shared objects (see the header).
 */

#include "precompiled.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoAccess.hpp"
#include "dso/dsoCompiledAccess.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoInterpreter.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoThreads.hpp"
#include "memory/resourceArea.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/klass.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/fieldDescriptor.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/threadSMR.hpp"
#include "utilities/exceptions.hpp"


#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool has_chunk(oop obj) {
  return DsoReplicaTable::entry(DsoMark::index(obj->mark()))->_chunk != NULL;
}

void DsoInterpreter::gain_access(JavaThread* current, Handle h, jlong offset, jlong end,
                                 bool is_write, TRAPS) {
  if (!has_chunk(h())) {
    // A foreign object (unshareable where it lives), or a replica of a VM
    // that is not a cluster node (the self-test's).
    DsoAccess::refuse(current, h(), is_write ? "write" : "read",
                      "it has no shared-object cache here");
    return;
  }
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(h->mark()));
  if (e->_blocks != NULL && offset < 0) {
    // An array in blocks is reached only by its elements (and arraylength,
    // which needs no access): the caller did not say which.
    DsoAccess::refuse(current, h(), is_write ? "write" : "read",
                      "an access to an array kept in blocks names no element");
    return;
  }
  jlong from = e->_blocks != NULL ? offset : 0;
  jlong to = e->_blocks != NULL ? end : max_jlong;
  DsoHeap::begin_access_range(current, h, from, to, is_write, CHECK);
  if (!is_write) {
    // A read needs the bytes current when it starts; the replica's bytes
    // change only under a later access, so the access ends here. A write
    // ends after its store (DSO_END_WRITE): a flush must not miss it.
    DsoHeap::end_access_range(h(), from, to);
  } else {
    // The chunks the access began on (looked up by then: no exception).
    djava_sos_chunk* first = DsoHeap::chunk_at(current, h(), from, THREAD);
    djava_sos_chunk* last = DsoHeap::chunk_at(current, h(), to - 1, THREAD);
    note_pinned(current, first);
    assert(_second_pinned == NULL, "one write at a time");
    _second_pinned = last != first ? last : NULL;
  }
}

// No async exception (Thread.stop) at the return: a write's access is held
// until DSO_END_WRITE after its store, which the exception would skip,
// leaving the copy pinned (every later revocation of it would wait).
JRT_ENTRY_NO_ASYNC(void, DsoInterpreter::access_shared(JavaThread* current, oopDesc* obj, jboolean is_write))
  Handle h(current, obj);
  gain_access(current, h, -1, -1, is_write, CHECK);
  // The replica may have moved meanwhile: the interpreter takes it back.
  current->set_vm_result(h());
JRT_END

JRT_ENTRY_NO_ASYNC(void, DsoInterpreter::access_shared_element(JavaThread* current,
                                                               arrayOopDesc* array, jint index,
                                                               jboolean is_write))
  Handle h(current, array);
  jlong offset = DsoAccess::element_offset(array, index);
  gain_access(current, h, offset, offset + 1, is_write, CHECK);
  current->set_vm_result(h());
JRT_END

JRT_ENTRY(void, DsoInterpreter::refresh_thread_state(JavaThread* current, oopDesc* obj))
  DsoThreads::refresh_remote_state(current, obj);
JRT_END

// A Thread's threadStatus of a thread another node runs is asked of that
// node (DSO_CHECK_FIELD_READ); any other field or element is read as is.
static bool reads_thread_status(oop obj, address field) {
  return field - cast_from_oop<address>(obj) == DsoThreads::thread_status_offset() &&
         obj->klass()->is_subclass_of(vmClasses::Thread_klass());
}

static const char kept_finals_package[] = "java/util/concurrent/";

bool DsoInterpreter::keeps_finals_of(const char* holder_name) {
  return strncmp(holder_name, kept_finals_package, sizeof(kept_finals_package) - 1) == 0;
}

bool DsoInterpreter::keeps_finals_of(Symbol* holder_name) {
  return holder_name->starts_with(kept_finals_package, (int)sizeof(kept_finals_package) - 1);
}

bool DsoInterpreter::reads_kept_final(oop obj, int offset) {
  if (!obj->klass()->is_instance_klass() || obj->klass() == vmClasses::Class_klass()) {
    return false;
  }
  fieldDescriptor fd;
  return InstanceKlass::cast(obj->klass())->find_field_from_offset(offset, false, &fd) &&
         fd.is_final() && keeps_finals_of(fd.field_holder()->name()) && held_bytes(obj);
}

JRT_ENTRY_NO_ASYNC(void, DsoInterpreter::bytecode_read(JavaThread* current, oopDesc* obj,
                                                       address field, oopDesc* val))
  bool thread_status = reads_thread_status(obj, field);
  jlong offset = field - cast_from_oop<address>(obj);
  Handle h(current, obj);
  Handle v(current, val);
  if (!reads_kept_final(h(), (int)offset)) {
    gain_access(current, h, offset, offset + 1, false, CHECK);
  }
  if (thread_status) {
    DsoThreads::refresh_remote_state(current, h());
  }
  current->set_vm_result(h());
  current->set_dso_vm_result_2(v());
JRT_END

JRT_ENTRY_NO_ASYNC(void, DsoInterpreter::bytecode_write(JavaThread* current, oopDesc* obj,
                                                        address field, oopDesc* val))
  jlong offset = field - cast_from_oop<address>(obj);
  Handle h(current, obj);
  Handle v(current, val);
  gain_access(current, h, offset, offset + 1, true, CHECK);
  current->set_vm_result(h());
  current->set_dso_vm_result_2(v());
JRT_END

JRT_ENTRY_NO_ASYNC(void, DsoInterpreter::compiled_access(JavaThread* current, oopDesc* obj,
                                                         jint kind, jlong offset))
  if ((kind & DsoCompiledAccess::kept_final) != 0 && held_bytes(obj)) {
    return;
  }
  Handle h(current, obj);
  // Unsafe's accesses (dynamic) may be unaligned: up to 8 bytes.
  jlong end = offset < 0 ? -1 : offset + ((kind & DsoCompiledAccess::dynamic) != 0 ? 8 : 1);
  gain_access(current, h, offset, end, (kind & DsoCompiledAccess::write) != 0, CHECK);
  if ((kind & DsoCompiledAccess::thread_status) != 0 && h->klass()->is_subclass_of(vmClasses::Thread_klass())) {
    DsoThreads::refresh_remote_state(current, h());
  }
JRT_END

void DsoInterpreter::release(djava_sos_chunk* chunk) {
  DsoNode::lib().djava_sos_release(chunk);
}

bool DsoInterpreter::_announced_writes = false;
THREAD_LOCAL djava_sos_chunk* DsoInterpreter::_second_pinned = NULL;

void DsoInterpreter::initialize() {
  static bool initialized = false;
  if (initialized) {
    return;
  }
  initialized = true;
  _announced_writes =
      syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  log_info(dso)("inline writes of cached shared objects %s",
                _announced_writes ? "announce themselves (membarrier)" : "pin the copy (CAS)");
}

void DsoInterpreter::quiesce_writers(void* context, volatile uint64_t* word) {
  if (!_announced_writes) {
    return;  // writers pin: the revoker waits for the pins
  }
  // BLOCKED is set: a writer that announces itself from now on sees it. Make
  // the announcements of the others visible here ...
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
    fatal("djava: membarrier failed after it was registered: %s", os::strerror(errno));
  }
  // ... and wait for each to end its store (a few instructions, unless the
  // writer was descheduled in between).
  DsoHeap::attach_cache_thread();
  JavaThreadIteratorWithHandle jtiwh;
  for (JavaThread* t = jtiwh.next(); t != NULL; t = jtiwh.next()) {
    for (int spins = 0; __atomic_load_n(t->dso_inline_write_addr(), __ATOMIC_ACQUIRE) == word;
         spins++) {
      if (spins < 100) {
        SpinPause();
      } else {
        os::naked_yield();
      }
    }
  }
}
