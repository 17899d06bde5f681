/*
 * djava: -XX:+PrintDistributedStatistics, per class (see the header).
 */

#include "precompiled.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoMonitors.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoStatics.hpp"
#include "dso/dsoFence.hpp"
#include "dso/dsoStatistics.hpp"
#include "dso/dsoThreads.hpp"
#include "memory/resourceArea.hpp"
#include "oops/arrayKlass.hpp"
#include "oops/instanceKlass.hpp"
#include "oops/oop.inline.hpp"
#include "oops/weakHandle.inline.hpp"
#include "runtime/atomic.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/mutexLocker.hpp"
#include "runtime/signature.hpp"
#include "runtime/safepointVerifiers.hpp"
#include "runtime/os.inline.hpp"
#include "utilities/growableArray.hpp"
#include "utilities/ostream.hpp"
#include "utilities/resourceHash.hpp"

namespace {

struct ClassRow {
  const char* name;
  uint64_t objects;
  uint64_t blocks;
  uint64_t published;
  uint64_t lock_enters;
  uint64_t lock_wait_ns;
  djava_sos_stats cache;
};

// One entry's part, taken under the table's lock; the chunk's counters are
// read afterwards (a chunk's mutex is never taken under that lock: a flush
// holds the chunk's mutex and may publish).
struct EntryShare {
  const char* name;
  djava_sos_chunk* chunk;
  bool published;
  uint64_t lock_enters;
  uint64_t lock_wait_ns;
  bool collected;
  bool block;  // a block of an array kept in blocks: its traffic, not an object
};

// The part of an entry whose replica was collected (retire()).
struct RetiredShare {
  Symbol* class_name;  // counted
  djava_sos_chunk* chunk;
  uint64_t program;
  bool published;
  uint64_t lock_enters;
  uint64_t lock_wait_ns;
  bool block;
};

GrowableArrayCHeap<RetiredShare, mtInternal>* retired = NULL;

// What the retired parts of a class came to once settled (settle()).
struct SettledRow {
  Symbol* class_name;  // counted
  uint64_t program;
  bool block;
  uint64_t objects;
  uint64_t published;
  uint64_t lock_enters;
  uint64_t lock_wait_ns;
  djava_sos_stats cache;
};

// Under the replica table's lock.
GrowableArrayCHeap<SettledRow, mtInternal>* settled = NULL;

void add_cache(djava_sos_stats* to, const djava_sos_stats& c) {
  to->misses += c.misses;
  to->upgrades += c.upgrades;
  to->invalidations += c.invalidations;
  to->flushes += c.flushes;
  to->bytes_in += c.bytes_in;
  to->bytes_out += c.bytes_out;
  to->deferred_flushes += c.deferred_flushes;
}

unsigned chunk_hash(djava_sos_chunk* const& c) {
  return (unsigned)((uintptr_t)c >> 4);
}

bool chunk_equals(djava_sos_chunk* const& a, djava_sos_chunk* const& b) {
  return a == b;
}

typedef ResourceHashtable<djava_sos_chunk*, int, chunk_hash, chunk_equals, 4099> ShareIndex;

// A class's label from its internal name, as Klass::external_name() spells
// it ('.' for '/', a hidden class's '+' as '/'), arrays with "[]" after the
// element type: "[[Ljava/lang/String;" is "java.lang.String[][]". From the
// name, so that a replica GC collected (its Symbol is kept) is labelled as
// a live one.
const char* label_of_name(Symbol* name) {
  char* base = name->as_C_string();  // a resource copy: edited in place
  int dims = 0;
  while (base[0] == '[') {
    base++;
    dims++;
  }
  if (dims > 0 && base[0] == 'L') {
    base++;
    base[strlen(base) - 1] = '\0';  // the ';'
  } else if (dims > 0) {
    base = (char*)type2name(Signature::basic_type(base[0]));
  }
  size_t len = strlen(base) + 2 * (size_t)dims + 1;
  char* label = NEW_RESOURCE_ARRAY(char, len);
  strcpy(label, base);
  for (char* p = label; *p != '\0'; p++) {
    if (*p == '/') *p = '.';
    else if (*p == '+') *p = '/';
  }
  for (int i = 0; i < dims; i++) {
    strcat(label, "[]");
  }
  return label;
}

unsigned name_hash(const char* const& s) {
  unsigned h = 2166136261u;
  for (const char* p = s; *p != '\0'; p++) {
    h = (h ^ (unsigned char)*p) * 16777619u;
  }
  return h;
}

bool name_equals(const char* const& a, const char* const& b) {
  return strcmp(a, b) == 0;
}

typedef ResourceHashtable<const char*, int, name_hash, name_equals, 1031> RowIndex;

// "int[][]", "java.lang.String[]", "Foo (static fields)", "Foo".
const char* label_of(oop obj) {
  if (java_lang_Class::is_instance(obj)) {
    Klass* k = java_lang_Class::as_Klass(obj);
    const char* name = k != NULL ? k->external_name() : "a primitive type";
    size_t len = strlen(name) + 20;
    char* label = NEW_RESOURCE_ARRAY(char, len);
    jio_snprintf(label, len, "%s (static fields)", name);
    return label;
  }
  return label_of_name(obj->klass()->name());
}

uint64_t program_of_replica(oop obj, djava_sos_chunk* chunk) {
  if (java_lang_Class::is_instance(obj)) {
    Klass* k = java_lang_Class::as_Klass(obj);
    return k != NULL && k->is_instance_klass() ? DsoStatics::program_of(InstanceKlass::cast(k)) : 0;
  }
  const djava_sos_meta* meta = DsoNode::lib().djava_sos_meta_of(chunk);
  return meta != NULL ? meta->program : 0;
}

uint64_t moved(const ClassRow& r) {
  return r.cache.bytes_in + r.cache.bytes_out;
}

int by_traffic(ClassRow* a, ClassRow* b) {
  if (moved(*a) != moved(*b)) return moved(*a) > moved(*b) ? -1 : 1;
  if (a->cache.misses != b->cache.misses) return a->cache.misses > b->cache.misses ? -1 : 1;
  if (a->lock_enters != b->lock_enters) return a->lock_enters > b->lock_enters ? -1 : 1;
  return strcmp(a->name, b->name);
}

// Program threads started on this node, by program (few at once).
struct ThreadsStarted {
  uint64_t program;
  uint64_t count;
};
GrowableArrayCHeap<ThreadsStarted, mtInternal>* threads_started = NULL;

// Serializes settle() with itself and with print(): the shares a settle
// took from the retired list are in neither list until it has read their
// counters (in native state: a chunk's mutex may be held by a flush waiting
// for a safepoint), and a print meanwhile would miss them (a program's
// "published here" came out thousands short). Waiting for it is safepoint
// safe.
Mutex* settle_lock() {
  static Mutex* lock = new Mutex(Mutex::nonleaf, "DsoStatistics_settle_lock", true,
                                 Mutex::_safepoint_check_always);
  return lock;
}

// A plain mutex, never held across anything else.
os::PlatformMutex* threads_started_lock() {
  static os::PlatformMutex* mutex = new os::PlatformMutex();
  return mutex;
}

uint64_t threads_started_of(uint64_t program) {
  uint64_t count = 0;
  threads_started_lock()->lock();
  for (int i = 0; threads_started != NULL && i < threads_started->length(); i++) {
    if (threads_started->at(i).program == program) count = threads_started->at(i).count;
  }
  threads_started_lock()->unlock();
  return count;
}

}  // namespace

void DsoStatistics::thread_started(uint64_t program) {
  threads_started_lock()->lock();
  if (threads_started == NULL) {
    threads_started = new GrowableArrayCHeap<ThreadsStarted, mtInternal>(4);
  }
  bool counted = false;
  for (int i = 0; i < threads_started->length() && !counted; i++) {
    if (threads_started->at(i).program == program) {
      threads_started->at(i).count++;
      counted = true;
    }
  }
  if (!counted) {
    ThreadsStarted fresh = { program, 1 };
    threads_started->append(fresh);
  }
  threads_started_lock()->unlock();
}

void DsoStatistics::print(JavaThread* current, outputStream* st, uint64_t program,
                          const char* title) {
  // Held to the end of the snapshot: the reclaim thread's settle may have
  // taken retired shares it has not yet made rows of, in neither list.
  MutexLocker settling(current, settle_lock());
  settle_locked(current);
  ResourceMark rm(current);
  // The snapshot lists handles another program's end may forget meanwhile.
  DsoHandlesHeld held(current);
  GrowableArray<EntryShare> shares;
  GrowableArray<SettledRow> settled_rows;
  {
    MutexLocker ml(DsoReplicaTable::_lock, Mutex::_no_safepoint_check_flag);
    NoSafepointVerifier nsv;
    if (Atomic::load(&DsoReplicaTable::_has_dead)) {
      DsoReplicaTable::reclaim_dead_locked();  // their parts are retired
    }
    for (int i = 0; settled != NULL && i < settled->length(); i++) {
      if (program == 0 || settled->at(i).program == program) {
        settled_rows.append(settled->at(i));
      }
    }
    for (uint index = 1; index < DsoReplicaTable::_high_water; index++) {
      DsoReplica* e = &DsoReplicaTable::_entries[index];
      if (e->_replica.is_empty() || e->_chunk == NULL) {
        continue;
      }
      oop obj = e->_replica.peek();
      // An array in blocks: its own chunk is seldom fetched, so its meta
      // may not be here; its program is the entry's.
      uint64_t of = e->_blocks != NULL ? e->_program : program_of_replica(obj, e->_chunk);
      if (obj == NULL || (program != 0 && of != program)) {
        continue;
      }
      EntryShare s = { label_of(obj), e->_chunk, e->_published_here, e->_lock_enters,
                       e->_lock_wait_ns, false, false };
      shares.append(s);
      for (uint32_t k = 0; e->_blocks != NULL && k < e->_blocks->_count; k++) {
        djava_sos_chunk* c = Atomic::load_acquire(&e->_blocks->_chunks[k]);
        if (c != NULL) {
          EntryShare b = { s.name, c, false, 0, 0, false, true };
          shares.append(b);
        }
      }
    }
    for (int i = 0; retired != NULL && i < retired->length(); i++) {
      const RetiredShare& r = retired->at(i);
      if (program == 0 || r.program == program) {
        EntryShare s = { label_of_name(r.class_name), r.chunk, r.published, r.lock_enters,
                         r.lock_wait_ns, true, r.block };
        shares.append(s);
      }
    }
  }
  // A chunk counts once: an object collected here and met again later had
  // two replicas, one after the other, and the chunk's counters cover both.
  ShareIndex by_chunk;
  for (int i = 0; i < shares.length(); i++) {
    EntryShare& s = shares.at(i);
    int* first = by_chunk.get(s.chunk);
    if (first == NULL) {
      by_chunk.put(s.chunk, i);
      continue;
    }
    EntryShare& f = shares.at(*first);
    f.published |= s.published;
    f.lock_enters += s.lock_enters;
    f.lock_wait_ns += s.lock_wait_ns;
    f.collected &= s.collected;
    s.chunk = NULL;  // merged
  }
  RowIndex index;
  GrowableArray<ClassRow> rows;
  ClassRow total = {};
  uint64_t collected = 0;
  for (int i = 0; i < settled_rows.length(); i++) {
    const SettledRow& s = settled_rows.at(i);
    const char* name = label_of_name(s.class_name);
    int* at = index.get(name);
    if (at == NULL) {
      ClassRow fresh = {};
      fresh.name = name;
      rows.append(fresh);
      index.put(name, rows.length() - 1);
      at = index.get(name);
    }
    collected += s.block ? 0 : s.objects;
    ClassRow* rows_of[] = { rows.adr_at(*at), &total };
    for (ClassRow* r : rows_of) {
      r->objects += s.block ? 0 : s.objects;
      r->blocks += s.block ? s.objects : 0;
      r->published += s.published;
      r->lock_enters += s.lock_enters;
      r->lock_wait_ns += s.lock_wait_ns;
      add_cache(&r->cache, s.cache);
    }
  }
  for (int i = 0; i < shares.length(); i++) {
    const EntryShare& s = shares.at(i);
    if (s.chunk == NULL) {
      continue;
    }
    collected += s.collected && !s.block ? 1 : 0;
    int* at = index.get(s.name);
    if (at == NULL) {
      ClassRow fresh = {};
      fresh.name = s.name;
      rows.append(fresh);
      index.put(s.name, rows.length() - 1);
      at = index.get(s.name);
    }
    djava_sos_stats c;
    {
      // A chunk's mutex may be held by a flush waiting for a safepoint.
      ThreadToNativeFromVM in_native(current);
      DsoNode::lib().djava_sos_chunk_stats(s.chunk, &c);
    }
    ClassRow* rows_of[] = { rows.adr_at(*at), &total };
    for (ClassRow* r : rows_of) {
      r->objects += s.block ? 0 : 1;
      r->blocks += s.block ? 1 : 0;
      r->published += s.published ? 1 : 0;
      r->lock_enters += s.lock_enters;
      r->lock_wait_ns += s.lock_wait_ns;
      add_cache(&r->cache, c);
    }
  }
  rows.sort(by_traffic);

  st->print_cr("djava statistics of %s (%s)%s: threads shipped %zu, shared objects here "
               UINT64_FORMAT " (published here " UINT64_FORMAT ", collected " UINT64_FORMAT
               "); cache misses " UINT64_FORMAT
               " (upgrades " UINT64_FORMAT "), invalidations " UINT64_FORMAT ", flushes "
               UINT64_FORMAT ", bytes in " UINT64_FORMAT ", out " UINT64_FORMAT
               "; monitor enters " UINT64_FORMAT " (%.1f ms)",
               DsoNode::node_name(), DsoNode::is_thread_server() ? "thread server" : "launcher",
               title, DsoThreads::shipped_count(), total.objects, total.published, collected,
               total.cache.misses, total.cache.upgrades, total.cache.invalidations,
               total.cache.flushes, total.cache.bytes_in, total.cache.bytes_out,
               total.lock_enters, total.lock_wait_ns / 1e6);
  // Right under the first line, where bench/apps/run.py reads it.
  if (total.cache.deferred_flushes > 0) {
    st->print_cr("  flushes put off until an object they reference was unlocked or a fence "
                 "passed: " UINT64_FORMAT, total.cache.deferred_flushes);
  }
  if (program != 0 && DsoNode::is_thread_server()) {
    st->print_cr("  threads of this program run here: " UINT64_FORMAT, threads_started_of(program));
  }
  if (DsoThreads::kept_local_count() > 0) {
    st->print_cr("  threads run here because they reach objects that cannot be shared "
                 "(-Xlog:dso says which): %zu", DsoThreads::kept_local_count());
  }
  if (DsoThreads::unparks_sent_count() + DsoThreads::unparks_received_count() > 0) {
    st->print_cr("  unparks across nodes (this node, every program): sent " UINT64_FORMAT
                 ", received " UINT64_FORMAT, DsoThreads::unparks_sent_count(),
                 DsoThreads::unparks_received_count());
  }
  // Every message, whatever it was for: the cache's, the monitor client's
  // and the thread manager's (what the counters above estimate by kind).
  uint64_t traffic[4];
  DsoNode::lib().djava_node_traffic(traffic);
  st->print_cr("  messages of this node (every program, every connection): sent " UINT64_FORMAT
               " (" UINT64_FORMAT " bytes), received " UINT64_FORMAT " (" UINT64_FORMAT " bytes)",
               traffic[0], traffic[1], traffic[2], traffic[3]);
  // The monitor service's part of those, by kind (monitor.proto's names).
  if (DsoMonitors::client() != NULL) {
    char monitor_traffic[512];
    monitor_traffic[0] = '\0';
    DsoNode::lib().djava_monitor_traffic(DsoMonitors::client(), monitor_traffic,
                                         sizeof(monitor_traffic));
    st->print_cr("  monitor service messages of this node, by kind: %s", monitor_traffic);
  }
  // The shared-object cache's part, by kind (sos.proto's names).
  char cache_traffic[1024];
  DsoNode::lib().djava_sos_traffic(DsoNode::sos(), cache_traffic, sizeof(cache_traffic));
  st->print_cr("  cache messages of this node, by kind: %s", cache_traffic);
  uint64_t connections[2];
  DsoNode::lib().djava_node_connections(connections);
  st->print_cr("  connections of this node (-XX:DjavaTransport): " UINT64_FORMAT " over ucx, "
               UINT64_FORMAT " over tcp", connections[1], connections[0]);
  djava_sos_stats node_wide;
  DsoNode::lib().djava_sos_get_stats(DsoNode::sos(), &node_wide);
  if (node_wide.chunks_released > 0) {
    st->print_cr("  shared objects this node let go of, for the cluster to free (every program): "
                 UINT64_FORMAT " in " UINT64_FORMAT " messages", node_wide.chunks_released,
                 node_wide.release_messages);
  }
  if (DsoFence::flushes_waited() > 0) {
    st->print_cr("  of this node's flushes, " UINT64_FORMAT " waited for a fence with every "
                 "thread (a newly shared object's first; fences run: " UINT64_FORMAT ")",
                 DsoFence::flushes_waited(), DsoFence::fences_run());
  }
  if (DsoFence::frames_deoptimized() > 0) {
    st->print_cr("  frames of C2's code deoptimized by fences (they held an object being "
                 "published): " UINT64_FORMAT, DsoFence::frames_deoptimized());
  }
  if (rows.is_empty()) {
    return;
  }
  const int shown = MIN2(rows.length(), 20);
  int width = 5;
  for (int i = 0; i < shown; i++) {
    width = MAX2(width, (int)MIN2(strlen(rows.at(i).name), (size_t)60));
  }
  // blocks: of arrays kept in blocks, those this node used (their misses
  // and bytes are in the class's row): false sharing inside an array shows
  // as many misses on few blocks.
  st->print_cr("  %-*s %8s %9s %8s %8s %8s %10s %10s %8s %9s %8s", width, "class", "objects",
               "published", "misses", "invalid", "flushes", "bytes in", "bytes out", "enters",
               "enter ms", "blocks");
  for (int i = 0; i < shown; i++) {
    const ClassRow& r = rows.at(i);
    st->print_cr("  %-*.*s %8" PRIu64 " %9" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
                 " %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %9.1f %8" PRIu64,
                 width, width, r.name, r.objects, r.published, r.cache.misses,
                 r.cache.invalidations, r.cache.flushes, r.cache.bytes_in, r.cache.bytes_out,
                 r.lock_enters, r.lock_wait_ns / 1e6, r.blocks);
  }
  if (rows.length() > shown) {
    st->print_cr("  ... and %d more classes", rows.length() - shown);
  }
}

void DsoStatistics::retire(const DsoReplica* e) {
  assert_lock_strong(DsoReplicaTable::_lock);
  if (e->_chunk == NULL || e->_class_name == NULL) {
    return;
  }
  if (retired == NULL) {
    retired = new GrowableArrayCHeap<RetiredShare, mtInternal>(64);
  }
  // The cache keeps each chunk until settle() has read its counters.
  e->_class_name->increment_refcount();
  DsoNode::lib().djava_sos_retain(e->_chunk);
  retired->append(RetiredShare{e->_class_name, e->_chunk, e->_program, e->_published_here,
                               e->_lock_enters, e->_lock_wait_ns, false});
  for (uint32_t k = 0; e->_blocks != NULL && k < e->_blocks->_count; k++) {
    djava_sos_chunk* c = e->_blocks->_chunks[k];
    if (c != NULL) {
      e->_class_name->increment_refcount();
      DsoNode::lib().djava_sos_retain(c);
      retired->append(RetiredShare{e->_class_name, c, e->_program, false, 0, 0, true});
    }
  }
}

bool DsoStatistics::has_retired() {
  return retired != NULL && retired->length() > 0;  // racy: a hint for the reclaim thread
}

void DsoStatistics::settle(JavaThread* current) {
  MutexLocker settling(current, settle_lock());
  settle_locked(current);
}

void DsoStatistics::settle_locked(JavaThread* current) {
  assert_lock_strong(settle_lock());
  GrowableArrayCHeap<RetiredShare, mtInternal> taken;
  {
    MutexLocker ml(DsoReplicaTable::_lock, Mutex::_no_safepoint_check_flag);
    if (Atomic::load(&DsoReplicaTable::_has_dead)) {
      DsoReplicaTable::reclaim_dead_locked();
    }
    for (int i = 0; retired != NULL && i < retired->length(); i++) {
      taken.append(retired->at(i));
    }
    if (retired != NULL) {
      retired->clear();
    }
  }
  if (taken.is_empty()) {
    return;
  }
  // Retained, the chunks stay in the cache; held, no program's end frees
  // them meanwhile (it forgets handles whatever they retain).
  DsoHandlesHeld held(current);
  GrowableArrayCHeap<djava_sos_stats, mtInternal> counters(taken.length());
  {
    // A chunk's mutex may be held by a flush waiting for a safepoint.
    ThreadToNativeFromVM in_native(current);
    for (int i = 0; i < taken.length(); i++) {
      djava_sos_stats c;
      DsoNode::lib().djava_sos_take_chunk_stats(taken.at(i).chunk, &c);
      counters.append(c);
    }
  }
  {
    MutexLocker ml(DsoReplicaTable::_lock, Mutex::_no_safepoint_check_flag);
    if (settled == NULL) {
      settled = new GrowableArrayCHeap<SettledRow, mtInternal>(16);
    }
    for (int i = 0; i < taken.length(); i++) {
      const RetiredShare& r = taken.at(i);
      SettledRow* row = NULL;
      for (int j = 0; j < settled->length() && row == NULL; j++) {
        SettledRow* s = settled->adr_at(j);
        if (s->class_name == r.class_name && s->program == r.program && s->block == r.block) {
          row = s;
        }
      }
      if (row == NULL) {
        SettledRow fresh = {};
        fresh.class_name = r.class_name;
        fresh.program = r.program;
        fresh.block = r.block;
        settled->append(fresh);
        row = settled->adr_at(settled->length() - 1);
      } else {
        r.class_name->decrement_refcount();  // the row holds one
      }
      row->objects++;
      row->published += r.published ? 1 : 0;
      row->lock_enters += r.lock_enters;
      row->lock_wait_ns += r.lock_wait_ns;
      add_cache(&row->cache, counters.at(i));
    }
  }
  for (int i = 0; i < taken.length(); i++) {
    DsoNode::lib().djava_sos_unretain(taken.at(i).chunk);  // never waits
  }
}

void DsoStatistics::retained_chunks(GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* out) {
  assert_lock_strong(DsoReplicaTable::_lock);
  for (int i = 0; retired != NULL && i < retired->length(); i++) {
    out->append(retired->at(i).chunk);
  }
}

void DsoStatistics::forget_program(uint64_t program,
                                   GrowableArrayCHeap<djava_sos_chunk*, mtInternal>* released) {
  assert_lock_strong(DsoReplicaTable::_lock);
  threads_started_lock()->lock();
  for (int i = 0; threads_started != NULL && i < threads_started->length(); i++) {
    if (threads_started->at(i).program == program) {
      threads_started->delete_at(i);
      break;
    }
  }
  threads_started_lock()->unlock();
  for (int i = 0; retired != NULL && i < retired->length();) {
    if (retired->at(i).program == program) {
      released->append(retired->at(i).chunk);
      retired->at(i).class_name->decrement_refcount();
      retired->delete_at(i);  // moves the last one here
    } else {
      i++;
    }
  }
  for (int i = 0; settled != NULL && i < settled->length();) {
    if (settled->at(i).program == program) {
      settled->at(i).class_name->decrement_refcount();
      settled->delete_at(i);
    } else {
      i++;
    }
  }
}
