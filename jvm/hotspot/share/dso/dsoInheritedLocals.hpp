/*
 * djava: a shipped thread's inheritable thread-locals.
 *
 * Java gives a new Thread, at construction, its parent's
 * InheritableThreadLocal values (through childValue), kept in the Thread's
 * own ThreadLocalMap: a node-local structure of weak references, which
 * cannot travel. When the thread is shipped, its starter takes a snapshot
 * of that map, an Object[] {key, value, ...} published with the thread
 * (SubmitThread.inherited_locals); the thread server running it makes the
 * replica's map from the snapshot before the thread runs, so get() in the
 * thread answers what it answers under java. Values are shared objects like
 * any others (a value that cannot be shared reads as a foreign object there).
 */

#ifndef SHARE_DSO_DSOINHERITEDLOCALS_HPP
#define SHARE_DSO_DSOINHERITEDLOCALS_HPP

#include "memory/allStatic.hpp"
#include "runtime/handles.hpp"
#include "utilities/exceptions.hpp"

class JavaThread;

class DsoInheritedLocals : AllStatic {
 public:
  // The starter's snapshot of thread's inheritable thread-locals: a new
  // Object[] {key, value, ...}; a null handle if it has none.
  static Handle snapshot(JavaThread* current, Handle thread, TRAPS);
  // On the node running thread: its map made from the shared snapshot
  // snapshot_id (0: none), before the thread starts.
  static void install(JavaThread* current, Handle thread, uint64_t snapshot_id, TRAPS);
};

#endif // SHARE_DSO_DSOINHERITEDLOCALS_HPP
