/*
 * djava: values of the JDK shared by name (see the header).
 */

#include "precompiled.hpp"
#include "classfile/altHashing.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHandles.hpp"
#include "dso/dsoNamedValues.hpp"
#include "dso/dsoNode.hpp"
#include "memory/resourceArea.hpp"
#include "memory/universe.hpp"
#include "oops/fieldStreams.inline.hpp"
#include "oops/instanceKlass.inline.hpp"
#include "oops/klass.inline.hpp"
#include "oops/objArrayKlass.hpp"
#include "oops/objArrayOop.inline.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/fieldDescriptor.inline.hpp"
#include "runtime/globals_extension.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "utilities/formatBuffer.hpp"
#include "utilities/ostream.hpp"

namespace {

struct BoxCache {
  BasicType type;
  const char* box_class;    // internal name
  const char* cache_class;  // its nested cache, whose static "cache" array holds the boxes
  jlong low;                // the value of cache[0]
  const char* value_of_signature;
};

const BoxCache box_caches[] = {
  { T_INT,   "java/lang/Integer",   "java/lang/Integer$IntegerCache",     -128, "(I)Ljava/lang/Integer;" },
  { T_LONG,  "java/lang/Long",      "java/lang/Long$LongCache",           -128, "(J)Ljava/lang/Long;" },
  { T_SHORT, "java/lang/Short",     "java/lang/Short$ShortCache",         -128, "(S)Ljava/lang/Short;" },
  { T_BYTE,  "java/lang/Byte",      "java/lang/Byte$ByteCache",           -128, "(B)Ljava/lang/Byte;" },
  { T_CHAR,  "java/lang/Character", "java/lang/Character$CharacterCache",    0, "(C)Ljava/lang/Character;" },
};

// djava.runtime's class holding each node's own standard streams.
const char* const STANDARD_STREAMS = "djava/runtime/StandardStreams";

bool is_jdk_class(Klass* k) {
  oop loader = k->class_loader();
  return loader == NULL || SystemDictionary::is_platform_class_loader(loader);
}

// A loaded class of the JDK by name, without loading anything.
InstanceKlass* loaded_jdk_class(const char* name, size_t length) {
  Symbol* sym = SymbolTable::probe(name, (int)length);
  if (sym == NULL) {
    return NULL;
  }
  InstanceKlass* ik = SystemDictionary::find_instance_klass(sym, Handle(), Handle());
  if (ik == NULL) {
    ik = SystemDictionary::find_instance_klass(sym, Handle(Thread::current(),
                                                            SystemDictionary::java_platform_loader()),
                                               Handle());
  }
  return ik;
}

// The name of a static final reference field of holder that holds v.
Symbol* static_final_holding(InstanceKlass* holder, oop v) {
  if (holder == NULL || !holder->is_initialized()) {
    return NULL;
  }
  oop mirror = holder->java_mirror();
  for (JavaFieldStream fs(holder); !fs.done(); fs.next()) {
    AccessFlags flags = fs.access_flags();
    if (flags.is_static() && flags.is_final() &&
        is_reference_type(Signature::basic_type(fs.signature())) &&
        mirror->obj_field(fs.offset()) == v) {
      return fs.name();
    }
  }
  return NULL;
}

// kind ':' class ':' rest, in the resource area.
const char* make_name(char kind, const char* klass, const char* rest) {
  size_t length = strlen(klass) + strlen(rest) + 4;
  char* name = NEW_RESOURCE_ARRAY(char, length);
  jio_snprintf(name, length, "%c:%s:%s", kind, klass, rest);
  return name;
}

const char* static_name(InstanceKlass* holder, Symbol* field) {
  return make_name('S', holder->name()->as_C_string(), field->as_C_string());
}

// The offset in holder's mirror of its static reference field `name`, or -1.
int static_reference_offset(InstanceKlass* holder, Symbol* name) {
  for (JavaFieldStream fs(holder); !fs.done(); fs.next()) {
    if (fs.access_flags().is_static() && fs.name() == name &&
        is_reference_type(Signature::basic_type(fs.signature()))) {
      return fs.offset();
    }
  }
  return -1;
}

const char* box_name(oop v) {
  jvalue value;
  BasicType type = java_lang_boxing_object::get_value(v, &value);
  for (const BoxCache& c : box_caches) {
    if (c.type != type) {
      continue;
    }
    jlong n = type == T_INT ? value.i : type == T_LONG ? value.j : type == T_SHORT ? value.s
            : type == T_BYTE ? value.b : value.c;
    InstanceKlass* cache = loaded_jdk_class(c.cache_class, strlen(c.cache_class));
    if (cache == NULL || !cache->is_initialized()) {
      return NULL;
    }
    Symbol* cache_field = SymbolTable::probe("cache", 5);
    int offset = cache_field != NULL ? static_reference_offset(cache, cache_field) : -1;
    if (offset < 0) {
      return NULL;
    }
    objArrayOop boxes = (objArrayOop)cache->java_mirror()->obj_field(offset);
    jlong index = n - c.low;
    if (boxes == NULL || index < 0 || index >= boxes->length() || boxes->obj_at((int)index) != v) {
      return NULL;  // a box of its own (new Integer(n)): shared as an object
    }
    char number[24];
    jio_snprintf(number, sizeof(number), JLONG_FORMAT, n);
    return make_name('B', c.box_class, number);
  }
  return NULL;
}

// "S:" or "B:", the class and the rest; false if malformed.
bool split(const char* name, char* kind, char* klass, size_t klass_capacity, const char** rest) {
  if (name[0] == '\0' || name[1] != ':') {
    return false;
  }
  *kind = name[0];
  const char* start = name + 2;
  const char* colon = strrchr(start, ':');
  if (colon == NULL || (size_t)(colon - start) >= klass_capacity || colon == start) {
    return false;
  }
  memcpy(klass, start, colon - start);
  klass[colon - start] = '\0';
  *rest = colon + 1;
  return true;
}

// Whether ik is the class `name` (internal form) or a subclass of it.
bool is_subclass_named(InstanceKlass* ik, const char* name) {
  for (InstanceKlass* k = ik; k != NULL; k = k->java_super()) {
    if (k->name()->equals(name)) {
      return true;
    }
  }
  return false;
}

}  // namespace

namespace {

// Seeds of stable_identity_hash, one per kind of value (any fixed numbers:
// every node must use the same).
const uint64_t primitive_seed = 0x646a6176612d5031ULL;
const uint64_t class_seed = 0x646a6176612d4331ULL;
const uint64_t enum_seed = 0x646a6176612d4531ULL;

uint32_t symbol_hash(uint64_t seed, Symbol* name) {
  return AltHashing::halfsiphash_32(seed, name->bytes(), name->utf8_length());
}

// java.lang.Enum's field `name`, found once (-1 until then).
int enum_name_offset = -1;

// The enum class of the JDK that k is (or whose constant k's class body is
// for), or NULL.
InstanceKlass* jdk_enum_super(Klass* k) {
  for (Klass* s = k->super(); s != NULL; s = s->super()) {
    if (s->name()->equals("java/lang/Enum")) {
      if (enum_name_offset < 0) {
        fieldDescriptor fd;
        if (InstanceKlass::cast(s)->find_local_field(vmSymbols::name_name(),
                                                     vmSymbols::string_signature(), &fd)) {
          enum_name_offset = fd.offset();
        }
      }
      return InstanceKlass::cast(s);
    }
  }
  return NULL;
}

}  // namespace

intptr_t DsoNamedValues::stable_identity_hash(oop v) {
  if (!DistributedJava || !vmClasses::Class_klass_loaded()) {
    return 0;
  }
  Klass* k = v->klass();
  uint32_t h;
  if (k == vmClasses::Class_klass()) {
    Klass* of = java_lang_Class::as_Klass(v);
    if (of == NULL) {
      const char* type = type2name(java_lang_Class::primitive_type(v));
      h = AltHashing::halfsiphash_32(primitive_seed, type, (int)strlen(type));
    } else {
      Klass* bottom = of->is_objArray_klass() ? ObjArrayKlass::cast(of)->bottom_klass() : of;
      // A class the program defined is shared with its statics (its hash
      // is its chunk's); a hidden class's name differs on every node.
      if ((bottom->is_instance_klass() &&
           (!is_jdk_class(bottom) || InstanceKlass::cast(bottom)->is_hidden()))) {
        return 0;
      }
      h = symbol_hash(class_seed, of->name());
    }
  } else if (k->is_instance_klass() && is_jdk_class(k) && jdk_enum_super(k) != NULL &&
             enum_name_offset > 0) {
    oop name = v->obj_field(enum_name_offset);
    if (name == NULL) {
      return 0;  // still being constructed
    }
    h = symbol_hash(enum_seed ^ java_lang_String::hash_code(name), k->name());
  } else {
    return 0;
  }
  intptr_t hash = (intptr_t)h & markWord::hash_mask;
  return hash != 0 ? hash : 0xBAD;
}

const char* DsoNamedValues::name_of(oop v) {
  Klass* k = v->klass();
  if (!k->is_instance_klass() || !is_jdk_class(k)) {
    return NULL;
  }
  // The system thread group, the root, holds each node's own threads; a
  // program's groups (main's and those under it) are shared objects.
  if (v == Universe::system_thread_group()) {
    return "G:system";
  }
  const char* handle = DsoHandles::name_of(v);
  if (handle != NULL) {
    return handle;
  }
  if (java_lang_boxing_object::is_instance(v)) {
    const char* box = box_name(v);
    if (box != NULL) {
      return box;
    }
  }
  InstanceKlass* ik = InstanceKlass::cast(k);
  // The standard streams: each node's own, which on a thread server are
  // the launcher's console and input (djava.runtime's ConsoleRouter and
  // InputRouter), so a stream a program keeps in a field prints there too.
  // First by the streams the node started with (StandardStreams), not by
  // what System.out holds now: a program that kept the launcher's stdout
  // and then called System.setOut must still print to stdout through it.
  // Then System.in, out and err as they are now (a thread server's routers,
  // or what a program set): each node's own System.out, which on a server
  // prints to whatever the launcher's is.
  if (is_subclass_named(ik, "java/io/PrintStream") || is_subclass_named(ik, "java/io/InputStream")) {
    InstanceKlass* streams = loaded_jdk_class(STANDARD_STREAMS, strlen(STANDARD_STREAMS));
    Symbol* standard = static_final_holding(streams, v);
    if (standard != NULL) {
      return static_name(streams, standard);
    }
    standard = static_final_holding(vmClasses::System_klass(), v);
    if (standard != NULL) {
      return static_name(vmClasses::System_klass(), standard);
    }
  }
  if (!DsoNode::is_thread_server() && is_subclass_named(ik, "java/util/concurrent/ForkJoinPool")) {
    // The launcher's common pool is the program's (its parallelism is the
    // cluster's, DsoProcessors): the workers it ships to thread servers must
    // work on it, not on each server's own.
    return NULL;
  }
  Symbol* field = static_final_holding(ik, v);
  if (field != NULL) {
    return static_name(ik, field);
  }
  // An enum constant with a body is an instance of a subclass.
  InstanceKlass* super = ik->java_super();
  if (super != NULL && super != vmClasses::Object_klass()) {
    field = static_final_holding(super, v);
    if (field != NULL) {
      return static_name(super, field);
    }
  }
  // A singleton of a nested class, held by its outer class
  // (Collections.EMPTY_LIST is a Collections$EmptyList).
  const char* own = ik->name()->as_C_string();
  const char* dollar = strrchr(own, '$');
  if (dollar != NULL) {
    InstanceKlass* outer = loaded_jdk_class(own, (size_t)(dollar - own));
    field = static_final_holding(outer, v);
    if (field != NULL) {
      return static_name(outer, field);
    }
  }
  return NULL;
}

oop DsoNamedValues::resolve(JavaThread* current, uint64_t program, const char* name, TRAPS) {
  if (DsoHandles::is_handle_name(name)) {
    return DsoHandles::resolve(current, program, name, THREAD);
  }
  if (strcmp(name, "G:system") == 0) {
    return Universe::system_thread_group();
  }
  char kind;
  char klass[512];
  const char* rest;
  if (!split(name, &kind, klass, sizeof(klass), &rest) || (kind != 'S' && kind != 'B')) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: a malformed name of a JDK value: %s", name));
  }
  TempNewSymbol class_name = SymbolTable::new_symbol(klass);
  Klass* k = SystemDictionary::resolve_or_fail(class_name, Handle(), Handle(), true, CHECK_NULL);
  if (!k->is_instance_klass()) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: %s names no class of values", name));
  }
  InstanceKlass* ik = InstanceKlass::cast(k);
  ik->initialize(CHECK_NULL);
  if (kind == 'B') {
    for (const BoxCache& c : box_caches) {
      if (strcmp(c.box_class, klass) != 0) {
        continue;
      }
      char* end = NULL;
      jlong n = (jlong)strtoll(rest, &end, 10);
      if (end == rest || *end != '\0') {
        break;
      }
      JavaValue result(T_OBJECT);
      JavaCallArguments args;
      switch (c.type) {
        case T_LONG: args.push_long(n); break;
        default:     args.push_int((jint)n); break;
      }
      TempNewSymbol value_of = SymbolTable::new_symbol("valueOf");
      TempNewSymbol signature = SymbolTable::new_symbol(c.value_of_signature);
      JavaCalls::call_static(&result, ik, value_of, signature, &args, CHECK_NULL);
      return result.get_oop();
    }
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: a malformed name of a JDK value: %s", name));
  }
  TempNewSymbol field_name = SymbolTable::new_symbol(rest);
  int offset = static_reference_offset(ik, field_name);
  if (offset < 0) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: %s names no static field of this node's JDK", name));
  }
  return ik->java_mirror()->obj_field(offset);
}
