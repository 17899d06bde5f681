/*
 * djava: the reclaim thread, a VM-internal daemon that lets the cluster
 * free what this node no longer references.
 *
 * GC only reports that replicas died (DsoReplicaTable's dead-handle
 * callback). A few times a second this thread frees their entries and
 * settles their statistics (DsoStatistics::settle), which unnames their
 * chunks in the cache; the cache then releases them to sos-server in
 * batches, and the server frees a chunk once no node holds it and no
 * reachable chunk names it (docs/SOS.md, "Freeing chunks while a program
 * runs"). Without it, entries were reclaimed only when the node next
 * published or materialized an object, and their chunks never released.
 * It also asks for a collection when the replicas made since the last one
 * reach a bound: a program streaming small objects through the cluster
 * would otherwise fill no heap, and never let the cluster free them.
 */

#ifndef SHARE_DSO_DSORECLAIM_HPP
#define SHARE_DSO_DSORECLAIM_HPP

#include "memory/allStatic.hpp"

class JavaThread;

class DsoReclaim : AllStatic {
 public:
  static void start(JavaThread* current);

 private:
  static void thread_entry(JavaThread* self, JavaThread* THREAD);
};

#endif // SHARE_DSO_DSORECLAIM_HPP
