/*
 * djava: the interpreter's slow path for shared objects (see the header).
 */

#include "precompiled.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoInterpreter.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "memory/resourceArea.hpp"
#include "oops/klass.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "utilities/exceptions.hpp"

static void refuse(JavaThread* current, oop obj, const char* what) {
  ResourceMark rm(current);
  uint index = DsoMark::index(obj->mark());
  Exceptions::fthrow(current, __FILE__, __LINE__, vmSymbols::java_lang_InternalError(),
                     "djava: cannot %s shared object " UINT64_FORMAT_X " (%s) on this node: "
                     "this build has no shared-object cache yet",
                     what, DsoReplicaTable::entry(index)->_global_id, obj->klass()->external_name());
}

JRT_ENTRY(void, DsoInterpreter::access_shared(JavaThread* current, oopDesc* obj, jboolean is_write))
  refuse(current, obj, is_write ? "write" : "read");
JRT_END

JRT_ENTRY(void, DsoInterpreter::enter_shared(JavaThread* current, oopDesc* obj))
  refuse(current, obj, "lock");
JRT_END
