/*
 * djava: Java monitors on shared objects.
 *
 * A shared object's monitor is the monitor service's (libdjava_node.so's
 * monitor client; leases make an uncontended re-acquire local). HotSpot's
 * own locking never touches a replica's mark: the interpreter sends every
 * lock of a replica to the runtime (patches/0009), and ObjectSynchronizer
 * hands enter, exit, wait, notify, JNI monitors and holdsLock of replicas
 * to this class. Blocking calls run in native state: GC and the other
 * threads go on.
 *
 * Memory model: an acquire through the service happens after the previous
 * owner's release; everything that owner wrote is either still in state M
 * at its node (an access here fetches it) or written back already, since
 * MSI coherence lets no stale copy be read. So an acquire sees every write
 * made before the matching release, on any node.
 */

#ifndef SHARE_DSO_DSOMONITORS_HPP
#define SHARE_DSO_DSOMONITORS_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "runtime/handles.hpp"
#include "utilities/exceptions.hpp"

#include "dso/abi/monitor_client.h"
#include "dso/dsoMark.hpp"

class JavaThread;
class ObjectMonitor;

class DsoMonitors : AllStatic {
 public:
  static void set_client(djava_monitor_client* client) { _client = client; }

  static bool is_shared(oop obj) { return obj != NULL && DsoMark::is_shared(obj->mark()); }

  // monitorenter, synchronized methods, JNI MonitorEnter, ObjectLocker.
  // Throws (an Error naming the object) only if the cluster fails.
  static void enter(JavaThread* current, Handle obj);
  // An object just published by the current thread while it holds it with
  // HotSpot's stack lock (Thread.start() is synchronized): the thread holds
  // the cluster's monitor instead, and the object's mark carries its tag
  // again, so that every node and every path sees it as shared.
  static void adopt_stack_lock(JavaThread* current, Handle obj, TRAPS);
  // Never blocks (it may run in a leaf call); an exit the service refuses
  // is logged. jni_exit throws IllegalMonitorStateException instead.
  static void exit(JavaThread* current, oop obj);
  static void jni_exit(JavaThread* current, oop obj, TRAPS);
  // A wait stays in the service's wait set until it ends, looking at the
  // thread's interrupt status (settable from any node) every poll interval.
  static void wait(JavaThread* current, Handle obj, jlong millis, bool interruptible, TRAPS);
  static void notify(JavaThread* current, Handle obj, bool all, TRAPS);
  // notifyAll in the monitor's next free turn, by a thread that need not
  // own it (a shipped thread's end, DsoThreads::end_without_monitor).
  static void signal_all(JavaThread* current, oop obj);
  static bool holds_lock(JavaThread* current, oop obj);

  // A wait in the service's wait set `wait_key` of `monitor` (an object id,
  // or a synchronizer's monitor, dsoSynchronizers.cpp), as a
  // djava_monitor_status; `parked`: the thread's state says parked rather
  // than in Object.wait. `place`: an acquirer's place in the monitor's line
  // (djava_monitor_wait_in_line), 0 if it waits in no line; such a wait
  // that times out or is interrupted may end without the monitor
  // (DJAVA_MON_CANCELLED).
  static int wait_in_service(JavaThread* current, uint64_t monitor, uint64_t wait_key,
                             uint64_t java_thread, jlong millis, bool interruptible,
                             bool parked, uint64_t place = 0);
  // Local waiters stepping aside for a publication. A put-off flush whose
  // bytes reference a local object that threads of this node wait on
  // (Object.wait), with no owner, cannot go until they stop waiting, and
  // what they wait for may be the very reader the flush is for. So the
  // flush wakes them (a spurious wake-up, JLS 17.2.1), and each, holding
  // the monitor again, lets go of it for up to a second instead of
  // returning at once: the flush's next retry publishes the object, and
  // the waiter takes the cluster's monitor, as often as it held HotSpot's,
  // and returns from wait() to re-check its condition (and wait again, now
  // at the service, where the other node's notify reaches it).
  // ask_waiters_to_step_aside: from the flush; `monitor` has waiters, so
  // it cannot be deflated meanwhile.
  static void ask_waiters_to_step_aside(JavaThread* current, ObjectMonitor* monitor);
  // step_aside_if_asked: after a local Object.wait returned and the thread
  // owns `monitor` again (patches/0028).
  static void step_aside_if_asked(JavaThread* current, Handle obj, ObjectMonitor* monitor);

  // Data leaves with the release (docs/SOS.md): before a release that the
  // service said another node waits for, what this node took exclusively
  // in the tenure goes home, named in the release. Sends only. whole: the
  // release is a wait (every re-entry released); jdk_only: a
  // synchronizer's release, which hands over only the JDK's objects.
  static void hand_over_before_release(uint64_t monitor, uint64_t program, uint64_t key,
                                       bool whole, bool jdk_only);

  // The thread's name in the monitor service.
  static uint64_t thread_key(JavaThread* thread);
  static djava_monitor_client* client() { return _client; }

 private:
  // Enters the monitor of the replica at index; a djava_monitor_status.
  static int enter_index(JavaThread* current, uint index);
  static int wait_polled(JavaThread* current, uint64_t monitor, uint64_t wait_key,
                         uint64_t java_thread, jlong millis, bool interruptible, uint64_t place);
  static void throw_for(JavaThread* current, int status, const char* what, oop obj, TRAPS);

  static djava_monitor_client* _client;
};

#endif // SHARE_DSO_DSOMONITORS_HPP
