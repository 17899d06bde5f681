/*
 * djava: objects of dynamic proxy classes travel between nodes.
 *
 * java.lang.reflect.Proxy makes a proxy class at run time for a class
 * loader and a list of interfaces (jdk.proxy1.$Proxy7); its name means
 * nothing on another node, and no class path holds its bytes. On the wire
 * it is named by what made it:
 *
 *   djava-proxy:L|I1;I2...
 *
 * L the kind of its defining loader (B the boot loader, P the platform
 * loader, A the program's: the application loader on the launching node,
 * the program's loader on a thread server), I1... its interfaces in
 * order, internal form. The receiving node resolves the interfaces in the
 * program's loader and asks Proxy for the class of that loader and list:
 * the JDK keeps one proxy class per (loader, interfaces), so every proxy
 * of that list on that node has that class, laid out alike (its one field,
 * the handler, is Proxy's). A proxy class defined by any other loader
 * (one the program made) cannot be shared: that loader is on its node only.
 *
 * Proxy classes keep node-local statics (their Method constants).
 */

#ifndef SHARE_DSO_DSOPROXY_HPP
#define SHARE_DSO_DSOPROXY_HPP

#include "memory/allStatic.hpp"
#include "utilities/exceptions.hpp"

class InstanceKlass;
class JavaThread;
class Klass;

class DsoProxy : AllStatic {
 public:
  // Whether k is a class java.lang.reflect.Proxy made. No safepoint.
  static bool is_proxy_class(const Klass* k);
  // Why instances of proxy class k cannot be shared, or NULL. No safepoint.
  static const char* unshareable_reason(InstanceKlass* k);
  // The descriptor naming proxy class k on the wire (resource area), or
  // NULL if it has none (unshareable_reason says why). No safepoint.
  static const char* descriptor(InstanceKlass* k);

  // Whether a name from the wire is a proxy's descriptor.
  static bool is_descriptor(const char* name);
  // Makes (or finds) the proxy class of descriptor on this node for
  // program. May load classes and call Java.
  static Klass* make(JavaThread* current, uint64_t program, const char* descriptor, TRAPS);
};

#endif // SHARE_DSO_DSOPROXY_HPP
