/*
 * djava: objects of lambda classes travel between nodes.
 *
 * A lambda (or method reference) is an instance of a hidden class that
 * LambdaMetafactory spun for one invokedynamic call site of its host
 * class; its name (Host$$Lambda$14/0x...) means nothing on another node. On
 * the wire such a class is named by its call site instead:
 *
 *   djava-lambda:HOST|NAME SIG|BSM|ARG|ARG...
 *
 * HOST the host class (internal form), NAME SIG the invokedynamic's name and
 * type (the SAM's name; the captured arguments' types and the functional
 * interface), BSM metafactory or altMetafactory, then the bootstrap's
 * static arguments: Tsig a MethodType, Hkind:class.name sig a MethodHandle,
 * Iint an int, Cname a class. That is the call site's whole linkage, so two
 * sites with the same descriptor make interchangeable classes.
 *
 * The sending node finds the call site that made a lambda class from the
 * class alone (no safepoint, so it can run while an object is encoded): its
 * host is the class its name starts with, in its own loader; a site of the
 * host matches if its SAM name and erased SAM type are a method of the
 * class, its type is the class's fields (arg$1...) to its first interface,
 * and that method invokes its implementation method (or a method handle
 * from class data: then it cannot tell). Distinct sites that all match
 * (method references differing only in instantiated types, or in being
 * serializable) are told apart by the class's checkcasts, predicted per
 * site as the JDK generates them, and writeReplace; a class that several
 * distinct sites could still have made is refused, never guessed.
 *
 * The receiving node loads the host in the program's loader, finds the site
 * with the same descriptor and links it as HotSpot links an invokedynamic
 * (MethodHandleNatives.linkCallSite, a full-privilege lookup on the host),
 * (or takes the linkage this node's own code got, if it ran the site),
 * then djava.runtime.Lambdas makes one object with the factory and takes
 * its class: the same JDK spins the same class from the same site, so its
 * fields (the captured arguments) are laid out alike. DsoClassNames keeps
 * what this node made, once per (program, descriptor).
 */

#ifndef SHARE_DSO_DSOLAMBDA_HPP
#define SHARE_DSO_DSOLAMBDA_HPP

#include "memory/allStatic.hpp"
#include "utilities/exceptions.hpp"

class InstanceKlass;
class JavaThread;
class Klass;

class DsoLambda : AllStatic {
 public:
  // Why instances of hidden class k cannot be shared, or NULL if k is a
  // lambda class whose call site is known. No safepoint.
  static const char* unshareable_reason(InstanceKlass* k);
  // The descriptor naming hidden class k on the wire (made once, never
  // freed), or NULL if it has none (unshareable_reason says why). No safepoint.
  static const char* descriptor(InstanceKlass* k);

  // Whether a name from the wire is a lambda's descriptor.
  static bool is_descriptor(const char* name);
  // Makes the class of descriptor in program's loader by linking its call
  // site. May load classes and call Java.
  static Klass* make(JavaThread* current, uint64_t program, const char* descriptor, TRAPS);
};

#endif // SHARE_DSO_DSOLAMBDA_HPP
