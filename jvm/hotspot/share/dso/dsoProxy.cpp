/*
 * djava: objects of dynamic proxy classes travel between nodes (see the header).
 */

#include "precompiled.hpp"
#include "classfile/classLoaderData.inline.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoProxy.hpp"
#include "memory/oopFactory.hpp"
#include "memory/resourceArea.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/klass.inline.hpp"
#include "oops/objArrayOop.inline.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "utilities/ostream.hpp"

namespace {

const char descriptor_prefix[] = "djava-proxy:";
const size_t descriptor_prefix_length = sizeof(descriptor_prefix) - 1;
const char simple_name_prefix[] = "$Proxy";  // then a number (java.lang.reflect.Proxy)

// Whether the last part of name is $Proxy and a number.
bool has_proxy_name(const Symbol* name) {
  int start = name->utf8_length();
  while (start > 0 && name->char_at(start - 1) != '/') {
    start--;
  }
  int prefix = (int)sizeof(simple_name_prefix) - 1;
  if (name->utf8_length() - start <= prefix) {
    return false;
  }
  for (int i = 0; i < prefix; i++) {
    if (name->char_at(start + i) != simple_name_prefix[i]) {
      return false;
    }
  }
  for (int i = start + prefix; i < name->utf8_length(); i++) {
    if (name->char_at(i) < '0' || name->char_at(i) > '9') {
      return false;
    }
  }
  return true;
}

// B, P or A (see the header) for the loader that defined k; 0 for another.
char loader_kind(InstanceKlass* k) {
  ClassLoaderData* cld = k->class_loader_data();
  if (cld->is_boot_class_loader_data()) {
    return 'B';
  }
  if (cld->is_platform_class_loader_data()) {
    return 'P';
  }
  if (cld->is_system_class_loader_data()) {
    return 'A';
  }
  oop loader = k->class_loader();
  Klass* lk = loader != NULL ? loader->klass() : NULL;
  if (lk != NULL && lk->class_loader_data()->is_boot_class_loader_data() &&
      lk->name()->equals("djava/runtime/ProgramLoader")) {
    return 'A';
  }
  return 0;
}

}  // namespace

bool DsoProxy::is_proxy_class(const Klass* k) {
  if (!k->is_instance_klass()) {
    return false;
  }
  const InstanceKlass* ik = InstanceKlass::cast(k);
  const Klass* super = ik->super();
  return super != NULL && !ik->is_hidden() && ik->is_final() &&
         super->class_loader_data()->is_boot_class_loader_data() &&
         super->name()->equals("java/lang/reflect/Proxy") && has_proxy_name(ik->name());
}

const char* DsoProxy::unshareable_reason(InstanceKlass* k) {
  if (loader_kind(k) == 0) {
    return "it is a proxy whose class a class loader of the program defined, and that loader "
           "is on this node only";
  }
  Array<InstanceKlass*>* interfaces = k->local_interfaces();
  for (int i = 0; i < interfaces->length(); i++) {
    if (interfaces->at(i)->is_hidden()) {
      return "it is a proxy of a hidden interface, which another node cannot load by name";
    }
  }
  return NULL;
}

const char* DsoProxy::descriptor(InstanceKlass* k) {
  if (unshareable_reason(k) != NULL) {
    return NULL;
  }
  stringStream st;
  st.print("%s%c|", descriptor_prefix, loader_kind(k));
  Array<InstanceKlass*>* interfaces = k->local_interfaces();
  for (int i = 0; i < interfaces->length(); i++) {
    st.print("%s%s", i > 0 ? ";" : "", interfaces->at(i)->name()->as_C_string());
  }
  return st.as_string();
}

bool DsoProxy::is_descriptor(const char* name) {
  return strncmp(name, descriptor_prefix, descriptor_prefix_length) == 0;
}

Klass* DsoProxy::make(JavaThread* current, uint64_t program, const char* descriptor, TRAPS) {
  ResourceMark rm(current);
  const char* kind = descriptor + descriptor_prefix_length;
  const char* names = kind + 2;
  if ((kind[0] != 'A' && kind[0] != 'B' && kind[0] != 'P') || kind[1] != '|' || *names == '\0') {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: a malformed proxy descriptor: %s", descriptor));
  }
  Handle loader;
  if (kind[0] == 'P') {
    loader = Handle(current, SystemDictionary::java_platform_loader());
  } else if (kind[0] == 'A') {
    loader = Handle(current, DsoHeap::loader_of_program(program));
    if (loader.is_null()) {
      THROW_MSG_NULL(vmSymbols::java_lang_NoClassDefFoundError(),
                     err_msg("djava: a proxy of program %" PRIu64 ": this node runs no thread of "
                             "that program", program));
    }
  }
  int count = 1;
  for (const char* p = names; *p != '\0'; p++) {
    count += *p == ';' ? 1 : 0;
  }
  objArrayHandle interfaces = oopFactory::new_objArray_handle(vmClasses::Class_klass(), count,
                                                              CHECK_NULL);
  const char* name = names;
  for (int i = 0; i < count; i++) {
    const char* end = strchr(name, ';');
    size_t length = end != NULL ? (size_t)(end - name) : strlen(name);
    char* one = NEW_RESOURCE_ARRAY(char, length + 1);
    memcpy(one, name, length);
    one[length] = '\0';
    Klass* k = DsoHeap::resolve_class(current, program, one, CHECK_NULL);
    if (!k->is_interface()) {
      THROW_MSG_NULL(vmSymbols::java_lang_IncompatibleClassChangeError(),
                     err_msg("djava: %s, an interface of a proxy another node sent, is a class "
                             "on this node", k->external_name()));
    }
    interfaces->obj_at_put(i, k->java_mirror());
    name += length + 1;
  }
  JavaCallArguments args;
  args.push_oop(loader);
  args.push_oop(interfaces);
  oop made = DsoNode::call_runtime("djava/runtime/Proxies", "classFor",
                                   "(Ljava/lang/ClassLoader;[Ljava/lang/Class;)Ljava/lang/Class;",
                                   &args, CHECK_NULL);
  Klass* k = made != NULL ? java_lang_Class::as_Klass(made) : NULL;
  const char* got = k != NULL && is_proxy_class(k) ? DsoProxy::descriptor(InstanceKlass::cast(k))
                                                   : NULL;
  if (got == NULL || strcmp(got, descriptor) != 0) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: Proxy made %s for %s", got != NULL ? got : "no proxy class",
                           descriptor));
  }
  return k;
}
