/*
 * djava: a shipped thread's inheritable thread-locals (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoInheritedLocals.hpp"
#include "memory/oopFactory.hpp"
#include "memory/resourceArea.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/objArrayOop.inline.hpp"
#include "oops/oop.inline.hpp"
#include "runtime/fieldDescriptor.inline.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "utilities/growableArray.hpp"

namespace {

const char* const map_class = "java/lang/ThreadLocal$ThreadLocalMap";
const char* const map_signature = "Ljava/lang/ThreadLocal$ThreadLocalMap;";
const char* const entry_class = "java/lang/ThreadLocal$ThreadLocalMap$Entry";
const char* const pair_signature = "(Ljava/lang/ThreadLocal;Ljava/lang/Object;)V";

int thread_map_offset = -1;  // Thread.inheritableThreadLocals
int table_offset = -1;       // ThreadLocalMap.table
int value_offset = -1;       // ThreadLocalMap.Entry.value

int field_offset(InstanceKlass* holder, const char* name, const char* signature) {
  fieldDescriptor fd;
  TempNewSymbol n = SymbolTable::new_symbol(name);
  TempNewSymbol s = SymbolTable::new_symbol(signature);
  guarantee(holder->find_local_field(n, s, &fd), "djava: %s has no field %s %s",
            holder->external_name(), signature, name);
  return fd.offset();
}

InstanceKlass* boot_class(const char* name, TRAPS) {
  TempNewSymbol n = SymbolTable::new_symbol(name);
  Klass* k = SystemDictionary::resolve_or_fail(n, true, CHECK_NULL);
  InstanceKlass* ik = InstanceKlass::cast(k);
  ik->initialize(CHECK_NULL);
  return ik;
}

bool resolve_offsets(TRAPS) {
  if (value_offset >= 0) {
    return true;
  }
  InstanceKlass* map = boot_class(map_class, CHECK_false);
  InstanceKlass* entry = boot_class(entry_class, CHECK_false);
  thread_map_offset = field_offset(vmClasses::Thread_klass(), "inheritableThreadLocals", map_signature);
  table_offset = field_offset(map, "table", "[Ljava/lang/ThreadLocal$ThreadLocalMap$Entry;");
  value_offset = field_offset(entry, "value", "Ljava/lang/Object;");
  return true;
}

}  // namespace

Handle DsoInheritedLocals::snapshot(JavaThread* current, Handle thread, TRAPS) {
  if (!resolve_offsets(THREAD)) {
    return Handle();
  }
  Handle map(current, thread->obj_field(thread_map_offset));
  if (map.is_null()) {
    return Handle();
  }
  // The live entries (a key GC cleared is a stale entry: java skips it).
  int live = 0;
  objArrayOop table = (objArrayOop)map->obj_field(table_offset);
  for (int i = 0; table != NULL && i < table->length(); i++) {
    oop e = table->obj_at(i);
    if (e != NULL && java_lang_ref_Reference::weak_referent_no_keepalive(e) != NULL) {
      live++;
    }
  }
  if (live == 0) {
    return Handle();
  }
  objArrayOop made = oopFactory::new_objArray(vmClasses::Object_klass(), 2 * live, CHECK_(Handle()));
  // No safepoint from here: the table is read again after the allocation.
  table = (objArrayOop)map->obj_field(table_offset);
  int at = 0;
  for (int i = 0; i < table->length() && at < 2 * live; i++) {
    oop e = table->obj_at(i);
    oop key = e != NULL ? java_lang_ref_Reference::weak_referent_no_keepalive(e) : (oop)NULL;
    if (key != NULL) {
      made->obj_at_put(at++, key);
      made->obj_at_put(at++, e->obj_field(value_offset));
    }
  }
  return Handle(current, made);
}

void DsoInheritedLocals::install(JavaThread* current, Handle thread, uint64_t snapshot_id, TRAPS) {
  if (snapshot_id == 0 || !resolve_offsets(THREAD)) {
    return;
  }
  oop attached = DsoHeap::attach(current, snapshot_id, CHECK);
  objArrayHandle pairs(current, (objArrayOop)attached);
  GrowableArray<Handle> items;
  DsoHeap::begin_access(current, pairs, false, CHECK);
  for (int i = 0; i < pairs->length(); i++) {
    items.append(Handle(current, pairs->obj_at(i)));
  }
  DsoHeap::end_access(pairs());
  if (items.length() < 2) {
    return;
  }
  // new ThreadLocalMap(firstKey, firstValue), then set(key, value) for the
  // others: what ThreadLocal.createMap and set do for the thread itself.
  InstanceKlass* map_klass = boot_class(map_class, CHECK);
  TempNewSymbol pair = SymbolTable::new_symbol(pair_signature);
  JavaCallArguments first;
  first.push_oop(items.at(0));
  first.push_oop(items.at(1));
  Handle map = JavaCalls::construct_new_instance(map_klass, pair, &first, CHECK);
  TempNewSymbol set_name = SymbolTable::new_symbol("set");
  for (int i = 2; i + 1 < items.length(); i += 2) {
    JavaValue result(T_VOID);
    JavaCalls::call_special(&result, map, map_klass, set_name, pair, items.at(i), items.at(i + 1),
                            CHECK);
  }
  thread->obj_field_put(thread_map_offset, map());
}
