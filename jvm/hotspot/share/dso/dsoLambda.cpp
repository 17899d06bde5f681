/*
 * djava: objects of lambda classes travel between nodes (see the header).
 */

#include "precompiled.hpp"
#include "classfile/classLoaderData.inline.hpp"
#include "classfile/dictionary.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoLambda.hpp"
#include "dso/dsoNode.hpp"
#include "interpreter/bootstrapInfo.hpp"
#include "interpreter/bytecode.hpp"
#include "interpreter/bytecodeStream.hpp"
#include "logging/log.hpp"
#include "memory/oopFactory.hpp"
#include "memory/resourceArea.hpp"
#include "memory/universe.hpp"
#include "oops/constantPool.inline.hpp"
#include "oops/cpCache.inline.hpp"
#include "oops/fieldStreams.inline.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/klass.inline.hpp"
#include "oops/objArrayOop.inline.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/atomic.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "runtime/os.hpp"
#include "runtime/thread.inline.hpp"
#include "utilities/growableArray.hpp"
#include "utilities/ostream.hpp"

namespace {

const char descriptor_prefix[] = "djava-lambda:";
const size_t descriptor_prefix_length = sizeof(descriptor_prefix) - 1;
const char lambda_mark[] = "$$Lambda$";

// ---- a call site as text -----------------------------------------------------------

bool is_method_handle(ConstantPool* cp, int index) {
  return cp->tag_at(index).is_method_handle() || cp->tag_at(index).is_method_handle_in_error();
}

bool is_method_type(ConstantPool* cp, int index) {
  return cp->tag_at(index).is_method_type() || cp->tag_at(index).is_method_type_in_error();
}

// Appends invokedynamic i of cp as a descriptor's site part (NAME SIG|BSM|
// ARG...); false if LambdaMetafactory does not bootstrap it.
bool render_site(ConstantPool* cp, int i, outputStream* st) {
  int bsm = cp->bootstrap_method_ref_index_at(i);
  if (!is_method_handle(cp, bsm) || cp->method_handle_ref_kind_at(bsm) != JVM_REF_invokeStatic) {
    return false;
  }
  int member = cp->method_handle_index_at(bsm);
  Symbol* bsm_name = cp->uncached_name_ref_at(member);
  if (!cp->uncached_klass_ref_at_noresolve(member)->equals("java/lang/invoke/LambdaMetafactory") ||
      !(bsm_name->equals("metafactory") || bsm_name->equals("altMetafactory"))) {
    return false;
  }
  st->print("%s %s|%s", cp->uncached_name_ref_at(i)->as_C_string(),
            cp->uncached_signature_ref_at(i)->as_C_string(), bsm_name->as_C_string());
  for (int j = 0; j < cp->bootstrap_argument_count_at(i); j++) {
    int a = cp->bootstrap_argument_index_at(i, j);
    constantTag tag = cp->tag_at(a);
    if (is_method_type(cp, a)) {
      st->print("|T%s", cp->method_type_signature_at(a)->as_C_string());
    } else if (is_method_handle(cp, a)) {
      int m = cp->method_handle_index_at(a);
      st->print("|H%d:%s.%s%s", cp->method_handle_ref_kind_at(a),
                cp->uncached_klass_ref_at_noresolve(m)->as_C_string(),
                cp->uncached_name_ref_at(m)->as_C_string(),
                cp->uncached_signature_ref_at(m)->as_C_string());
    } else if (tag.is_int()) {
      st->print("|I%d", cp->int_at(a));
    } else if (tag.is_klass() || tag.is_unresolved_klass()) {
      st->print("|C%s", cp->klass_name_at(a)->as_C_string());
    } else {
      st->print("|?%d", (int)tag.value());
    }
  }
  return true;
}

// ---- which call site made a lambda class (no safepoint) ------------------------------

// Whether the class named c is refc or a superclass of it (resolved: the
// site that made a lambda class ran, so its handle's class is resolved).
bool is_class_or_super(Klass* refc, Symbol* c) {
  for (Klass* s = refc; s != NULL; s = s->super()) {
    if (s->name() == c) return true;
  }
  return false;
}

// Whether method m of a lambda class invokes the method of handle constant
// mh of host_cp, or a method handle from its class data (then it cannot
// tell). The class names a static or special method by the class declaring
// it, which may be a superclass of the handle's.
bool invokes_method(Method* m, ConstantPool* host_cp, int mh) {
  int kind = host_cp->method_handle_ref_kind_at(mh);
  int member = host_cp->method_handle_index_at(mh);
  Symbol* klass = host_cp->uncached_klass_ref_at_noresolve(member);
  Symbol* name = host_cp->uncached_name_ref_at(member);
  Symbol* sig = host_cp->uncached_signature_ref_at(member);
  int klass_index = host_cp->uncached_klass_ref_index_at(member);
  Klass* refc = (kind == JVM_REF_invokeStatic || kind == JVM_REF_invokeSpecial) &&
                host_cp->tag_at(klass_index).is_klass() ? host_cp->resolved_klass_at(klass_index) : NULL;
  methodHandle method(Thread::current(), m);
  BytecodeStream bcs(method);
  for (Bytecodes::Code code = bcs.next(); code >= 0; code = bcs.next()) {
    if (!Bytecodes::is_invoke(code) || code == Bytecodes::_invokedynamic) {
      continue;
    }
    Bytecode_invoke invoke(method, bcs.bci());
    Symbol* c = invoke.klass();
    Symbol* n = invoke.name();
    if (n == name && invoke.signature() == sig && (c == klass || is_class_or_super(refc, c))) {
      return true;
    }
    if (c == vmSymbols::java_lang_invoke_MethodHandle() && n == vmSymbols::invokeExact_name()) {
      return true;
    }
  }
  return false;
}

// Whether invokedynamic i of the host's cp could have made k, whose
// captured arguments and interface give shape "(fields)Linterface;".
bool could_have_made(ConstantPool* cp, int i, InstanceKlass* k, const char* shape) {
  if (!cp->uncached_signature_ref_at(i)->equals(shape) || cp->bootstrap_argument_count_at(i) < 3) {
    return false;
  }
  int sam_type = cp->bootstrap_argument_index_at(i, 0);
  int impl = cp->bootstrap_argument_index_at(i, 1);
  if (!is_method_type(cp, sam_type) || !is_method_handle(cp, impl)) {
    return false;
  }
  Method* m = k->find_method(cp->uncached_name_ref_at(i), cp->method_type_signature_at(sam_type));
  return m != NULL && invokes_method(m, cp, impl);
}

// When several distinct sites of the host could have made a class (method
// references that differ only in their instantiated types, or in being
// serializable), the class's own code tells: the checkcasts of its SAM
// method, predicted for each site as LambdaMetafactory generates them
// (TypeConvertingMethodAdapter.convertType), and writeReplace.

char* copy_text(const char* start, size_t length) {
  char* text = NEW_RESOURCE_ARRAY(char, length + 1);
  memcpy(text, start, length);
  text[length] = '\0';
  return text;
}

// The parameter and return descriptors of method descriptor sig.
void split_signature(Symbol* sig, GrowableArray<const char*>* params, const char** ret) {
  const char* p = sig->as_C_string() + 1;
  while (*p != ')' && *p != '\0') {
    const char* start = p;
    while (*p == '[') p++;
    if (*p == 'L') p = strchr(p, ';');
    p++;
    params->append(copy_text(start, (size_t)(p - start)));
  }
  *ret = *p == ')' ? p + 1 : p;
}

bool is_primitive(const char* d) { return d[0] != 'L' && d[0] != '['; }

const char* const wrappers[][2] = {
  { "Z", "java/lang/Boolean" }, { "B", "java/lang/Byte" },    { "S", "java/lang/Short" },
  { "C", "java/lang/Character" }, { "I", "java/lang/Integer" }, { "J", "java/lang/Long" },
  { "F", "java/lang/Float" },   { "D", "java/lang/Double" },  { "V", "java/lang/Void" },
};

// The wrapper class of a primitive descriptor.
const char* wrapper_name(const char* primitive) {
  for (size_t i = 0; i < ARRAY_SIZE(wrappers); i++) {
    if (strcmp(wrappers[i][0], primitive) == 0) return wrappers[i][1];
  }
  return "java/lang/Object";
}

// The primitive a descriptor of a wrapper class wraps, or NULL.
const char* wrapped_primitive(const char* d) {
  for (size_t i = 0; i < ARRAY_SIZE(wrappers); i++) {
    size_t n = strlen(wrappers[i][1]);
    if (d[0] == 'L' && strncmp(d + 1, wrappers[i][1], n) == 0 && d[n + 1] == ';' && d[n + 2] == '\0') {
      return wrappers[i][0];
    }
  }
  return NULL;
}

// A descriptor or internal name as an internal name.
const char* internal_name(const char* d) {
  size_t n = strlen(d);
  return d[0] == 'L' && d[n - 1] == ';' ? copy_text(d + 1, n - 2) : d;
}

void cast(const char* from, const char* to, GrowableArray<const char*>* casts) {
  const char* ns = internal_name(from);
  const char* nt = internal_name(to);
  if (strcmp(nt, ns) != 0 && strcmp(nt, "java/lang/Object") != 0) {
    casts->append(nt);
  }
}

void convert_type(const char* arg, const char* target, const char* functional,
                  GrowableArray<const char*>* casts) {
  if (strcmp(arg, target) == 0 && strcmp(arg, functional) == 0) return;
  if (strcmp(arg, "V") == 0 || strcmp(target, "V") == 0) return;
  if (is_primitive(arg)) {
    if (!is_primitive(target) && wrapped_primitive(target) == NULL) {
      cast(wrapper_name(arg), target, casts);  // boxed, then cast
    }
    return;
  }
  const char* source = arg;
  if (!is_primitive(functional)) {
    source = functional;
    cast(arg, functional, casts);
  }
  if (!is_primitive(target)) {
    cast(source, target, casts);
  } else if (wrapped_primitive(source) == NULL) {
    bool number = strchr("BSIJFD", target[0]) != NULL;
    cast(source, number ? "java/lang/Number" : wrapper_name(target), casts);
  }
}

// Whether site i is exactly what k's code shows.
bool fits_exactly(ConstantPool* cp, int i, InstanceKlass* k) {
  int sam_type = cp->bootstrap_argument_index_at(i, 0);
  int impl = cp->bootstrap_argument_index_at(i, 1);
  int dynamic_type = cp->bootstrap_argument_index_at(i, 2);
  if (!is_method_type(cp, dynamic_type)) return false;
  GrowableArray<const char*> sam, impl_params, dynamic, captured;
  const char *sam_return, *impl_return, *dynamic_return, *factory_return;
  split_signature(cp->method_type_signature_at(sam_type), &sam, &sam_return);
  split_signature(cp->method_type_signature_at(dynamic_type), &dynamic, &dynamic_return);
  split_signature(cp->uncached_signature_ref_at(i), &captured, &factory_return);
  int kind = cp->method_handle_ref_kind_at(impl);
  int member = cp->method_handle_index_at(impl);
  // The implementation's MethodHandle type: a receiver first, a constructor's class returned.
  Symbol* receiver = kind == JVM_REF_invokeSpecial ? cp->pool_holder()->name()
                                                   : cp->uncached_klass_ref_at_noresolve(member);
  if (kind == JVM_REF_invokeVirtual || kind == JVM_REF_invokeInterface || kind == JVM_REF_invokeSpecial) {
    stringStream d;
    d.print("L%s;", receiver->as_C_string());
    impl_params.append(d.as_string());
  }
  split_signature(cp->uncached_signature_ref_at(member), &impl_params, &impl_return);
  if (kind == JVM_REF_newInvokeSpecial) {
    stringStream d;
    d.print("L%s;", cp->uncached_klass_ref_at_noresolve(member)->as_C_string());
    impl_return = d.as_string();
  }
  if (dynamic.length() != sam.length() || impl_params.length() != captured.length() + sam.length()) {
    return false;
  }
  GrowableArray<const char*> predicted;
  for (int p = 0; p < sam.length(); p++) {
    convert_type(sam.at(p), impl_params.at(captured.length() + p), dynamic.at(p), &predicted);
  }
  convert_type(impl_return, sam_return, sam_return, &predicted);
  // What the class's SAM method does.
  Method* m = k->find_method(cp->uncached_name_ref_at(i), cp->method_type_signature_at(sam_type));
  methodHandle mh(Thread::current(), m);
  GrowableArray<const char*> seen;
  BytecodeStream bcs(mh);
  for (Bytecodes::Code code = bcs.next(); code >= 0; code = bcs.next()) {
    if (code == Bytecodes::_checkcast) {
      seen.append(k->constants()->klass_name_at(bcs.get_index_u2())->as_C_string());
    }
  }
  if (seen.length() != predicted.length()) return false;
  for (int p = 0; p < seen.length(); p++) {
    if (strcmp(seen.at(p), predicted.at(p)) != 0) return false;
  }
  // Serializable: altMetafactory's FLAG_SERIALIZABLE gives it writeReplace.
  bool serializable = cp->uncached_name_ref_at(cp->method_handle_index_at(
                          cp->bootstrap_method_ref_index_at(i)))->equals("altMetafactory") &&
                      cp->bootstrap_argument_count_at(i) > 3 &&
                      cp->tag_at(cp->bootstrap_argument_index_at(i, 3)).is_int() &&
                      (cp->int_at(cp->bootstrap_argument_index_at(i, 3)) & 1) != 0;
  bool has_write_replace = false;
  for (int j = 0; j < k->methods()->length(); j++) {
    has_write_replace |= k->methods()->at(j)->name()->equals("writeReplace");
  }
  return serializable == has_write_replace;
}

// The descriptor of hidden class k (C heap), or NULL with why in reason.
char* describe(InstanceKlass* k, char* reason, size_t reason_capacity) {
  ResourceMark rm;
  const char* name = k->name()->as_C_string();
  const char* mark = NULL;
  for (const char* p = strstr(name, lambda_mark); p != NULL; p = strstr(p + 1, lambda_mark)) {
    mark = p;
  }
  if (mark == NULL || k->java_super() != vmClasses::Object_klass() ||
      k->local_interfaces()->length() == 0) {
    jio_snprintf(reason, reason_capacity, "its class is hidden and not a lambda's (one a program "
                 "defined with Lookup.defineHiddenClass), which another node cannot load by name");
    return NULL;
  }
  int host_length = (int)(mark - name);
  Symbol* host_name = SymbolTable::probe(name, host_length);
  Dictionary* dictionary = k->class_loader_data()->dictionary();
  InstanceKlass* host = host_name == NULL || dictionary == NULL ? NULL
      : dictionary->find(dictionary->compute_hash(host_name), host_name, Handle());
  if (host == NULL) {
    jio_snprintf(reason, reason_capacity, "it is a lambda of %.*s, a class its loader does not "
                 "know by that name (a hidden class?)", host_length, name);
    return NULL;
  }
  stringStream shape;
  shape.put('(');
  for (JavaFieldStream fs(k); !fs.done(); fs.next()) {
    if (!fs.access_flags().is_static()) {
      shape.print("%s", fs.signature()->as_C_string());
    }
  }
  shape.print(")L%s;", k->local_interfaces()->at(0)->name()->as_C_string());
  ConstantPool* cp = host->constants();
  GrowableArray<int> sites;
  GrowableArray<const char*> texts;
  bool distinct = false;
  for (int i = 1; i < cp->length(); i++) {
    constantTag tag = cp->tag_at(i);
    if (tag.is_long() || tag.is_double()) {
      i++;
      continue;
    }
    if (!tag.is_invoke_dynamic() || !could_have_made(cp, i, k, shape.base())) {
      continue;
    }
    stringStream site;
    if (render_site(cp, i, &site)) {
      distinct |= texts.length() > 0 && strcmp(texts.at(0), site.base()) != 0;
      sites.append(i);
      texts.append(site.as_string());
    }
  }
  if (sites.is_empty()) {
    jio_snprintf(reason, reason_capacity, "it is a lambda of %s, but none of that class's "
                 "LambdaMetafactory call sites matches it", host->external_name());
    return NULL;
  }
  const char* found = texts.at(0);
  if (distinct) {
    found = NULL;
    for (int j = 0; j < sites.length(); j++) {
      if (!fits_exactly(cp, sites.at(j), k)) {
        continue;
      }
      if (found != NULL && strcmp(found, texts.at(j)) != 0) {
        found = NULL;
        break;
      }
      found = texts.at(j);
    }
    if (found == NULL) {
      jio_snprintf(reason, reason_capacity, "it is a lambda of %s, and %d of that class's call "
                   "sites could have made its class; djava cannot tell which one did",
                   host->external_name(), sites.length());
      return NULL;
    }
  }
  stringStream descriptor;
  descriptor.print("%s%s|%s", descriptor_prefix, host->name()->as_C_string(), found);
  return os::strdup(descriptor.base(), mtInternal);
}

// What a hidden class is on the wire, one entry a class of this node, made
// once and never freed (a class's name and descriptor). Lock-free: read
// while objects are encoded, where nothing may safepoint. An entry is
// matched by its class and that class's name, so a class unloaded and
// another made at its address (a new counter in its name) never matches.
struct NameEntry : public CHeapObj<mtInternal> {
  Klass* klass;
  char* hidden_name;
  char* descriptor;  // NULL: cannot be shared ...
  char* reason;      // ... because
  NameEntry* next;
};

const int name_buckets = 256;
NameEntry* volatile names[name_buckets];

NameEntry* volatile* bucket_of(Klass* k) {
  return &names[(((uintptr_t)k) >> 4) % name_buckets];
}

NameEntry* find_name(Klass* k) {
  for (NameEntry* e = Atomic::load_acquire(bucket_of(k)); e != NULL; e = e->next) {
    if (e->klass == k && k->name()->equals(e->hidden_name)) {
      return e;
    }
  }
  return NULL;
}

void add_name(NameEntry* e) {
  NameEntry* volatile* bucket = bucket_of(e->klass);
  for (;;) {
    NameEntry* head = Atomic::load(bucket);
    e->next = head;
    if (Atomic::cmpxchg(bucket, head, e) == head) {
      return;
    }
  }
}

NameEntry* name_entry(InstanceKlass* k) {
  NameEntry* e = find_name(k);
  if (e != NULL) {
    return e;
  }
  char reason[512];
  e = new NameEntry();
  e->klass = k;
  {
    ResourceMark rm;
    e->hidden_name = os::strdup(k->name()->as_C_string(), mtInternal);
  }
  e->descriptor = describe(k, reason, sizeof(reason));
  e->reason = e->descriptor == NULL ? os::strdup(reason, mtInternal) : NULL;
  e->next = NULL;
  // Two threads may describe one class at once: both entries say the same.
  add_name(e);
  if (e->descriptor != NULL) {
    ResourceMark rm;
    log_debug(dso)("lambda class %s is %s", e->hidden_name, e->descriptor);
  }
  return e;
}

// Invokedynamic of host whose site part is site; 0 if none.
int find_site(InstanceKlass* host, const char* site) {
  ResourceMark rm;
  ConstantPool* cp = host->constants();
  for (int i = 1; i < cp->length(); i++) {
    constantTag tag = cp->tag_at(i);
    if (tag.is_long() || tag.is_double()) {
      i++;
      continue;
    }
    if (!tag.is_invoke_dynamic()) {
      continue;
    }
    stringStream st;
    if (render_site(cp, i, &st) && strcmp(st.base(), site) == 0) {
      return i;
    }
  }
  return 0;
}

Klass* class_made_by(JavaThread* current, Handle target, TRAPS);

// The class of the objects invokedynamic site of host makes: as this node
// linked it if its code ran the site here already (the same class as its
// own lambdas of the site), else linked as the interpreter links it,
// without recording it in host's constant pool cache.
Klass* link_site(JavaThread* current, InstanceKlass* host, int site, TRAPS) {
  constantPoolHandle cp(current, host->constants());
  ConstantPoolCache* cache = cp->cache();
  for (int j = 0; cache != NULL && j < cache->length(); j++) {
    ConstantPoolCacheEntry* e = cache->entry_at(j);
    if (e->constant_pool_index() == site && e->bytecode_1() == Bytecodes::_invokedynamic) {
      Handle linked(current, e->appendix_if_resolved(cp));
      if (linked.not_null()) {
        return class_made_by(current, linked, THREAD);
      }
    }
  }
  BootstrapInfo bootstrap(cp, site);
  bootstrap.resolve_bsm(CHECK_NULL);
  objArrayHandle appendix = oopFactory::new_objArray_handle(vmClasses::Object_klass(), 1, CHECK_NULL);
  JavaCallArguments link_args;
  link_args.push_oop(Handle(current, host->java_mirror()));
  link_args.push_int(site);
  link_args.push_oop(bootstrap.bsm());
  link_args.push_oop(bootstrap.name_arg());
  link_args.push_oop(bootstrap.type_arg());
  link_args.push_oop(bootstrap.arg_values());
  link_args.push_oop(appendix);
  JavaValue linked(T_OBJECT);
  JavaCalls::call_static(&linked, vmClasses::MethodHandleNatives_klass(),
                         vmSymbols::linkCallSite_name(), vmSymbols::linkCallSite_signature(),
                         &link_args, CHECK_NULL);
  return class_made_by(current, Handle(current, appendix->obj_at(0)), THREAD);
}

// The class of the objects a linked lambda call site's target makes.
Klass* class_made_by(JavaThread* current, Handle target, TRAPS) {
  JavaCallArguments args(target);
  oop mirror = DsoNode::call_runtime("djava/runtime/Lambdas", "classMadeBy",
                                     "(Ljava/lang/Object;)Ljava/lang/Class;", &args, CHECK_NULL);
  return mirror != NULL ? java_lang_Class::as_Klass(mirror) : NULL;
}

}  // namespace

// ---- the interface -----------------------------------------------------------------------

const char* DsoLambda::unshareable_reason(InstanceKlass* k) {
  NameEntry* e = name_entry(k);
  return e->descriptor != NULL ? NULL : e->reason;
}

const char* DsoLambda::descriptor(InstanceKlass* k) {
  return name_entry(k)->descriptor;
}

bool DsoLambda::is_descriptor(const char* name) {
  return strncmp(name, descriptor_prefix, descriptor_prefix_length) == 0;
}

Klass* DsoLambda::make(JavaThread* current, uint64_t program, const char* descriptor, TRAPS) {
  ResourceMark rm(current);
  const char* host_start = descriptor + descriptor_prefix_length;
  const char* bar = strchr(host_start, '|');
  if (bar == NULL || bar == host_start) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: a malformed lambda descriptor: %s", descriptor));
  }
  size_t host_length = (size_t)(bar - host_start);
  char* host_name = NEW_RESOURCE_ARRAY(char, host_length + 1);
  memcpy(host_name, host_start, host_length);
  host_name[host_length] = '\0';
  Klass* hk = DsoHeap::resolve_class(current, program, host_name, CHECK_NULL);
  if (!hk->is_instance_klass()) {
    THROW_MSG_NULL(vmSymbols::java_lang_NoClassDefFoundError(),
                   err_msg("djava: %s is not a lambda's host class", host_name));
  }
  InstanceKlass* host = InstanceKlass::cast(hk);
  host->link_class(CHECK_NULL);  // its constant pool's resolved references
  int site = find_site(host, bar + 1);
  if (site == 0) {
    THROW_MSG_NULL(vmSymbols::java_lang_NoClassDefFoundError(),
                   err_msg("djava: %s has no call site %s (a different version of the class on "
                           "this node?)", host->external_name(), bar + 1));
  }
  Klass* k = link_site(current, host, site, CHECK_NULL);
  const char* made = k != NULL && k->is_instance_klass() && InstanceKlass::cast(k)->is_hidden()
                     ? DsoLambda::descriptor(InstanceKlass::cast(k)) : NULL;
  if (made == NULL || strcmp(made, descriptor) != 0) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                   err_msg("djava: linking call site %s of %s made %s, not the lambda class "
                           "another node sent", bar + 1, host->external_name(),
                           made != NULL ? made : k != NULL ? k->external_name() : "nothing"));
  }
  return k;
}
