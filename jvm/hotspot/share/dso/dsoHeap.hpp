/*
 * djava: the node's side of the shared heap, between the interpreter, the
 * replica table and the shared-object cache (libdjava_node.so).
 *
 * Publication is lazy: an object becomes shared when it escapes (the root
 * of a publication, or a reference met while encoding a shared object's
 * bytes for another node: dsoMarshal.cpp); it then gets an id from this
 * node's range and a chunk in state M here, with no message. Strings and
 * classes travel by value and by name and are never published.
 *
 * A replica made for a reference from elsewhere starts empty, in state I:
 * its first access fetches its bytes (the cache's install callback decodes
 * them into it). The cache's produce callback encodes a replica's bytes for
 * a flush. Replicas are held strongly for now (see docs/HEAP.md: a replica
 * in S may not be collected until the cache can drop its copy).
 */

#ifndef SHARE_DSO_DSOHEAP_HPP
#define SHARE_DSO_DSOHEAP_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "runtime/handles.hpp"
#include "utilities/growableArray.hpp"
#include "utilities/exceptions.hpp"

#include "dso/abi/sos_client.h"

class JavaThread;
class Klass;

class DsoHeap : AllStatic {
 public:
  // The callbacks the node's cache is connected with.
  static const djava_sos_callbacks* callbacks();
  static void set_client(djava_sos_client* client) { _client = client; }
  static bool is_enabled() { return _client != NULL; }

  // Makes obj shared (a no-op if it is, or if it travels by value); returns
  // its id, or 0 for a by-value object. Throws IllegalArgumentException for
  // an object that cannot be shared (native state, locked).
  static uint64_t publish(JavaThread* current, Handle obj, TRAPS);
  // Publishes now, on this thread, the local objects reachable from root
  // through local objects (a shipped thread's closure). The objects the
  // current thread holds locked are added to stack_locked: it must hand
  // their locks to the cluster (DsoMonitors::adopt_stack_lock), which a
  // flush could not do for it. One another thread holds locked stays local
  // (with what it alone leads to) until its referrer's bytes leave.
  // The first object that cannot be shared (unshareable_reason) reachable
  // from root through local objects, looking at no more than limit objects;
  // NULL if none. A thread whose closure holds one stays on its node
  // (DsoThreads::ship). No safepoint.
  static oop unshareable_in_local_closure(JavaThread* current, Handle root, int limit);
  static void publish_local_closure(JavaThread* current, Handle root,
                                    GrowableArrayCHeap<Handle, mtInternal>* stack_locked);

  // The same for a local object met while encoding; returns its replica
  // index, or 0 if obj is locked (by any thread): the flush then waits.
  // Must not safepoint. obj must be shareable (see foreign_number).
  static uint publish_referenced(oop obj, uint64_t program);

  // An object of this node that cannot be shared but that a shared object
  // references ("foreign" elsewhere): its number here, so that this node
  // maps the reference back to it. Must not safepoint.
  static uint32_t foreign_number(oop obj);
  static oop foreign_object(uint32_t number);
  // On another node, what such a reference reads as: an instance of its
  // class that refuses every use, naming the class and its node.
  static oop foreign_replica(JavaThread* current, uint64_t program, uint32_t owner_node,
                             uint32_t number, const char* class_name, TRAPS);
  // Ids of foreign replicas: the top bit, then the owner node and number.
  static bool is_foreign_id(uint64_t id) { return (id >> 63) != 0; }
  static uint32_t foreign_owner(uint64_t id) { return (uint32_t)((id >> 32) & 0x7fffffff); }

  // The replica of shared object id, made empty if this node has none.
  // class_name in internal form. elems_shift: an array kept in blocks of
  // 2^elems_shift elements (0: whole).
  static oop replica_of(JavaThread* current, uint64_t program, uint64_t id,
                        const char* class_name, uint identity_hash, uint array_length,
                        int elems_shift, TRAPS);
  // The replica of shared object id, fetched with its bytes if this node
  // has none: an id learned with nothing else (a shipped thread, a root).
  static oop attach(JavaThread* current, uint64_t id, TRAPS);
  // A class of program by its internal name, from the program's loader: the
  // application class loader on its launching node, the loader a thread
  // server registered for it (register_loader) elsewhere.
  static Klass* resolve_class(JavaThread* current, uint64_t program, const char* class_name, TRAPS);
  // That loader (NULL if this node runs nothing of program).
  static oop loader_of_program(uint64_t program);
  static void register_loader(JavaThread* current, uint64_t program, Handle loader);
  static void drop_loader(uint64_t program);
  // A thread server forgets an ended program's shared objects, once its
  // threads here have ended: the cache forgets their chunks and they become
  // ordinary local objects that GC collects (with their classes and loader).
  // Writes what it did (or why it kept them) into summary, for the log.
  static void drop_program(JavaThread* current, uint64_t program, char* summary, size_t length);
  // The program whose classes a thread server's loader loads; 0 if none.
  static uint64_t program_of_loader(oop loader);
  // Whether this thread server still runs program (its loader is registered).
  static bool runs_program(uint64_t program);

  // Begins a read or write access to replica obj (a miss blocks this
  // thread, safepoint-safe, while the cache fetches); throws on failure
  // (lost chunk, disconnected cluster, ...). end_access ends it.
  static void begin_access(JavaThread* current, Handle obj, bool write, TRAPS) {
    begin_access_range(current, obj, 0, max_jlong, write, THREAD);
  }
  static void end_access(oop obj) { end_access_range(obj, 0, max_jlong); }
  // The same for the bytes [from, to) of obj (offsets in the object): of
  // an array kept in blocks, the blocks that hold them, each its own
  // access, begun in ascending order; of any other object, the whole.
  // Holding several blocks while another begins cannot deadlock: every
  // thread that holds more than one block takes them in one order (a
  // block's id), and one that holds a single block waits for nothing.
  static void begin_access_range(JavaThread* current, Handle obj, jlong from, jlong to,
                                 bool write, TRAPS);
  static void end_access_range(oop obj, jlong from, jlong to);
  // The chunk that holds the byte at offset in replica obj: its own, or
  // for an array kept in blocks, that block's (looked up here on first
  // use). NULL, with an exception pending, if that fails.
  static djava_sos_chunk* chunk_at(JavaThread* current, oop obj, jlong offset, TRAPS);

  static uint64_t id_of(oop replica);

  // The shared-object cache's own thread, attached to the VM on first use
  // (it produces bytes for flushes and waits for writers), in the system
  // thread group: attaching constructs a java.lang.Thread, which locks its
  // group, and a program thread may hold the main group's lock while it
  // waits for a miss only this thread can complete (ThreadGroup.enumerate
  // reading Thread.eetop). prepare_cache_thread, at node join, keeps the
  // group for it.
  static void prepare_cache_thread(JavaThread* current);
  static JavaThread* attach_cache_thread();
  // Objects this node published (PrintDistributedStatistics).
  static size_t published_count();
  // Why obj cannot be shared, or NULL if it can.
  static const char* unshareable_reason(oop obj);
  // Whether the field at offset of an instance of k stays on its node: it
  // neither leaves it nor is overwritten there (a Thread's state here, a
  // Throwable's backtrace). *size is its size. No safepoint.
  static bool is_node_local_field(Klass* k, int offset, int* size);

 private:
  static djava_sos_client* _client;
};

#endif // SHARE_DSO_DSOHEAP_HPP
