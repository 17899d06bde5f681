/*
 * djava: shared weak and soft references (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/vmClasses.hpp"
#include "dso/dsoReferences.hpp"
#include "oops/fieldStreams.inline.hpp"
#include "oops/instanceKlass.inline.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/atomic.hpp"
#include "runtime/handles.inline.hpp"

// SoftReference.timestamp's offset; 0 until first asked (any field's
// offset is past the header).
static volatile int timestamp_offset = 0;

static bool is_reference_class(Klass* k) {
  return k->is_instance_klass() && InstanceKlass::cast(k)->reference_type() != REF_NONE;
}

static int soft_timestamp_offset() {
  int offset = Atomic::load(&timestamp_offset);
  if (offset == 0) {
    for (JavaFieldStream fs(vmClasses::SoftReference_klass()); !fs.done(); fs.next()) {
      if (!fs.access_flags().is_static() && fs.name()->equals("timestamp")) {
        offset = fs.offset();
      }
    }
    guarantee(offset > 0, "djava: SoftReference has no field timestamp");
    Atomic::store(&timestamp_offset, offset);
  }
  return offset;
}

const char* DsoReferences::unshareable_reason(Klass* k) {
  if (k->is_subclass_of(vmClasses::FinalReference_klass())) {
    return "finalization is each node's";
  }
  if (k->is_subclass_of(vmClasses::PhantomReference_klass())) {
    return "a phantom reference is enqueued by the GC of its node (a Cleaner's action runs there)";
  }
  return NULL;
}

bool DsoReferences::is_node_local_field(Klass* k, int offset, int* size) {
  if (!is_reference_class(k)) {
    return false;
  }
  if (offset == java_lang_ref_Reference::discovered_offset()) {
    *size = heapOopSize;
    return true;
  }
  if (InstanceKlass::cast(k)->reference_type() == REF_SOFT && offset == soft_timestamp_offset()) {
    *size = sizeof(jlong);
    return true;
  }
  return false;
}

int DsoReferences::extra_reference_slot(InstanceKlass* ik) {
  return ik->reference_type() != REF_NONE ? java_lang_ref_Reference::referent_offset() : -1;
}

void DsoReferences::mark_shared(oop obj) {
  if (is_reference_class(obj->klass()) && java_lang_ref_Reference::discovered(obj) == NULL) {
    java_lang_ref_Reference::set_discovered(obj, obj);
  }
}

void DsoReferences::unmark_shared(oop obj) {
  if (is_reference_class(obj->klass()) && java_lang_ref_Reference::discovered(obj) == obj) {
    java_lang_ref_Reference::set_discovered(obj, NULL);
  }
}

bool DsoReferences::is_shared_in_gc(oop ref) {
  oop d = java_lang_ref_Reference::discovered(ref);
  if (d == NULL) {
    return false;
  }
  if (d == ref) {
    return true;
  }
  // A young collection scans the copy; the field still names the original,
  // whose mark now forwards to the copy.
  markWord mark = d->mark();
  return mark.is_marked() && cast_to_oop(mark.decode_pointer()) == ref;
}
