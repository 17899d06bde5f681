/*
 * djava: encoding and decoding a shared object's bytes (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/stringTable.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoClassNames.hpp"
#include "dso/dsoMarshal.hpp"
#include "dso/dsoNamedValues.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoReferences.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoThreads.hpp"
#include "dso/dsoThrowables.hpp"
#include "dso/dsoStatics.hpp"
#include "dso/dsoNode.hpp"
#include "classfile/vmClasses.hpp"
#include "oops/fieldStreams.inline.hpp"
#include "runtime/signature.hpp"
#include "memory/resourceArea.hpp"
#include "memory/universe.hpp"
#include "oops/arrayOop.hpp"
#include "oops/instanceKlass.inline.hpp"
#include "oops/instanceOop.hpp"
#include "oops/objArrayOop.inline.hpp"
#include "oops/oop.inline.hpp"
#include "oops/typeArrayOop.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "utilities/copy.hpp"
#include "utilities/growableArray.hpp"

namespace {

struct RefEntry {
  uint64_t a;
  uint32_t b;
  uint32_t kind_index;
  uint32_t length;
  uint32_t reserved;
};
STATIC_ASSERT(sizeof(RefEntry) == DsoMarshal::ref_entry_size);

const int kind_shift = 28;
const uint32_t index_mask = (1u << kind_shift) - 1;

uint32_t kind_of(const RefEntry& e) { return e.kind_index >> kind_shift; }
uint32_t index_of(const RefEntry& e) { return e.kind_index & index_mask; }

// The names and string values an encoding refers to, each once.
class BlobWriter {
 public:
  uint32_t add(const char* text, size_t length) {
    for (int i = 0; i < _texts.length(); i++) {
      if (_lengths.at(i) == length && memcmp(_texts.at(i), text, length) == 0) return (uint32_t)i;
    }
    _texts.append(text);
    _lengths.append(length);
    return (uint32_t)(_texts.length() - 1);
  }
  size_t size() const {
    size_t n = sizeof(uint32_t);
    for (int i = 0; i < _lengths.length(); i++) n += sizeof(uint32_t) + _lengths.at(i);
    return n;
  }
  void write(u1* out) const {
    uint32_t count = (uint32_t)_texts.length();
    memcpy(out, &count, sizeof(count));
    out += sizeof(count);
    for (int i = 0; i < _texts.length(); i++) {
      uint32_t length = (uint32_t)_lengths.at(i);
      memcpy(out, &length, sizeof(length));
      memcpy(out + sizeof(length), _texts.at(i), length);
      out += sizeof(length) + length;
    }
  }
 private:
  GrowableArray<const char*> _texts;
  GrowableArray<size_t> _lengths;
};

// Views the blob of a received encoding; texts are NUL-terminated copies
// in the resource area.
class BlobReader {
 public:
  bool parse(const u1* p, size_t size) {
    uint32_t count;
    if (size < sizeof(count)) return false;
    memcpy(&count, p, sizeof(count));
    size_t at = sizeof(count);
    for (uint32_t i = 0; i < count; i++) {
      uint32_t length;
      if (size - at < sizeof(length)) return false;
      memcpy(&length, p + at, sizeof(length));
      at += sizeof(length);
      if (size - at < length) return false;
      char* text = NEW_RESOURCE_ARRAY(char, length + 1);
      memcpy(text, p + at, length);
      text[length] = '\0';
      _texts.append(text);
      at += length;
    }
    return at == size;
  }
  const char* text(uint32_t index) const {
    return (int)index < _texts.length() ? _texts.at(index) : NULL;
  }
 private:
  GrowableArray<const char*> _texts;
};

const char* class_name_of(oop mirror_or_null, Klass* k) {
  if (mirror_or_null != NULL && java_lang_Class::is_primitive(mirror_or_null)) {
    return type2name(java_lang_Class::primitive_type(mirror_or_null));
  }
  return DsoClassNames::shared_name(k);
}

bool is_interned(oop string) {
  int length = 0;
  jchar* chars = java_lang_String::as_unicode_string_or_null(string, length);
  return chars != NULL && StringTable::lookup(chars, length) == string;
}

// The entry for a reference value v held by a shared object. A local
// object it meets becomes shared here: its own references are encoded when
// its bytes leave this node in turn. One that cannot be shared yet (it is
// locked) goes to *unpublishable, and the entry is not to be sent.
RefEntry entry_for(oop v, BlobWriter* blob, uint64_t program, oop* unpublishable) {
  RefEntry e = { 0, 0, 0, 0, 0 };
  if (v == NULL) {
    return e;
  }
  if (java_lang_String::is_instance(v)) {
    int length = 0;
    const char* utf8 = java_lang_String::as_utf8_string(v, length);
    e.b = is_interned(v) ? 1 : 0;
    e.kind_index = (DsoMarshal::ref_string << kind_shift) | blob->add(utf8, (size_t)length);
    return e;
  }
  if (java_lang_Class::is_instance(v)) {
    Klass* k = java_lang_Class::is_primitive(v) ? NULL : java_lang_Class::as_Klass(v);
    const char* name = class_name_of(v, k);
    e.kind_index = (DsoMarshal::ref_class << kind_shift) | blob->add(name, strlen(name));
    return e;
  }
  bool shared = DsoMark::is_shared(v->mark());
  const char* named = shared ? NULL : DsoNamedValues::name_of(v);
  if (named != NULL) {
    e.kind_index = (DsoMarshal::ref_named << kind_shift) | blob->add(named, strlen(named));
    return e;
  }
  const char* name = DsoClassNames::shared_name(v->klass());
  uint64_t shared_id = shared ? DsoReplicaTable::entry(DsoMark::index(v->mark()))->_global_id : 0;
  if ((!shared && DsoHeap::unshareable_reason(v) != NULL) || DsoHeap::is_foreign_id(shared_id)) {
    // Stays with its node; a foreign replica passes its owner's name on.
    e.a = shared ? (shared_id & 0xffffffff) : DsoHeap::foreign_number(v);
    e.reserved = shared ? DsoHeap::foreign_owner(shared_id) : DsoNode::node_number();
    e.kind_index = (DsoMarshal::ref_foreign << kind_shift) | blob->add(name, strlen(name));
    return e;
  }
  uint index = shared ? DsoMark::index(v->mark()) : DsoHeap::publish_referenced(v, program);
  if (index == 0) {
    if (*unpublishable == NULL) {
      *unpublishable = v;
    }
    return e;
  }
  e.a = DsoReplicaTable::entry(index)->_global_id;
  e.b = (uint32_t)v->mark().hash();
  e.kind_index = (DsoMarshal::ref_shared << kind_shift) | blob->add(name, strlen(name));
  e.length = v->is_array() ? (uint32_t)((arrayOop)v)->length() : 0;
  DsoBlocks* blocks = DsoReplicaTable::entry(index)->_blocks;
  e.reserved = blocks != NULL ? (uint32_t)blocks->_elems_shift : 0;
  return e;
}

// What entries name, into refs (DsoMarshal::Refs).
void note_refs(const GrowableArray<RefEntry>& entries, DsoMarshal::Refs* refs) {
  if (refs == NULL) {
    return;
  }
  for (int i = 0; i < entries.length(); i++) {
    const RefEntry& e = entries.at(i);
    if (kind_of(e) != DsoMarshal::ref_shared) {
      continue;
    }
    refs->ids.append(e.a);
    if (e.reserved != 0) {
      refs->run_heads.append(e.a);
      refs->run_blocks.append(DsoBlocks::count_for((int)e.length, (int)e.reserved));
    }
  }
}

struct Hole {
  int offset;
  int size;
};

int compare_holes(Hole* a, Hole* b) {
  return a->offset - b->offset;
}

// The node-local primitive fields of an instance of ik (a Thread's state,
// ...): they neither leave this node nor are overwritten here. Node-local
// references are reference slots, handled with the others.
void node_local_holes(InstanceKlass* ik, GrowableArray<Hole>* holes) {
  if (ik->reference_type() != REF_NONE) {
    // The GC's link: a reference field no oop map names (dsoReferences.hpp).
    holes->append(Hole{java_lang_ref_Reference::discovered_offset(), heapOopSize});
  }
  InstanceKlass* holder = ik->is_subclass_of(vmClasses::Thread_klass()) ? vmClasses::Thread_klass()
                          : ik->is_subclass_of(vmClasses::Throwable_klass())
                              ? vmClasses::Throwable_klass()
                          : ik->reference_type() == REF_SOFT ? vmClasses::SoftReference_klass()
                              : NULL;
  if (holder == NULL) {
    return;
  }
  for (JavaFieldStream fs(holder); !fs.done(); fs.next()) {
    int size;
    if (!fs.access_flags().is_static() && !is_reference_type(Signature::basic_type(fs.signature())) &&
        DsoHeap::is_node_local_field(ik, fs.offset(), &size)) {
      holes->append(Hole{fs.offset(), size});
    }
  }
}

size_t instance_block_size(InstanceKlass* ik) {
  return (size_t)ik->size_helper() * HeapWordSize - instanceOopDesc::base_offset_in_bytes();
}

// An instance's reference slots on the wire: its oop maps' in order, then
// a reference's referent, which HotSpot's maps leave out (dsoReferences.hpp).
int reference_slots(InstanceKlass* ik) {
  int n = 0;
  OopMapBlock* map = ik->start_of_nonstatic_oop_maps();
  for (OopMapBlock* end = map + ik->nonstatic_oop_map_count(); map < end; map++) {
    n += (int)map->count();
  }
  return DsoReferences::extra_reference_slot(ik) >= 0 ? n + 1 : n;
}

void decode_error(const char* what, oop replica, size_t size, TRAPS) {
  ResourceMark rm(THREAD);
  uint index = DsoMark::index(replica->mark());
  Exceptions::fthrow(THREAD_AND_LOCATION, vmSymbols::java_lang_InternalError(),
                     "djava: shared object " UINT64_FORMAT_X " (%s): %s (%zu bytes)",
                     DsoReplicaTable::entry(index)->_global_id,
                     replica->klass()->external_name(), what, size);
}

// The object an entry names on this node: a replica (empty if new), a
// string or a class mirror.
oop resolve_entry(JavaThread* current, uint64_t program, const RefEntry& e, const BlobReader& blob,
                  TRAPS) {
  uint32_t kind = kind_of(e);
  if (kind == DsoMarshal::ref_null) {
    return NULL;
  }
  const char* text = blob.text(index_of(e));
  if (text == NULL) {
    THROW_MSG_NULL(vmSymbols::java_lang_InternalError(), "djava: a reference names no text");
  }
  switch (kind) {
    case DsoMarshal::ref_string:
      if (e.b != 0) {
        return StringTable::intern(text, THREAD);
      }
      return java_lang_String::create_oop_from_str(text, THREAD);
    case DsoMarshal::ref_class: {
      BasicType t = name2type(text);
      if (is_java_primitive(t) || t == T_VOID) {
        return Universe::java_mirror(t);
      }
      Klass* k = DsoHeap::resolve_class(current, program, text, CHECK_NULL);
      return k->java_mirror();
    }
    case DsoMarshal::ref_shared:
      return DsoHeap::replica_of(current, program, e.a, text, e.b, e.length, (int)e.reserved, THREAD);
    case DsoMarshal::ref_named:
      return DsoNamedValues::resolve(current, program, text, THREAD);
    case DsoMarshal::ref_stack_trace:
      return DsoThrowables::make_stack_trace(current, text, THREAD);
    case DsoMarshal::ref_foreign:
      if (e.reserved == DsoNode::node_number()) {
        oop mine = DsoHeap::foreign_object((uint32_t)e.a);
        if (mine == NULL) {
          THROW_MSG_NULL(vmSymbols::java_lang_InternalError(),
                         "djava: a reference to an object of this node that it never gave out");
        }
        return mine;
      }
      return DsoHeap::foreign_replica(current, program, e.reserved, (uint32_t)e.a, text, THREAD);
    default:
      THROW_MSG_NULL(vmSymbols::java_lang_InternalError(), "djava: unknown reference kind");
  }
}

// Reads n entries and the blob after them; resolves every entry into refs.
bool resolve_all(JavaThread* current, uint64_t program, const u1* p, size_t size, int n,
                 GrowableArray<Handle>* refs, TRAPS) {
  size_t entries = (size_t)n * DsoMarshal::ref_entry_size;
  if (size < entries) return false;
  BlobReader blob;
  if (!blob.parse(p + entries, size - entries)) return false;
  for (int i = 0; i < n; i++) {
    RefEntry e;
    memcpy(&e, p + (size_t)i * DsoMarshal::ref_entry_size, sizeof(e));
    oop v = resolve_entry(current, program, e, blob, CHECK_false);
    refs->append(Handle(current, v));
  }
  return true;
}

// A class's static fields into its mirror (the same layout as encode).
void decode_statics(JavaThread* current, uint64_t program, Handle mirror, const u1* bytes,
                    size_t size, TRAPS) {
  if (size == 0) {
    return;  // no node initialized the class yet
  }
  uint64_t state;
  if (size < sizeof(state)) {
    decode_error("the static fields have no initialization state", mirror(), size, THREAD);
    return;
  }
  memcpy(&state, bytes, sizeof(state));
  bytes += sizeof(state);
  size -= sizeof(state);
  DsoReplica* entry = DsoReplicaTable::entry(DsoMark::index(mirror->mark()));
  if (state == DsoStatics::wire_erroneous) {
    // The class's <clinit> failed on the node that ran it: the description
    // of the error follows (DsoStatics::initialize throws with it).
    ResourceMark rm(current);
    char* description = NEW_RESOURCE_ARRAY(char, size + 1);
    memcpy(description, bytes, size);
    description[size] = '\0';
    DsoStatics::set_initialization_error(entry->_global_id, description);
    entry->_statics_state = DsoStatics::wire_erroneous;
    return;
  }
  if (state != DsoStatics::wire_initialized) {
    decode_error("the static fields have an unknown initialization state", mirror(), size, THREAD);
    return;
  }
  entry->_statics_state = DsoStatics::wire_initialized;
  InstanceKlass* owner = InstanceKlass::cast(java_lang_Class::as_Klass(mirror()));
  size_t block = DsoStatics::static_block_size(owner);
  int slots = owner->static_oop_field_count();
  GrowableArray<Handle> refs;
  bool well_formed = size >= block &&
                     resolve_all(current, program, bytes + block, size - block, slots, &refs, THREAD);
  if (HAS_PENDING_EXCEPTION) {
    return;
  }
  if (!well_formed) {
    decode_error("the static fields do not match this node's class", mirror(), size, THREAD);
    return;
  }
  oop obj = mirror();
  int base = DsoStatics::static_block_offset();
  int refs_end = slots * heapOopSize;
  for (int i = 0; i < slots; i++) {
    obj->obj_field_put(base + i * heapOopSize, refs.at(i)());
  }
  if ((size_t)refs_end < block) {
    Copy::conjoint_memory_atomic(bytes + refs_end, cast_from_oop<address>(obj) + base + refs_end,
                                 block - refs_end);
  }
}

}  // namespace

size_t DsoMarshal::fixed_size(oop obj) {
  Klass* k = obj->klass();
  if (java_lang_Class::is_instance(obj)) {  // a class's static fields (dsoStatics.hpp)
    InstanceKlass* owner = InstanceKlass::cast(java_lang_Class::as_Klass(obj));
    return statics_state_size + DsoStatics::static_block_size(owner) +
           (size_t)owner->static_oop_field_count() * ref_entry_size;
  }
  if (k->is_array_klass()) {
    return fixed_size_of_elements(obj, 0, ((arrayOop)obj)->length());
  }
  InstanceKlass* ik = InstanceKlass::cast(k);
  return instance_block_size(ik) + (size_t)reference_slots(ik) * ref_entry_size;
}

size_t DsoMarshal::fixed_size_of_elements(oop array, int from, int to) {
  Klass* k = array->klass();
  if (k->is_typeArray_klass()) {
    return (size_t)(to - from) << TypeArrayKlass::cast(k)->log2_element_size();
  }
  return (size_t)(to - from) * ref_entry_size;
}

size_t DsoMarshal::encode_blocks_header(int elems_shift, uint32_t count, u1* buffer,
                                        size_t capacity) {
  if (capacity >= blocks_header_size) {
    uint64_t magic = blocks_magic;
    uint32_t shift = (uint32_t)elems_shift;
    memcpy(buffer, &magic, sizeof(magic));
    memcpy(buffer + 8, &shift, sizeof(shift));
    memcpy(buffer + 12, &count, sizeof(count));
  }
  return blocks_header_size;
}

int DsoMarshal::blocks_header_shift(const void* bytes, size_t size) {
  uint64_t magic;
  uint32_t shift;
  if (size != blocks_header_size) {
    return 0;
  }
  memcpy(&magic, bytes, sizeof(magic));
  memcpy(&shift, (const u1*)bytes + 8, sizeof(shift));
  return magic == blocks_magic && shift > 0 && shift < 31 ? (int)shift : 0;
}

size_t DsoMarshal::encode_elements(oop array, int from, int to, u1* buffer, size_t capacity,
                                   uint64_t program, oop* unpublishable, Refs* refs) {
  *unpublishable = NULL;
  Klass* k = array->klass();
  if (k->is_typeArray_klass()) {
    size_t size = fixed_size_of_elements(array, from, to);
    if (size <= capacity) {
      BasicType t = TypeArrayKlass::cast(k)->element_type();
      int l2es = TypeArrayKlass::cast(k)->log2_element_size();
      Copy::conjoint_memory_atomic((address)((typeArrayOop)array)->base(t) + ((size_t)from << l2es),
                                   buffer, size);
    }
    return size;
  }
  ResourceMark rm;
  BlobWriter blob;
  GrowableArray<RefEntry> entries;
  objArrayOop a = (objArrayOop)array;
  for (int i = from; i < to; i++) {
    entries.append(entry_for(a->obj_at(i), &blob, program, unpublishable));
  }
  if (*unpublishable != NULL) {
    return not_now;
  }
  size_t size = (size_t)entries.length() * ref_entry_size + blob.size();
  if (size > capacity) {
    return size;
  }
  u1* out = buffer;
  for (int i = 0; i < entries.length(); i++) {
    memcpy(out, entries.adr_at(i), ref_entry_size);
    out += ref_entry_size;
  }
  blob.write(out);
  note_refs(entries, refs);
  return size;
}

void DsoMarshal::decode_elements(JavaThread* current, uint64_t program, Handle array, int from,
                                 int to, const u1* bytes, size_t size, TRAPS) {
  Klass* k = array->klass();
  if (k->is_typeArray_klass()) {
    if (size != fixed_size_of_elements(array(), from, to)) {
      decode_error("the array's length and the bytes disagree", array(), size, THREAD);
      return;
    }
    BasicType t = TypeArrayKlass::cast(k)->element_type();
    int l2es = TypeArrayKlass::cast(k)->log2_element_size();
    Copy::conjoint_memory_atomic(bytes, (address)((typeArrayOop)array())->base(t) + ((size_t)from << l2es),
                                 size);
    return;
  }
  ResourceMark rm(current);
  HandleMark hm(current);
  GrowableArray<Handle> refs;
  bool well_formed = resolve_all(current, program, bytes, size, to - from, &refs, THREAD);
  if (HAS_PENDING_EXCEPTION) {
    return;
  }
  if (!well_formed) {
    decode_error("malformed reference entries", array(), size, THREAD);
    return;
  }
  objArrayOop a = (objArrayOop)array();
  uint named_by = DsoMark::is_shared(a) ? DsoMark::index(a->mark()) : 0;
  for (int i = from; i < to; i++) {
    oop v = refs.at(i - from)();
    a->obj_at_put(i, v);
    if (named_by != 0 && v != NULL && DsoMark::is_shared(v)) {
      DsoReplica* e = DsoReplicaTable::entry(DsoMark::index(v->mark()));
      e->_named_at = (uint)i;
      Atomic::release_store(&e->_named_by, named_by);
    }
  }
}

size_t DsoMarshal::encode(oop obj, u1* buffer, size_t capacity, uint64_t program,
                          oop* unpublishable, Refs* refs) {
  *unpublishable = NULL;
  Klass* k = obj->klass();
  if (k->is_array_klass()) {
    return encode_elements(obj, 0, ((arrayOop)obj)->length(), buffer, capacity, program,
                           unpublishable, refs);
  }
  ResourceMark rm;
  BlobWriter blob;
  GrowableArray<RefEntry> entries;
  size_t block = 0;
  if (java_lang_Class::is_instance(obj)) {
    // A class's static fields: its initialization state, then the static
    // block, its references first; or the state and the error <clinit>
    // threw.
    DsoReplica* entry = DsoReplicaTable::entry(DsoMark::index(obj->mark()));
    if (entry->_statics_state == DsoStatics::wire_unknown) {
      // Not initialized anywhere yet (this node wrote java.lang.Class's own
      // fields of the mirror): the chunk stays empty.
      return 0;
    }
    const char* failure = entry->_statics_state == DsoStatics::wire_erroneous
                              ? DsoStatics::initialization_error(entry->_global_id)
                              : NULL;
    if (failure != NULL) {
      uint64_t state = DsoStatics::wire_erroneous;
      size_t length = strlen(failure);
      if (DsoMarshal::statics_state_size + length <= capacity) {
        memcpy(buffer, &state, sizeof(state));
        memcpy(buffer + DsoMarshal::statics_state_size, failure, length);
      }
      return DsoMarshal::statics_state_size + length;
    }
    InstanceKlass* owner = InstanceKlass::cast(java_lang_Class::as_Klass(obj));
    block = DsoStatics::static_block_size(owner);
    int base = DsoStatics::static_block_offset();
    for (int i = 0; i < owner->static_oop_field_count(); i++) {
      entries.append(entry_for(obj->obj_field(base + i * heapOopSize), &blob, program, unpublishable));
    }
  } else {
    InstanceKlass* ik = InstanceKlass::cast(k);
    block = instance_block_size(ik);
    OopMapBlock* map = ik->start_of_nonstatic_oop_maps();
    for (OopMapBlock* end = map + ik->nonstatic_oop_map_count(); map < end; map++) {
      for (uint i = 0; i < map->count(); i++) {
        int offset = map->offset() + (int)(i * heapOopSize);
        int size;
        // A node-local reference (a thread's group there, ...) stays home.
        if (DsoThrowables::travels_as_frames(obj, offset)) {
          stringStream frames;
          DsoThrowables::describe_stack_trace(obj, &frames);
          RefEntry e = { 0, 0, 0, 0, 0 };
          e.kind_index = (ref_stack_trace << kind_shift) | blob.add(frames.as_string(), frames.size());
          entries.append(e);
          continue;
        }
        oop v = DsoHeap::is_node_local_field(k, offset, &size) ? (oop)NULL : obj->obj_field(offset);
        entries.append(entry_for(v, &blob, program, unpublishable));
      }
    }
    int referent = DsoReferences::extra_reference_slot(ik);
    if (referent >= 0) {
      entries.append(entry_for(obj->obj_field(referent), &blob, program, unpublishable));
    }
  }
  if (*unpublishable != NULL) {
    return not_now;
  }
  size_t state_size = java_lang_Class::is_instance(obj) ? statics_state_size : 0;
  size_t size = state_size + block + (size_t)entries.length() * ref_entry_size + blob.size();
  if (size > capacity) {
    return size;
  }
  u1* out = buffer;
  if (state_size > 0) {
    uint64_t state = DsoStatics::wire_initialized;
    memcpy(out, &state, sizeof(state));
    out += state_size;
  }
  if (block > 0 && java_lang_Class::is_instance(obj)) {
    InstanceKlass* owner = InstanceKlass::cast(java_lang_Class::as_Klass(obj));
    int base = DsoStatics::static_block_offset();
    Copy::conjoint_memory_atomic(cast_from_oop<address>(obj) + base, out, block);
    memset(out, 0, (size_t)owner->static_oop_field_count() * heapOopSize);
    out += block;
  } else if (block > 0) {
    int base = instanceOopDesc::base_offset_in_bytes();
    Copy::conjoint_memory_atomic(cast_from_oop<address>(obj) + base, out, block);
    // Reference slots hold node-local addresses: zero them on the wire.
    InstanceKlass* ik = InstanceKlass::cast(k);
    OopMapBlock* map = ik->start_of_nonstatic_oop_maps();
    for (OopMapBlock* end = map + ik->nonstatic_oop_map_count(); map < end; map++) {
      memset(out + (map->offset() - base), 0, (size_t)map->offset_span());
    }
    int referent = DsoReferences::extra_reference_slot(ik);
    if (referent >= 0) {
      memset(out + (referent - base), 0, heapOopSize);
    }
    GrowableArray<Hole> holes;
    node_local_holes(ik, &holes);
    for (int i = 0; i < holes.length(); i++) {
      memset(out + (holes.at(i).offset - base), 0, (size_t)holes.at(i).size);
    }
    if (ik->is_subclass_of(vmClasses::Thread_klass())) {
      DsoThreads::eetop_to_wire(obj, out, base);
    }
    out += block;
  }
  for (int i = 0; i < entries.length(); i++) {
    memcpy(out, entries.adr_at(i), ref_entry_size);
    out += ref_entry_size;
  }
  blob.write(out);
  note_refs(entries, refs);
  return size;
}

void DsoMarshal::decode(JavaThread* current, uint64_t program, Handle replica, const u1* bytes,
                        size_t size, TRAPS) {
  Klass* k = replica->klass();
  if (k->is_array_klass()) {
    decode_elements(current, program, replica, 0, ((arrayOop)replica())->length(), bytes, size,
                    THREAD);
    return;
  }
  ResourceMark rm(current);
  HandleMark hm(current);
  GrowableArray<Handle> refs;
  if (java_lang_Class::is_instance(replica())) {
    decode_statics(current, program, replica, bytes, size, THREAD);
    return;
  }
  InstanceKlass* ik = InstanceKlass::cast(k);
  size_t block = instance_block_size(ik);
  int slots = reference_slots(ik);
  bool well_formed = size >= block &&
                     resolve_all(current, program, bytes + block, size - block, slots, &refs, THREAD);
  if (HAS_PENDING_EXCEPTION) {
    return;
  }
  if (!well_formed) {
    decode_error("this node lays the class out differently, or the bytes are malformed",
                 replica(), size, THREAD);
    return;
  }
  // From here no safepoint: the copy and the reference stores are one step
  // as far as GC is concerned. The bytes between the holes (reference slots
  // and node-local fields) are copied around them, so that a racing reader
  // on this node never sees a reference slot zeroed, and node-local fields
  // keep this node's values.
  oop obj = replica();
  int base = instanceOopDesc::base_offset_in_bytes();
  address dest = cast_from_oop<address>(obj);
  GrowableArray<Hole> holes;
  int next_ref = 0;
  OopMapBlock* map = ik->start_of_nonstatic_oop_maps();
  for (OopMapBlock* end = map + ik->nonstatic_oop_map_count(); map < end; map++) {
    for (uint i = 0; i < map->count(); i++) {
      int offset = map->offset() + (int)(i * heapOopSize);
      int size;
      if (!DsoHeap::is_node_local_field(k, offset, &size)) {
        obj->obj_field_put(offset, refs.at(next_ref)());
      }
      next_ref++;
      holes.append(Hole{offset, heapOopSize});
    }
  }
  int referent = DsoReferences::extra_reference_slot(ik);
  if (referent >= 0) {
    obj->obj_field_put(referent, refs.at(next_ref)());
    holes.append(Hole{referent, heapOopSize});
  }
  node_local_holes(ik, &holes);
  int eetop_offset;
  if (ik->is_subclass_of(vmClasses::Thread_klass()) && DsoThreads::keeps_eetop(obj, &eetop_offset)) {
    holes.append(Hole{eetop_offset, (int)sizeof(jlong)});  // this VM runs the thread
  }
  holes.sort(compare_holes);
  int at = base;
  for (int i = 0; i < holes.length(); i++) {
    const Hole& h = holes.at(i);
    if (h.offset > at) {
      Copy::conjoint_memory_atomic(bytes + (at - base), dest + at, (size_t)(h.offset - at));
    }
    at = MAX2(at, h.offset + h.size);
  }
  int end = base + (int)block;
  if (end > at) {
    Copy::conjoint_memory_atomic(bytes + (at - base), dest + at, (size_t)(end - at));
  }
  if (ik->is_subclass_of(vmClasses::Thread_klass())) {
    DsoThreads::refresh_status_of_remote(obj);
  }
}
