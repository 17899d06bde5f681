/*
 * djava: a node initializes the program classes whose objects arrive.
 *
 * An object that arrives from the cluster is not a `new` here (JLS 12.4.1):
 * DsoHeap::replica_of links its class and leaves it uninitialized, since
 * initializing there, inside a decode, could wait for a class another
 * thread of this node is initializing while that thread waits for one the
 * decode holds. But a class whose instances run here uninitialized keeps
 * the compilers from inlining its methods (C1 and C2 refuse a holder not
 * initialized) and has C2 trap at every virtual call to it
 * (Reason_uninitialized, then recompile): a thread server that only reads
 * the launcher's objects ran RayTracer's hot loop in the interpreter after
 * 183 such traps in one run.
 *
 * Its class was initialized where the object was made (or is being: then
 * its initializer holds the class's cluster monitor until it is done), so
 * initializing it here takes the outcome from the statics chunk and never
 * runs <clinit> (DsoStatics). A daemon thread of the node does that, off
 * every decode, for each program class a replica of which was made while
 * it was not initialized. The JDK's classes, whose statics are each node's,
 * are left to their first use.
 */

#ifndef SHARE_DSO_DSOCLASSINIT_HPP
#define SHARE_DSO_DSOCLASSINIT_HPP

#include "memory/allStatic.hpp"

class InstanceKlass;
class JavaThread;

class DsoClassInit : AllStatic {
 public:
  // At join: the daemon that initializes the queued classes.
  static void start(JavaThread* current);
  // A replica of ik was made: queues ik for initialization if it is a
  // program class not initialized yet. No safepoint; cheap when ik is
  // initialized already.
  static void replica_made(JavaThread* current, InstanceKlass* ik);

 private:
  static void thread_entry(JavaThread* self, JavaThread* THREAD);
};

#endif // SHARE_DSO_DSOCLASSINIT_HPP
