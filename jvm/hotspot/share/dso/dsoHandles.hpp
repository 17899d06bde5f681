/*
 * djava: java.lang.invoke and java.lang.reflect values travel by name.
 *
 * A VarHandle, a direct MethodHandle and a MethodType are values defined by
 * names: a field or an array type, a method (kind, class, name, type), a
 * descriptor. Their objects point into this node's class metadata (member
 * names, lambda forms, compiled adapters), so their bytes mean nothing
 * elsewhere; a program keeps them in its statics (`static final VarHandle
 * COUNT = lookup().findVarHandle(...)`) that threads on every node use. They
 * travel as a name and are looked up again where they arrive, in the
 * program's class loader, once per node (djava.runtime.Handles keeps what
 * it made, so a handle read twice on a node is one object):
 *   "H:T:DESC"                       a MethodType
 *   "H:V:I|S|A:EXACT:CLASS:FIELD"    a VarHandle of an instance field, a
 *                                    static field (CLASS declares it) or the
 *                                    elements of array type CLASS (FIELD empty);
 *                                    EXACT 1 for withInvokeExactBehavior
 *   "H:M:KIND:CLASS:NAME:DESC"       a direct MethodHandle of reference kind
 *                                    KIND (JVMS 5.4.3.5) to a member of CLASS
 * So do the reflection objects (Field, Method, Constructor: their accessors
 * are classes generated on one node), ACC 1 when setAccessible(true) made
 * the original accessible, which its copies are then too:
 *   "H:F:ACC:CLASS:NAME"             a Field CLASS declares
 *   "H:R:ACC:CLASS:NAME:DESC"        a Method CLASS declares
 *   "H:N:ACC:CLASS:DESC"             a Constructor of CLASS
 * Class names are internal (java/lang/String, [J). Other handles (bound,
 * adapted, of byte-array views) have no name and stay unshareable, with
 * the reason in the error.
 */

#ifndef SHARE_DSO_DSOHANDLES_HPP
#define SHARE_DSO_DSOHANDLES_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "utilities/exceptions.hpp"

class JavaThread;

class DsoHandles : AllStatic {
 public:
  // The name v travels by (resource-allocated), or NULL if v is not a
  // handle that has one. No safepoint, no class loading.
  static const char* name_of(oop v);
  // Whether name is one of these names.
  static bool is_handle_name(const char* name) { return name[0] == 'H' && name[1] == ':'; }
  // This node's handle of that name, made in the program's loader.
  static oop resolve(JavaThread* current, uint64_t program, const char* name, TRAPS);
};

#endif // SHARE_DSO_DSOHANDLES_HPP
