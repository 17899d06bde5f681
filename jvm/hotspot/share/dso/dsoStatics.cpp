/*
 * djava: static fields of a program's classes (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoMonitors.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoProxy.hpp"
#include "dso/dsoStatics.hpp"
#include "dso/dsoThreads.hpp"
#include "logging/log.hpp"
#include "memory/resourceArea.hpp"
#include "memory/universe.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/klass.inline.hpp"
#include "classfile/moduleEntry.hpp"
#include "oops/instanceMirrorKlass.hpp"
#include "oops/oop.inline.hpp"
#include "oops/oopHandle.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "runtime/thread.inline.hpp"

int DsoStatics::static_block_offset() {
  return InstanceMirrorKlass::offset_of_static_fields();
}

size_t DsoStatics::static_block_size(InstanceKlass* ik) {
  return (size_t)ik->static_field_size() * wordSize;
}

uint64_t DsoStatics::program_of(InstanceKlass* ik) {
  // The program's own classes come from its class path: the unnamed module.
  // (The application class loader also defines JDK modules, e.g. javac's.)
  // A proxy class's statics are its node's Method objects for its methods.
  if (ik->is_hidden() || ik->class_loader() == NULL || ik->module()->is_named() ||
      DsoProxy::is_proxy_class(ik)) {
    return 0;
  }
  if (!DsoNode::is_thread_server()) {
    return ik->class_loader() == SystemDictionary::java_system_loader() ? DsoNode::program() : 0;
  }
  return DsoHeap::program_of_loader(ik->class_loader());
}

// The named chunk of (program, class): ids sos-server knows without a
// creator (sos/ids.h: the reserved node number, then 40 bits of name).
static uint64_t statics_id(uint64_t program, Symbol* name) {
  uint64_t h = 1469598103934665603ULL ^ program;
  for (int i = 0; i < name->utf8_length(); i++) {
    h = (h ^ (uint8_t)name->char_at(i)) * 1099511628211ULL;
  }
  uint64_t sequence = (h ^ (h >> 40)) & ((UCONST64(1) << 40) - 1);
  if (sequence == 0) sequence = 1;
  const uint64_t named_node = (UCONST64(1) << 24) - 1;
  return (named_node << 40) | sequence;
}

bool DsoStatics::initialize(InstanceKlass* ik, TRAPS) {
  if (!DsoNode::is_member() || DsoNode::is_leaving()) {
    return false;
  }
  uint64_t program = program_of(ik);
  if (program == 0) {
    return false;
  }
  JavaThread* current = THREAD;
  uint64_t id = statics_id(program, ik->name());
  Handle mirror(current, ik->java_mirror());
  djava_sos_chunk* chunk = DsoNode::lib().djava_sos_chunk_for(DsoNode::sos(), id);
  uint index = DsoReplicaTable::publish(current, mirror(), id, chunk, program);
  if (index == 0) {
    ResourceMark rm(current);
    THROW_MSG_(vmSymbols::java_lang_InternalError(),
               err_msg("djava: cannot share the static fields of %s", ik->external_name()), true);
  }
  DsoReplica* e = DsoReplicaTable::entry(index);
  DsoReplicaTable::pin(e, mirror());
  DsoNode::lib().djava_sos_set_user(e->_chunk, index);

  // One initializer at a time, cluster-wide, for this class.
  DsoMonitors::enter(current, mirror);
  if (HAS_PENDING_EXCEPTION) {
    return true;
  }
  DsoHeap::begin_access(current, mirror, false, THREAD);
  bool initialized_elsewhere = !HAS_PENDING_EXCEPTION &&
                               DsoNode::lib().djava_sos_size(e->_chunk) > 0;
  if (!HAS_PENDING_EXCEPTION) {
    DsoHeap::end_access(mirror());
  }
  if (!HAS_PENDING_EXCEPTION && !initialized_elsewhere) {
    log_debug(dso)("running <clinit> of %s for the cluster (statics " UINT64_FORMAT_X ")",
                   ik->external_name(), id);
    methodHandle clinit(current, ik->class_initializer());
    if (clinit() != NULL) {
      JavaCallArguments args;
      JavaValue result(T_VOID);
      JavaCalls::call(&result, clinit, &args, THREAD);
    }
    if (!HAS_PENDING_EXCEPTION) {
      // Initialized: the chunk holds the values from now on, even if
      // <clinit> wrote none (a write access makes this node produce them).
      DsoHeap::begin_access(current, mirror, true, THREAD);
      if (!HAS_PENDING_EXCEPTION) {
        DsoHeap::end_access(mirror());
      }
    }
  } else if (initialized_elsewhere) {
    log_debug(dso)("statics of %s come from the cluster", ik->external_name());
  }
  // The monitor is released whatever happened; an exception from <clinit>
  // stays pending and fails the initialization as in java.
  DsoMonitors::exit(current, mirror());
  return true;
}
