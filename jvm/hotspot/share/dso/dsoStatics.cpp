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
#include "runtime/atomic.hpp"
#include "runtime/mutexLocker.hpp"
#include "runtime/os.hpp"
#include "runtime/thread.inline.hpp"
#include "utilities/growableArray.hpp"
#include "utilities/ostream.hpp"

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

// The classes whose <clinit> failed, by statics id (rare: a short list,
// kept for the node's life; an id names one class of one program).
struct InitializationError {
  uint64_t id;
  char* description;
};
static GrowableArrayCHeap<InitializationError, mtInternal>* initialization_errors = NULL;

static Mutex* initialization_errors_lock() {
  // Never a safepoint: the marshalling (no safepoint) reads the list.
  static Mutex* lock = new Mutex(Mutex::leaf, "DsoInitializationErrors_lock", true,
                                 Mutex::_safepoint_check_never);
  return lock;
}

const char* DsoStatics::initialization_error(uint64_t statics_id) {
  if (Atomic::load_acquire(&initialization_errors) == NULL) {
    return NULL;  // no <clinit> failed: no lock on the marshalling's path
  }
  MutexLocker ml(initialization_errors_lock(), Mutex::_no_safepoint_check_flag);
  if (initialization_errors != NULL) {
    for (int i = 0; i < initialization_errors->length(); i++) {
      if (initialization_errors->at(i).id == statics_id) {
        return initialization_errors->at(i).description;
      }
    }
  }
  return NULL;
}

void DsoStatics::set_initialization_error(uint64_t statics_id, const char* description) {
  if (initialization_error(statics_id) != NULL) {
    return;  // the first failure is the class's (only one <clinit> runs)
  }
  MutexLocker ml(initialization_errors_lock(), Mutex::_no_safepoint_check_flag);
  if (initialization_errors == NULL) {
    Atomic::release_store(&initialization_errors,
                          new GrowableArrayCHeap<InitializationError, mtInternal>(4));
  }
  InitializationError e = { statics_id, os::strdup(description, mtInternal) };
  initialization_errors->append(e);
}

// What java records of a failed <clinit> (java_lang_Throwable::
// create_initialization_error): the same text, so that the error another
// node throws reads as the one java throws on a second use.
static const char* describe_initialization_error(JavaThread* current, Handle throwable) {
  oop message = java_lang_Throwable::message(throwable());
  stringStream st;
  st.print("Exception %s%s ", throwable->klass()->external_name(), message == NULL ? "" : ":");
  if (message != NULL) {
    st.print("%s ", java_lang_String::as_utf8_string(message));
  }
  st.print("[in thread \"%s\"]", current->name());
  return st.as_string();
}

// Makes mirror the replica of the class's statics chunk; its index, or 0
// if another thread holds the mirror locked or the replica table is full.
static uint share_mirror(JavaThread* current, Handle mirror, uint64_t program, uint64_t id) {
  djava_sos_chunk* chunk = DsoNode::lib().djava_sos_chunk_for(DsoNode::sos(), id);
  return DsoReplicaTable::publish(current, mirror(), id, chunk, program);
}

void DsoStatics::class_defined(InstanceKlass* ik, JavaThread* current) {
  if (!DsoNode::is_member() || DsoNode::is_leaving()) {
    return;
  }
  uint64_t program = program_of(ik);
  if (program == 0) {
    return;
  }
  // Nobody else knows the class yet: nobody holds its mirror locked.
  HandleMark hm(current);
  Handle mirror(current, ik->java_mirror());
  uint64_t id = statics_id(program, ik->name());
  if (share_mirror(current, mirror, program, id) == 0) {
    ResourceMark rm(current);
    log_info(dso)("statics of %s: not shared at definition (the replica table is full); "
                  "at initialization then", ik->external_name());
  }
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
  uint index = DsoReplicaTable::index_of(id);
  if (index == 0) {
    // Defined before this node joined: shared now. The initializing thread
    // may hold the mirror with HotSpot's lock (synchronized (C.class)
    // around the first use); the cluster's monitor replaces it.
    if (DsoReplicaTable::identity_hash_for_publication(current, mirror()) != 0) {
      index = share_mirror(current, mirror, program, id);
    } else {
      index = 0;
    }
    if (index == 0) {
      ResourceMark rm(current);
      THROW_MSG_(vmSymbols::java_lang_InternalError(),
                 err_msg("djava: cannot share the static fields of %s: another thread of this "
                         "node holds its class object locked", ik->external_name()), true);
    }
    DsoMonitors::adopt_stack_lock(current, mirror, CHECK_(true));
  }
  markWord mark = mirror->mark();
  if (!mark.is_neutral() || !DsoMark::is_shared(mark) || DsoMark::index(mark) != index) {
    // Every step below finds the statics through the mirror's tag: with
    // another mark (untagged, or displaced by HotSpot's lock, which another
    // thread may have inflated while adopt_stack_lock ran) they would use
    // some other entry, or none. (An entry index_of found for another
    // object is never this mirror's tag.)
    ResourceMark rm(current);
    THROW_MSG_(vmSymbols::java_lang_InternalError(),
               err_msg("djava: the class object of %s is not the replica of its static fields "
                       "(its mark " INTPTR_FORMAT ", replica entry %u, statics " UINT64_FORMAT_X ")",
                       ik->external_name(), mark.value(), index, id), true);
  }
  DsoReplica* e = DsoReplicaTable::entry(index);
  DsoReplicaTable::pin(e, mirror());

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
  const char* failed_elsewhere = initialized_elsewhere ? initialization_error(id) : NULL;
  if (!HAS_PENDING_EXCEPTION && !initialized_elsewhere) {
    log_debug(dso)("running <clinit> of %s for the cluster (statics " UINT64_FORMAT_X ")",
                   ik->external_name(), id);
    methodHandle clinit(current, ik->class_initializer());
    if (clinit() != NULL) {
      JavaCallArguments args;
      JavaValue result(T_VOID);
      JavaCalls::call(&result, clinit, &args, THREAD);
    }
    Handle thrown(current, PENDING_EXCEPTION);
    CLEAR_PENDING_EXCEPTION;
    if (thrown.not_null()) {
      // Failed: the class is erroneous on every node. The chunk says so
      // (a write access makes this node produce its state, the error).
      ResourceMark rm(current);
      set_initialization_error(id, describe_initialization_error(current, thrown));
      e->_statics_state = wire_erroneous;
    } else {
      e->_statics_state = wire_initialized;
    }
    // Initialized or failed: the chunk holds the outcome from now on, even
    // if <clinit> wrote no value.
    DsoHeap::begin_access(current, mirror, true, THREAD);
    if (!HAS_PENDING_EXCEPTION) {
      DsoHeap::end_access(mirror());
    }
    if (thrown.not_null()) {
      CLEAR_PENDING_EXCEPTION;  // <clinit>'s exception is the one java throws
      current->set_pending_exception(thrown(), __FILE__, __LINE__);
    }
  } else if (failed_elsewhere != NULL) {
    // JLS 12.4.2 step 5, as HotSpot words it for a class in error state.
    ResourceMark rm(current);
    log_debug(dso)("%s failed to initialize elsewhere: %s", ik->external_name(), failed_elsewhere);
    Handle cause = Exceptions::new_exception(
        current, vmSymbols::java_lang_ExceptionInInitializerError(), failed_elsewhere);
    Exceptions::_throw_msg_cause(current, __FILE__, __LINE__,
                                 vmSymbols::java_lang_NoClassDefFoundError(),
                                 err_msg("Could not initialize class %s", ik->external_name()),
                                 cause);
  } else if (initialized_elsewhere) {
    log_debug(dso)("statics of %s come from the cluster", ik->external_name());
  }
  // The monitor is released whatever happened; an exception from <clinit>
  // stays pending and fails the initialization as in java.
  DsoMonitors::exit(current, mirror());
  return true;
}
