/*
 * djava: throwables between nodes (see the header).
 *
 * The frames' text: "N;" then N frames, each "LINE;FORMAT;" and six fields
 * (class loader name, module name, module version, declaring class, method
 * name, file name), each "-" for null or "LENGTH:BYTES". Symbols and
 * strings are modified UTF-8, which has no NUL byte, so the text is a C
 * string.
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/moduleEntry.hpp"
#include "classfile/stringTable.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoThrowables.hpp"
#include "memory/oopFactory.hpp"
#include "memory/resourceArea.hpp"
#include "oops/instanceKlass.inline.hpp"
#include "oops/method.hpp"
#include "oops/objArrayOop.inline.hpp"
#include "oops/oop.inline.hpp"
#include "oops/typeArrayOop.inline.hpp"
#include "runtime/fieldDescriptor.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/thread.inline.hpp"
#include "runtime/vframe.inline.hpp"
#include "utilities/ostream.hpp"

bool DsoThrowables::is_node_local_field(Klass* k, int offset, int* size) {
  if (!k->is_subclass_of(vmClasses::Throwable_klass())) {
    return false;
  }
  if (offset == java_lang_Throwable::_backtrace_offset) {
    *size = heapOopSize;
    return true;
  }
  if (offset == java_lang_Throwable::_depth_offset) {
    *size = sizeof(jint);
    return true;
  }
  return false;
}

bool DsoThrowables::travels_as_frames(oop obj, int offset) {
  if (offset != java_lang_Throwable::_stackTrace_offset ||
      !obj->klass()->is_subclass_of(vmClasses::Throwable_klass())) {
    return false;
  }
  // As Throwable.getOurStackTrace decides that the trace is still to be
  // made from the backtrace.
  oop trace = obj->obj_field(offset);
  return java_lang_Throwable::backtrace(obj) != NULL &&
         (trace == NULL || trace == java_lang_Throwable::unassigned_stacktrace());
}

// ---- out --------------------------------------------------------------------

// Text goes in by write, never through a format: print() cuts what it
// formats at 2000 bytes (O_BUFLEN), and a trace is longer than that.
static void put_field(stringStream* out, const char* s) {
  if (s == NULL) {
    out->write("-", 1);
  } else {
    size_t length = strlen(s);
    out->print("%zu:", length);
    out->write(s, length);
  }
}

static const char* string_or_null(oop s) {
  return s == NULL ? NULL : java_lang_String::as_utf8_string(s);
}

// StackTraceElement's format bits (StackTraceElement.computeFormat): the
// loader's name is left out for the JDK's loaders and the program's (the
// application loader on the launcher, its stand-in on a thread server);
// the version of a module the JDK itself defines is left out.
static const int builtin_class_loader = 0x1;
static const int jdk_non_upgradeable_module = 0x2;

static int format_of(InstanceKlass* holder) {
  oop loader = holder->class_loader();
  int format = 0;
  if (loader != NULL && (SystemDictionary::is_platform_class_loader(loader) ||
                         SystemDictionary::is_system_class_loader(loader) ||
                         DsoHeap::program_of_loader(loader) != 0)) {
    format |= builtin_class_loader;
  }
  if (holder->module()->is_named() &&
      (loader == NULL || SystemDictionary::is_platform_class_loader(loader))) {
    format |= jdk_non_upgradeable_module;
  }
  return format;
}

// One frame: holder's `name` at `bci`; file and line only if `method` is
// still the version the frame ran (else redefined since, as fill_in).
// `formatted`: with StackTraceElement's format bits, as a throwable's
// elements have them (StackTraceElement.of); Thread.getStackTrace's are
// left without (its toString then names the loader and module version).
static void describe_frame(stringStream* frames, InstanceKlass* holder, Method* method,
                           int version, int bci, Symbol* name, bool formatted) {
  const char* file = NULL;
  int line = -1;
  if (method != NULL && method->constants()->version() == version) {
    Symbol* source = Backtrace::get_source_file_name(holder, version);
    file = source != NULL ? source->as_C_string() : NULL;
    line = Backtrace::get_line_number(method, bci);
  }
  oop loader = holder->class_loader();
  ModuleEntry* module = holder->module();
  frames->print("%d;%d;", line, formatted ? format_of(holder) : 0);
  // A program's loader on a thread server stands for the application
  // loader: its frames read as java gives them ("app", left out when
  // printed).
  put_field(frames, loader == NULL ? NULL
                    : DsoHeap::program_of_loader(loader) != 0
                        ? "app"
                        : string_or_null(java_lang_ClassLoader::name(loader)));
  put_field(frames, module->is_named() ? module->name()->as_C_string() : NULL);
  put_field(frames, module->is_named() && module->version() != NULL
                        ? module->version()->as_C_string() : NULL);
  put_field(frames, holder->external_name());
  put_field(frames, name->as_C_string());
  put_field(frames, file);
}

void DsoThrowables::describe_stack_trace(oop throwable, stringStream* out) {
  // As java_lang_Throwable::get_stack_trace_elements walks it (its
  // BacktraceIterator), without handles or allocation.
  stringStream frames;
  int count = 0;
  int depth = java_lang_Throwable::depth(throwable);
  objArrayOop chunk = (objArrayOop)java_lang_Throwable::backtrace(throwable);
  int index = 0;
  while (chunk != NULL && count < depth) {
    objArrayOop mirrors = (objArrayOop)chunk->obj_at(java_lang_Throwable::trace_mirrors_offset);
    oop mirror = mirrors->obj_at(index);
    if (mirror == NULL) {
      break;
    }
    typeArrayOop methods = (typeArrayOop)chunk->obj_at(java_lang_Throwable::trace_methods_offset);
    typeArrayOop bcis = (typeArrayOop)chunk->obj_at(java_lang_Throwable::trace_bcis_offset);
    typeArrayOop names = (typeArrayOop)chunk->obj_at(java_lang_Throwable::trace_names_offset);
    int merged = bcis->int_at(index);
    int version = Backtrace::version_at(merged);
    InstanceKlass* holder = InstanceKlass::cast(java_lang_Class::as_Klass(mirror));
    describe_frame(&frames, holder, holder->method_with_orig_idnum(methods->ushort_at(index), version),
                   version, Backtrace::bci_at(merged), names->symbol_at(index), true);
    count++;

    if (++index >= java_lang_Throwable::trace_chunk_size) {
      chunk = (objArrayOop)chunk->obj_at(java_lang_Throwable::trace_next_offset);
      index = 0;
    }
  }
  out->print("%d;", count);
  out->write(frames.base(), frames.size());
}

void DsoThrowables::describe_thread_stack(JavaThread* thread, stringStream* out) {
  // As Thread.getStackTrace sees it (ThreadStackTrace::dump_stack_at_safepoint):
  // every Java frame, innermost first, up to MaxJavaStackTraceDepth.
  stringStream frames;
  int count = 0;
  if (thread->has_last_Java_frame()) {
    RegisterMap map(thread, false /* update_map */);
    for (javaVFrame* f = thread->last_java_vframe(&map);
         f != NULL && (MaxJavaStackTraceDepth <= 0 || count < MaxJavaStackTraceDepth);
         f = f->java_sender()) {
      Method* method = f->method();
      describe_frame(&frames, method->method_holder(), method, method->constants()->version(),
                     f->bci(), method->name(), false);
      count++;
    }
  }
  out->print("%d;", count);
  out->write(frames.base(), frames.size());
}

// ---- in ---------------------------------------------------------------------

namespace {

class FrameReader {
 public:
  explicit FrameReader(const char* text) : _p(text) {}

  bool number(int* value) {
    char* end;
    long v = strtol(_p, &end, 10);
    if (end == _p || *end != ';' || v < INT_MIN || v > INT_MAX) {
      return false;
    }
    *value = (int)v;
    _p = end + 1;
    return true;
  }
  // A field into *value (resource area; NULL for "-").
  bool field(const char** value) {
    if (*_p == '-') {
      _p++;
      *value = NULL;
      return true;
    }
    char* end;
    unsigned long length = strtoul(_p, &end, 10);
    if (end == _p || *end != ':' || strnlen(end + 1, length) < length) {
      return false;
    }
    char* s = NEW_RESOURCE_ARRAY(char, length + 1);
    memcpy(s, end + 1, length);
    s[length] = '\0';
    *value = s;
    _p = end + 1 + length;
    return true;
  }
  bool at_end() const { return *_p == '\0'; }

 private:
  const char* _p;
};

int format_offset = -1;

oop interned_or_null(const char* s, TRAPS) {
  return s == NULL ? (oop)NULL : StringTable::intern(s, THREAD);
}

}  // namespace

oop DsoThrowables::make_stack_trace(JavaThread* current, const char* text, TRAPS) {
  InstanceKlass* element_klass = vmClasses::StackTraceElement_klass();
  // Loaded at start-up, but linked only once a trace was made here.
  element_klass->initialize(CHECK_NULL);
  if (format_offset < 0) {
    fieldDescriptor fd;
    TempNewSymbol name = SymbolTable::new_symbol("format");
    guarantee(element_klass->find_local_field(name, vmSymbols::byte_signature(), &fd),
              "djava: java.lang.StackTraceElement has no field 'byte format'");
    format_offset = fd.offset();
  }
  ResourceMark rm(current);
  FrameReader in(text);
  int count;
  if (!in.number(&count) || count < 0 || count > MaxJavaStackTraceDepth + 1024) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(), "djava: malformed stack trace");
  }
  objArrayHandle trace = oopFactory::new_objArray_handle(element_klass, count, CHECK_NULL);
  for (int i = 0; i < count; i++) {
    int line;
    int format;
    const char* fields[6];
    bool ok = in.number(&line) && in.number(&format);
    for (int f = 0; ok && f < 6; f++) {
      ok = in.field(&fields[f]);
    }
    if (!ok || fields[3] == NULL || fields[4] == NULL) {
            THROW_MSG_NULL(vmSymbols::java_lang_InternalError(), "djava: malformed stack trace");
    }
    Handle element = element_klass->allocate_instance_handle(CHECK_NULL);
    oop v = interned_or_null(fields[0], CHECK_NULL);
    java_lang_StackTraceElement::set_classLoaderName(element(), v);
    v = interned_or_null(fields[1], CHECK_NULL);
    java_lang_StackTraceElement::set_moduleName(element(), v);
    v = interned_or_null(fields[2], CHECK_NULL);
    java_lang_StackTraceElement::set_moduleVersion(element(), v);
    v = interned_or_null(fields[3], CHECK_NULL);
    java_lang_StackTraceElement::set_declaringClass(element(), v);
    v = interned_or_null(fields[4], CHECK_NULL);
    java_lang_StackTraceElement::set_methodName(element(), v);
    v = interned_or_null(fields[5], CHECK_NULL);
    java_lang_StackTraceElement::set_fileName(element(), v);
    java_lang_StackTraceElement::set_lineNumber(element(), line);
    element->byte_field_put(format_offset, (jbyte)format);
    trace->obj_at_put(i, element());
  }
  if (!in.at_end()) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(), "djava: malformed stack trace");
  }
  return trace();
}
