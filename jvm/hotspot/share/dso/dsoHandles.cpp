/*
 * djava: java.lang.invoke values travel by name (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHandles.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoNode.hpp"
#include "memory/resourceArea.hpp"
#include "oops/fieldStreams.inline.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/method.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "utilities/ostream.hpp"

namespace {

// The byte offset of ik's (or a superclass's) instance field `name`, or -1.
int instance_field_offset(InstanceKlass* ik, const char* name) {
  Symbol* sym = SymbolTable::probe(name, (int)strlen(name));
  for (InstanceKlass* k = ik; sym != NULL && k != NULL; k = k->java_super()) {
    for (JavaFieldStream fs(k); !fs.done(); fs.next()) {
      if (!fs.access_flags().is_static() && fs.name() == sym) {
        return fs.offset();
      }
    }
  }
  return -1;
}

// The name of the field of k (or a superclass, for an instance field) at
// offset, static or not; NULL if none.
Symbol* field_at(InstanceKlass* ik, int offset, bool is_static) {
  for (InstanceKlass* k = ik; k != NULL; k = is_static ? NULL : k->java_super()) {
    for (JavaFieldStream fs(k); !fs.done(); fs.next()) {
      if (fs.access_flags().is_static() == is_static && fs.offset() == offset) {
        return fs.name();
      }
    }
  }
  return NULL;
}

const char* class_name(oop mirror) {
  Klass* k = mirror != NULL ? java_lang_Class::as_Klass(mirror) : NULL;
  return k != NULL ? k->name()->as_C_string() : NULL;
}

// The element type's letter of a VarHandle<Type>s$Array of primitives.
char primitive_array_letter(const char* vh_class) {
  static const struct { const char* type; char letter; } arrays[] = {
    { "Booleans", 'Z' }, { "Bytes", 'B' }, { "Shorts", 'S' }, { "Chars", 'C' },
    { "Ints", 'I' }, { "Longs", 'J' }, { "Floats", 'F' }, { "Doubles", 'D' },
  };
  for (const auto& a : arrays) {
    char expected[64];
    jio_snprintf(expected, sizeof(expected), "java/lang/invoke/VarHandle%s$Array", a.type);
    if (strcmp(vh_class, expected) == 0) {
      return a.letter;
    }
  }
  return 0;
}

bool ends_with(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char* var_handle_name(oop vh) {
  InstanceKlass* ik = InstanceKlass::cast(vh->klass());
  const char* own = ik->name()->as_C_string();
  if (strncmp(own, "java/lang/invoke/VarHandle", 26) != 0) {
    return NULL;
  }
  int exact_at = instance_field_offset(ik, "exact");
  int exact = exact_at >= 0 && vh->bool_field(exact_at) ? 1 : 0;
  stringStream st;
  if (ends_with(own, "$FieldInstanceReadOnly") || ends_with(own, "$FieldInstanceReadWrite")) {
    int receiver_at = instance_field_offset(ik, "receiverType");
    int offset_at = instance_field_offset(ik, "fieldOffset");
    if (receiver_at < 0 || offset_at < 0) {
      return NULL;
    }
    oop receiver = vh->obj_field(receiver_at);
    Klass* rk = receiver != NULL ? java_lang_Class::as_Klass(receiver) : NULL;
    if (rk == NULL || !rk->is_instance_klass()) {
      return NULL;
    }
    Symbol* field = field_at(InstanceKlass::cast(rk), (int)vh->long_field(offset_at), false);
    if (field == NULL) {
      return NULL;
    }
    st.print("H:V:I:%d:%s:%s", exact, rk->name()->as_C_string(), field->as_C_string());
  } else if (ends_with(own, "$FieldStaticReadOnly") || ends_with(own, "$FieldStaticReadWrite")) {
    int base_at = instance_field_offset(ik, "base");
    int offset_at = instance_field_offset(ik, "fieldOffset");
    if (base_at < 0 || offset_at < 0) {
      return NULL;
    }
    oop base = vh->obj_field(base_at);
    Klass* holder = base != NULL && java_lang_Class::is_instance(base) ? java_lang_Class::as_Klass(base)
                                                                        : NULL;
    if (holder == NULL || !holder->is_instance_klass()) {
      return NULL;
    }
    Symbol* field = field_at(InstanceKlass::cast(holder), (int)vh->long_field(offset_at), true);
    if (field == NULL) {
      return NULL;
    }
    st.print("H:V:S:%d:%s:%s", exact, holder->name()->as_C_string(), field->as_C_string());
  } else if (ends_with(own, "$Array")) {
    char letter = primitive_array_letter(own);
    if (letter != 0) {
      st.print("H:V:A:%d:[%c:", exact, letter);
    } else {
      int array_at = instance_field_offset(ik, "arrayType");
      const char* array = array_at >= 0 ? class_name(vh->obj_field(array_at)) : NULL;
      if (array == NULL) {
        return NULL;
      }
      st.print("H:V:A:%d:%s:", exact, array);
    }
  } else {
    return NULL;  // a view of byte arrays or buffers, a memory access handle
  }
  return st.as_string();
}

const char* method_handle_name(oop mh) {
  if (!java_lang_invoke_DirectMethodHandle::is_instance(mh)) {
    return NULL;  // bound, adapted, ...: made of other handles and lambda forms
  }
  oop member = java_lang_invoke_DirectMethodHandle::member(mh);
  if (member == NULL) {
    return NULL;
  }
  oop clazz = java_lang_invoke_MemberName::clazz(member);
  oop name = java_lang_invoke_MemberName::name(member);
  oop type = java_lang_invoke_MemberName::type(member);
  const char* holder = class_name(clazz);
  if (holder == NULL || name == NULL || type == NULL || !java_lang_String::is_instance(name)) {
    return NULL;
  }
  int kind = (java_lang_invoke_MemberName::flags(member) >> java_lang_invoke_MemberName::MN_REFERENCE_KIND_SHIFT) &
             java_lang_invoke_MemberName::MN_REFERENCE_KIND_MASK;
  stringStream st;
  st.print("H:M:%d:%s:%s:", kind, holder, java_lang_String::as_utf8_string(name));
  if (java_lang_invoke_MethodType::is_instance(type)) {
    java_lang_invoke_MethodType::print_signature(type, &st);
  } else if (java_lang_Class::is_instance(type)) {
    java_lang_Class::print_signature(type, &st);
  } else {
    return NULL;  // not resolved: no handle is made of such a member
  }
  return st.as_string();
}

// A Field, Method or Constructor: its member by name, and whether it was made
// accessible (AccessibleObject.setAccessible), which the copies keep.
const char* reflection_name(oop v) {
  Klass* k = v->klass();
  int accessible = java_lang_reflect_AccessibleObject::override(v) ? 1 : 0;
  stringStream st;
  if (k == vmClasses::reflect_Field_klass()) {
    const char* holder = class_name(java_lang_reflect_Field::clazz(v));
    oop name = java_lang_reflect_Field::name(v);
    if (holder == NULL || name == NULL || !java_lang_String::is_instance(name)) {
      return NULL;
    }
    st.print("H:F:%d:%s:%s", accessible, holder, java_lang_String::as_utf8_string(name));
    return st.as_string();
  }
  bool is_method = k == vmClasses::reflect_Method_klass();
  oop mirror = is_method ? java_lang_reflect_Method::clazz(v)
                         : java_lang_reflect_Constructor::clazz(v);
  int slot = is_method ? java_lang_reflect_Method::slot(v)
                       : java_lang_reflect_Constructor::slot(v);
  Klass* holder = mirror != NULL ? java_lang_Class::as_Klass(mirror) : NULL;
  if (holder == NULL || !holder->is_instance_klass()) {
    return NULL;
  }
  Method* m = InstanceKlass::cast(holder)->method_with_idnum(slot);
  if (m == NULL) {
    return NULL;
  }
  if (is_method) {
    st.print("H:R:%d:%s:%s:%s", accessible, holder->name()->as_C_string(), m->name()->as_C_string(),
             m->signature()->as_C_string());
  } else {
    st.print("H:N:%d:%s:%s", accessible, holder->name()->as_C_string(),
             m->signature()->as_C_string());
  }
  return st.as_string();
}

}  // namespace

const char* DsoHandles::name_of(oop v) {
  Klass* k = v->klass();
  if (k == vmClasses::MethodType_klass()) {
    stringStream st;
    st.print("H:T:");
    java_lang_invoke_MethodType::print_signature(v, &st);
    return st.as_string();
  }
  if (k->is_subclass_of(vmClasses::VarHandle_klass())) {
    return var_handle_name(v);
  }
  if (k->is_subclass_of(vmClasses::MethodHandle_klass())) {
    return method_handle_name(v);
  }
  if (k == vmClasses::reflect_Field_klass() || k == vmClasses::reflect_Method_klass() ||
      k == vmClasses::reflect_Constructor_klass()) {
    return reflection_name(v);
  }
  return NULL;
}

oop DsoHandles::resolve(JavaThread* current, uint64_t program, const char* name, TRAPS) {
  Handle loader(current, DsoHeap::loader_of_program(program));
  Handle text = java_lang_String::create_from_str(name, CHECK_NULL);
  JavaCallArguments args;
  args.push_oop(text);
  args.push_oop(loader);
  return DsoNode::call_runtime("djava/runtime/Handles", "resolve",
                              "(Ljava/lang/String;Ljava/lang/ClassLoader;)Ljava/lang/Object;",
                              &args, THREAD);
}
