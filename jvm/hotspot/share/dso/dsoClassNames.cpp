/*
 * djava: what a class is called on the wire (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "dso/dsoClassNames.hpp"
#include "dso/dsoLambda.hpp"
#include "dso/dsoProxy.hpp"
#include "logging/log.hpp"
#include "memory/resourceArea.hpp"
#include "memory/universe.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/klass.inline.hpp"
#include "oops/weakHandle.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/mutexLocker.hpp"
#include "runtime/os.hpp"
#include "utilities/growableArray.hpp"

namespace {

// The classes this node made for descriptors.
struct Made {
  uint64_t program;
  char* descriptor;
  WeakHandle mirror;  // cleared when the program's loader goes
};
GrowableArray<Made>* made = NULL;

Mutex* made_lock() {
  static Mutex* lock = new Mutex(Mutex::leaf, "DsoClassNames_lock", true,
                                 Mutex::_safepoint_check_always);
  return lock;
}

Klass* find_made(JavaThread* current, uint64_t program, const char* descriptor) {
  MutexLocker ml(current, made_lock());
  for (int i = 0; made != NULL && i < made->length(); i++) {
    const Made& m = made->at(i);
    if (m.program == program && strcmp(m.descriptor, descriptor) == 0) {
      oop mirror = m.mirror.resolve();
      return mirror != NULL ? java_lang_Class::as_Klass(mirror) : NULL;
    }
  }
  return NULL;
}

// Records k for (program, descriptor) unless another thread did first;
// returns the class that stands.
Klass* add_made(JavaThread* current, uint64_t program, const char* descriptor, Klass* k) {
  WeakHandle mirror(Universe::vm_weak(), Handle(current, k->java_mirror()));
  WeakHandle unused;  // released after the lock
  Klass* standing = k;
  {
    MutexLocker ml(current, made_lock());
    if (made == NULL) {
      made = new (ResourceObj::C_HEAP, mtInternal) GrowableArray<Made>(8, mtInternal);
    }
    int i = 0;
    while (i < made->length() &&
           !(made->at(i).program == program && strcmp(made->at(i).descriptor, descriptor) == 0)) {
      i++;
    }
    if (i == made->length()) {
      made->append(Made{program, os::strdup(descriptor, mtInternal), mirror});
    } else if (made->at(i).mirror.resolve() != NULL) {
      standing = java_lang_Class::as_Klass(made->at(i).mirror.resolve());
      unused = mirror;
    } else {
      unused = made->at(i).mirror;  // the program's loader went
      made->at(i).mirror = mirror;
    }
  }
  if (!unused.is_null()) {
    unused.release(Universe::vm_weak());
  }
  return standing;
}

// The descriptor of k if it is made at run time and shareable, else NULL.
const char* descriptor_of(Klass* k) {
  if (!k->is_instance_klass()) {
    return NULL;
  }
  InstanceKlass* ik = InstanceKlass::cast(k);
  return ik->is_hidden() ? DsoLambda::descriptor(ik)
         : DsoProxy::is_proxy_class(ik) ? DsoProxy::descriptor(ik) : NULL;
}

}  // namespace

bool DsoClassNames::is_made_at_run_time(InstanceKlass* k) {
  return k->is_hidden() || DsoProxy::is_proxy_class(k);
}

const char* DsoClassNames::unshareable_reason(InstanceKlass* k) {
  return k->is_hidden() ? DsoLambda::unshareable_reason(k)
         : DsoProxy::is_proxy_class(k) ? DsoProxy::unshareable_reason(k) : NULL;
}

const char* DsoClassNames::shared_name(Klass* k) {
  const char* descriptor = descriptor_of(k);
  return descriptor != NULL ? descriptor : k->name()->as_C_string();
}

bool DsoClassNames::is_named(Klass* k, const char* name) {
  if (is_made_at_run_time(name)) {
    const char* descriptor = descriptor_of(k);
    return descriptor != NULL && strcmp(descriptor, name) == 0;
  }
  return k->name()->equals(name);
}

bool DsoClassNames::is_made_at_run_time(const char* name) {
  return DsoLambda::is_descriptor(name) || DsoProxy::is_descriptor(name);
}

Klass* DsoClassNames::resolve(JavaThread* current, uint64_t program, const char* descriptor,
                              TRAPS) {
  Klass* k = find_made(current, program, descriptor);
  if (k != NULL) {
    return k;
  }
  if (DsoLambda::is_descriptor(descriptor)) {
    k = DsoLambda::make(current, program, descriptor, CHECK_NULL);
  } else {
    k = DsoProxy::make(current, program, descriptor, CHECK_NULL);
  }
  k = add_made(current, program, descriptor, k);
  ResourceMark rm(current);
  log_debug(dso)("made class %s for %s", k->name()->as_C_string(), descriptor);
  return k;
}
