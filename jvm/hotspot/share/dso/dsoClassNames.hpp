/*
 * djava: what a class is called on the wire.
 *
 * A class the program's class path holds travels by its name and is
 * loaded by name on the other side. Two kinds of class are made at run time
 * instead, so their names mean nothing elsewhere: lambda classes
 * (DsoLambda, named by the call site that made them) and dynamic proxy
 * classes (DsoProxy, named by their loader and interfaces). This is the
 * one place that tells them apart, and it keeps what this node made for
 * such a name, once per (program, name), held weakly (the program's loader
 * keeps it).
 */

#ifndef SHARE_DSO_DSOCLASSNAMES_HPP
#define SHARE_DSO_DSOCLASSNAMES_HPP

#include "memory/allStatic.hpp"
#include "utilities/exceptions.hpp"

class InstanceKlass;
class JavaThread;
class Klass;

class DsoClassNames : AllStatic {
 public:
  // Whether k is a class made at run time (hidden, or a proxy). No safepoint.
  static bool is_made_at_run_time(InstanceKlass* k);
  // Why instances of such a class cannot be shared, or NULL. No safepoint.
  static const char* unshareable_reason(InstanceKlass* k);

  // The name of k on the wire: a descriptor for a class made at run time,
  // else its internal name (in the resource area). No safepoint.
  static const char* shared_name(Klass* k);
  // Whether name (from the wire) names k here. No safepoint.
  static bool is_named(Klass* k, const char* name);

  // Whether a name from the wire is a descriptor of a class made at run time.
  static bool is_made_at_run_time(const char* name);
  // The class this node made for that descriptor in program's loader, made
  // now if it has none. May load classes and call Java.
  static Klass* resolve(JavaThread* current, uint64_t program, const char* descriptor, TRAPS);
};

#endif // SHARE_DSO_DSOCLASSNAMES_HPP
