/*
 * djava: values of the JDK that every node has its own of, shared by name.
 *
 * Java programs compare some JDK objects by identity: enum constants
 * (`unit == TimeUnit.SECONDS`), static-final singletons (Boolean.TRUE,
 * Collections.emptyList()) and the cached boxes of Integer.valueOf and kin
 * (JLS 5.1.7 makes boxing of small values give identical references). Each
 * node's runtime holds its own instances, so a copy of one would be a third
 * object equal to none of them. Such a value travels as a name instead and
 * is the receiver's own instance on arrival:
 *   "S:<class>:<field>"  a static final field of a class of the JDK (the
 *                        value's class, its superclass or its outer class;
 *                        System for System.in, out and err)
 *   "B:<class>:<value>"  the cached box of that value (Integer, Long, Short,
 *                        Byte, Character)
 *   "G:system"           the system thread group, the root of every node's
 *                        groups, which holds that node's own threads (the
 *                        program's groups under it are shared objects)
 *   "H:..."              a VarHandle, direct MethodHandle or MethodType
 *                        (dsoHandles.hpp)
 * Only objects of classes the boot or platform loader defined qualify: a
 * program's own enums and singletons live in its shared statics already.
 */

#ifndef SHARE_DSO_DSONAMEDVALUES_HPP
#define SHARE_DSO_DSONAMEDVALUES_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "utilities/exceptions.hpp"

class JavaThread;

class DsoNamedValues : AllStatic {
 public:
  // The name v travels by (resource-allocated), or NULL if v is not such a
  // value. No safepoint, no class loading.
  static const char* name_of(oop v);
  // The identity hash of a value each node has its own instance of, made
  // from its name (HotSpot's halfsiphash with fixed seeds), so that it is
  // the same on every node (a shared HashMap keyed by Exception.class or
  // TimeUnit.SECONDS finds its entry from any node): the mirror of a class of the JDK (or of an array or primitive
  // type), and a constant of an enum of the JDK. 0 for any other object,
  // whose hash is drawn as usual. For ObjectSynchronizer's first hash of
  // an object (patches/0023): no safepoint, no allocation.
  static intptr_t stable_identity_hash(oop v);
  // This node's instance of a named value; loads and initializes its class
  // if needed (a java.lang.invoke value's in the program's loader).
  // Throws InternalError for a name that names no such value.
  static oop resolve(JavaThread* current, uint64_t program, const char* name, TRAPS);
};

#endif // SHARE_DSO_DSONAMEDVALUES_HPP
