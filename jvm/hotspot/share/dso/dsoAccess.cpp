/*
 * djava: shared objects on the VM's runtime paths (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoAccess.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "memory/allocation.inline.hpp"
#include "memory/resourceArea.hpp"
#include "oops/arrayOop.hpp"
#include "oops/instanceMirrorKlass.hpp"
#include "oops/klass.hpp"
#include "oops/objArrayKlass.hpp"
#include "oops/objArrayOop.inline.hpp"
#include "oops/oop.inline.hpp"
#include "oops/typeArrayKlass.hpp"
#include "oops/typeArrayOop.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/jniHandles.inline.hpp"
#include "runtime/os.hpp"
#include "runtime/reflection.hpp"
#include "runtime/thread.inline.hpp"
#include "utilities/copy.hpp"
#include "utilities/exceptions.hpp"

// ---- one access -------------------------------------------------------------------

void DsoAccess::refuse(JavaThread* current, oop obj, const char* what, const char* why) {
  ResourceMark rm(current);
  uint index = DsoMark::index(obj->mark());
  uint64_t id = DsoReplicaTable::entry(index)->_global_id;
  if (DsoHeap::is_foreign_id(id)) {
    // An object its node cannot share: say which and why, as the interpreter does.
    const char* unshareable = DsoHeap::unshareable_reason(obj);
    Exceptions::fthrow(current, __FILE__, __LINE__, vmSymbols::java_lang_IllegalStateException(),
                       "djava: cannot %s a %s of node %u on this node: %s", what,
                       obj->klass()->external_name(), DsoHeap::foreign_owner(id),
                       unshareable != NULL ? unshareable : "it cannot be shared");
    return;
  }
  Exceptions::fthrow(current, __FILE__, __LINE__, vmSymbols::java_lang_InternalError(),
                     "djava: cannot %s shared object 0x" UINT64_FORMAT_X " (%s) on this node: %s",
                     what, DsoReplicaTable::entry(index)->_global_id,
                     obj->klass()->external_name(), why);
}

bool DsoAccess::is_class_own_field(oop obj, jlong offset) {
  return offset < InstanceMirrorKlass::offset_of_static_fields() && java_lang_Class::is_instance(obj);
}

bool DsoAccessMark::begin_oop(JavaThread* current, oop& obj, jlong from, jlong to, bool write) {
  assert(_obj.is_null(), "one access a mark");
  assert(DsoMark::is_shared(obj->mark()), "only a replica takes an access");
  assert(current->thread_state() == _thread_in_vm, "accesses begin in VM state");
  // JNI's Release functions may be called with an exception pending: it is
  // put aside while the access begins, and stays if the access succeeds.
  Handle pending(current, current->pending_exception());
  const char* pending_file = current->exception_file();
  int pending_line = current->exception_line();
  current->clear_pending_exception();

  Handle h(current, obj);
  DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(obj->mark()));
  if (e->_chunk == NULL) {
    // The same refusal as the interpreter's (dsoInterpreter.cpp).
    DsoAccess::refuse(current, obj, write ? "write" : "read",
                      "it has no shared-object cache here");
    return false;
  }
  DsoHeap::begin_access_range(current, h, from, to, write, current);
  if (current->has_pending_exception()) {
    // No access is held. A djava error outranks one the caller had pending:
    // it says the replica's bytes could not be read or written.
    return false;
  }
  if (pending.not_null()) {
    current->set_pending_exception(pending(), pending_file, pending_line);
  }
  _obj = h;
  _from = from;
  _to = to;
  obj = h();  // GC may have moved it while the access waited
  return true;
}

void DsoAccess::stress_local_write(oop dst) {
  // Large arrays only: the JDK itself copies small ones all the time.
  if (dst != NULL && dst->is_array() && arrayOop(dst)->length() >= (1 << 20)) {
    os::naked_short_sleep(DjavaStressLocalWriteMillis);
  }
}

void DsoAccessMark::end() {
  if (_obj.not_null()) {
    DsoHeap::end_access_range(_obj(), _from, _to);
    _obj = Handle();
  }
}

// ---- System.arraycopy -------------------------------------------------------------

jlong DsoAccess::element_offset(oop array, jlong index) {
  int lh = array->klass()->layout_helper();
  return arrayOopDesc::base_offset_in_bytes(Klass::layout_helper_element_type(lh)) +
         ((jlong)index << Klass::layout_helper_log2_element_size(lh));
}

// Whether Klass::copy_array reaches the elements: every check it makes
// before reading or writing one passes. When one fails it throws without
// touching either array, so it needs no access.
static bool copies_elements(arrayOop s, int src_pos, arrayOop d, int dst_pos, int length) {
  if (!s->is_array() || !d->is_array() || s->is_objArray() != d->is_objArray()) {
    return false;
  }
  if (s->is_typeArray() && s->klass() != d->klass()) {
    return false;  // two primitive element types
  }
  if (src_pos < 0 || dst_pos < 0 || length <= 0) {
    return false;
  }
  return (unsigned int)length + (unsigned int)src_pos <= (unsigned int)s->length() &&
         (unsigned int)length + (unsigned int)dst_pos <= (unsigned int)d->length();
}

// ---- copies through a buffer -----------------------------------------------------

static address address_of(oop base, jlong offset) {
  return base == NULL ? (address)(uintptr_t)offset : cast_from_oop<address>(base) + offset;
}

static void raw_copy(JavaThread* current, address src, address dst, size_t size, size_t elem_size) {
  // As Unsafe's GuardUnsafeAccess: native memory may be a mapped file
  // whose pages fault.
  current->set_doing_unsafe_access(true);
  if (elem_size == 0) {
    Copy::conjoint_memory_atomic(src, dst, size);
  } else {
    Copy::conjoint_swap(src, dst, size, elem_size);
  }
  current->set_doing_unsafe_access(false);
}

// Through a buffer: never hold one access while another begins.
static void copy_between_replicas(JavaThread* current, Handle src, jlong src_offset, Handle dst,
                                  jlong dst_offset, size_t size, size_t elem_size) {
  JavaThread* THREAD = current;  // for the exception macros
  u1* buffer = NEW_C_HEAP_ARRAY_RETURN_NULL(u1, size, mtInternal);
  if (buffer == NULL) {
    THROW_MSG(vmSymbols::java_lang_OutOfMemoryError(),
              "djava: no native memory to copy between shared arrays");
  }
  {
    DsoAccessMark read;
    if (read.begin_range(current, src, src_offset, src_offset + (jlong)size, false)) {
      raw_copy(current, address_of(src(), src_offset), buffer, size, 0);
    }
  }
  if (!current->has_pending_exception()) {
    DsoAccessMark write;
    if (write.begin_range(current, dst, dst_offset, dst_offset + (jlong)size, true)) {
      raw_copy(current, buffer, address_of(dst(), dst_offset), size, elem_size);
    }
  }
  FREE_C_HEAP_ARRAY(u1, buffer);
}

// Two distinct replicas, primitive elements: through a C-heap buffer.
static void bounce_primitive(JavaThread* current, Handle s, int src_pos, Handle d, int dst_pos,
                             int length) {
  TypeArrayKlass* k = TypeArrayKlass::cast(s->klass());
  int base = arrayOopDesc::base_offset_in_bytes(k->element_type());
  int l2es = k->log2_element_size();
  copy_between_replicas(current, s, base + ((jlong)src_pos << l2es), d,
                        base + ((jlong)dst_pos << l2es), (size_t)length << l2es, 0);
}

// Two distinct replicas, references: through a local array of the source's
// class, so that the store checks, their exceptions and a partial copy are
// those of a direct copy.
static void bounce_references(JavaThread* current, Handle s, int src_pos, Handle d, int dst_pos,
                              int length) {
  JavaThread* THREAD = current;  // for the exception macros
  ObjArrayKlass* k = ObjArrayKlass::cast(s->klass());
  objArrayOop tmp = k->allocate(length, CHECK);
  objArrayHandle buffer(current, tmp);
  {
    DsoAccessMark read;
    if (!read.begin_range(current, s, DsoAccess::element_offset(s(), src_pos),
                          DsoAccess::element_offset(s(), src_pos + length), false)) {
      return;
    }
    k->copy_array(arrayOop(s()), src_pos, buffer(), 0, length, CHECK);
  }
  DsoAccessMark write;
  if (write.begin_range(current, d, DsoAccess::element_offset(d(), dst_pos),
                        DsoAccess::element_offset(d(), dst_pos + length), true)) {
    k->copy_array(buffer(), 0, arrayOop(d()), dst_pos, length, current);
  }
}

static void bounce(JavaThread* current, Handle s, int src_pos, Handle d, int dst_pos, int length) {
  // Never hold one access while another begins (see the header).
  if (s->is_typeArray()) {
    bounce_primitive(current, s, src_pos, d, dst_pos, length);
  } else {
    bounce_references(current, s, src_pos, d, dst_pos, length);
  }
}

void DsoAccess::arraycopy(JavaThread* current, arrayOop s, int src_pos, arrayOop d, int dst_pos,
                          int length) {
  HandleMark hm(current);
  if (!copies_elements(s, src_pos, d, dst_pos, length)) {
    s->klass()->copy_array(s, src_pos, d, dst_pos, length, current);
    return;
  }
  Handle hs(current, s);
  Handle hd(current, d);
  bool s_shared = DsoMark::is_shared(s->mark());
  bool d_shared = DsoMark::is_shared(d->mark());
  if (s_shared && d_shared && s != d) {
    bounce(current, hs, src_pos, hd, dst_pos, length);
    return;
  }
  // One replica (or one array on both sides, which a write access covers:
  // of an array in blocks, the blocks of both ranges and those between).
  Handle replica = d_shared ? hd : hs;
  Handle other = d_shared ? hs : hd;
  jlong from, to;
  if (s == d) {
    from = DsoAccess::element_offset(s, MIN2(src_pos, dst_pos));
    to = DsoAccess::element_offset(s, MAX2(src_pos, dst_pos) + length);
  } else {
    int pos = d_shared ? dst_pos : src_pos;
    from = DsoAccess::element_offset(replica(), pos);
    to = DsoAccess::element_offset(replica(), pos + length);
  }
  DsoAccessMark access;
  if (!access.begin_range(current, replica, from, to, d_shared)) {
    return;
  }
  if (other() != replica() && DsoMark::is_shared(other->mark())) {
    // The access waited, and another thread made the other array shared
    // meanwhile: copying into or out of it now would bypass its coherence.
    access.end();
    bounce(current, hs, src_pos, hd, dst_pos, length);
    return;
  }
  hs->klass()->copy_array(arrayOop(hs()), src_pos, arrayOop(hd()), dst_pos, length, current);
}

// ---- Unsafe.copyMemory0, copySwapMemory0 -------------------------------------------------

void DsoAccess::copy_memory(JavaThread* current, oop src_base, jlong src_offset, oop dst_base,
                            jlong dst_offset, size_t size, size_t elem_size) {
  JavaThread* THREAD = current;  // for the exception macros
  HandleMark hm(current);
  Handle src(current, src_base);
  Handle dst(current, dst_base);
  bool s_shared = is_shared_or_null(src_base);
  bool d_shared = is_shared_or_null(dst_base);
  if (s_shared && d_shared && src_base != dst_base) {
    copy_between_replicas(current, src, src_offset, dst, dst_offset, size, elem_size);
    return;
  }
  Handle replica = d_shared ? dst : src;
  Handle other = d_shared ? src : dst;
  jlong from = d_shared ? dst_offset : src_offset;
  jlong to = from + (jlong)size;
  if (src_base == dst_base) {
    from = MIN2(src_offset, dst_offset);
    to = MAX2(src_offset, dst_offset) + (jlong)size;
  }
  DsoAccessMark access;
  if (!access.begin_range(current, replica, from, to, d_shared)) {
    return;
  }
  if (is_shared_or_null(other()) && other() != replica()) {
    // Made shared by another thread while the access waited (as arraycopy).
    access.end();
    copy_between_replicas(current, src, src_offset, dst, dst_offset, size, elem_size);
    return;
  }
  raw_copy(current, address_of(src(), src_offset), address_of(dst(), dst_offset), size, elem_size);
}

// ---- JNI Get/ReleasePrimitiveArrayCritical --------------------------------------------

static size_t element_bytes(typeArrayOop a) {
  return (size_t)a->length() << TypeArrayKlass::cast(a->klass())->log2_element_size();
}

static address elements_of(typeArrayOop a) {
  return (address)a->base(TypeArrayKlass::cast(a->klass())->element_type());
}

void* DsoAccess::critical_copy(JavaThread* current, jarray array, jboolean* is_copy) {
  JavaThread* THREAD = current;  // for the exception macros
  HandleMark hm(current);
  Handle a(current, JNIHandles::resolve_non_null(array));
  if (!a->is_typeArray()) {
    refuse(current, a(), "pin", "JNI GetPrimitiveArrayCritical cannot give native code a "
           "shared object array");
    return NULL;
  }
  // Never empty, so that it is never mistaken for anything else.
  size_t bytes = element_bytes(typeArrayOop(a()));
  u1* copy = NEW_C_HEAP_ARRAY_RETURN_NULL(u1, MAX2(bytes, (size_t)1), mtInternal);
  if (copy == NULL) {
    THROW_MSG_NULL(vmSymbols::java_lang_OutOfMemoryError(),
                   "djava: no native memory for a copy of a shared array");
  }
  DsoAccessMark read;
  if (!read.begin(current, a, false)) {
    FREE_C_HEAP_ARRAY(u1, copy);
    return NULL;
  }
  Copy::conjoint_memory_atomic(elements_of(typeArrayOop(a())), copy, bytes);
  if (is_copy != NULL) {
    *is_copy = JNI_TRUE;
  }
  return copy;
}

bool DsoAccess::release_critical_copy(JavaThread* current, jarray array, void* carray, jint mode) {
  HandleMark hm(current);
  Handle a(current, JNIHandles::resolve_non_null(array));
  if (!a->is_typeArray() || (address)carray == elements_of(typeArrayOop(a()))) {
    return false;  // the array's own elements: GetPrimitiveArrayCritical saw it local
  }
  if (mode != JNI_ABORT) {
    DsoAccessMark write;
    if (write.begin(current, a, true)) {
      Copy::conjoint_memory_atomic(carray, elements_of(typeArrayOop(a())),
                                   element_bytes(typeArrayOop(a())));
    }
  }
  if (mode != JNI_COMMIT) {
    FREE_C_HEAP_ARRAY(u1, carray);
  }
  return true;
}

// ---- java.lang.reflect.Array.set ------------------------------------------------------

void DsoAccess::set_array_element(JavaThread* current, jobject array, jint index, jobject value) {
  JavaThread* THREAD = current;  // for the exception macros
  arrayOop a = arrayOop(JNIHandles::resolve_non_null(array));
  jvalue v;
  v.i = 0;
  BasicType value_type = T_OBJECT;
  if (!a->is_objArray()) {
    // Reads the box, under its own access if it is a replica (reflection.cpp),
    // before the array's access begins. That access may wait (GC may move
    // the array, another thread may make it shared): the array is looked
    // at only afterwards.
    value_type = Reflection::unbox_for_primitive(JNIHandles::resolve(value), &v, CHECK);
    a = arrayOop(JNIHandles::resolve_non_null(array));
  }
  DsoAccessMark write;
  if (DsoMark::is_shared(a->mark()) && index >= 0 && index < a->length() &&
      !write.begin_range(current, a, DsoAccess::element_offset(a, index), DsoAccess::element_offset(a, index + 1), true)) {
    return;
  }
  if (value_type == T_OBJECT) {
    // Resolved after the access began: GC may have moved it.
    v.l = cast_from_oop<jobject>(JNIHandles::resolve(value));
  }
  Reflection::array_set(&v, a, index, value_type, current);
}
