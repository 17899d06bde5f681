// MonitorTable: the monitor service's state machine for Java monitors on
// shared objects (JLS 17.1, 17.2), with no I/O and time passed in.
//
// Division of labour with the node (sos-client/monitor):
//  - the node counts re-entries of the thread that owns a monitor; the table
//    sees only first enter (Enter), last exit (Exit), Wait and Notify, and
//    records which cluster-wide thread owns each monitor;
//  - a grant may carry a *lease* (Terracotta's "greedy" lock): while the node
//    holds it, its threads enter and exit with no message. The table grants a
//    lease only when nobody else is queued and the monitor was not recalled
//    within `lease_cooldown` (a contended monitor is handed thread to thread,
//    not node to node, which bounds recall traffic);
//  - when any other request queues behind a lease, the table sends one Recall;
//    the node stops local grants at once and returns the lease when its local
//    owner (if any) exits. Queued requests are served FIFO, so a recalled
//    node cannot win the monitor back ahead of the requester: no livelock, no
//    starvation;
//  - a lease is granted only when the entry queue and the wait set are
//    empty, and a wait releases it. So while a node holds a lease nobody
//    waits on the monitor: the node can treat notify and Signal as no-ops
//    and answer a Query with nobody, without a message;
//  - node hand-offs: a Java monitor promises no order among its entrants,
//    so when the table grants a grouped request (a synchronized enter, or
//    an Object.wait waiter woken) it grants the node's other grouped
//    requests queued for the monitor too, as the grant's successors, ahead
//    of other nodes' requests queued before them (up to the first request
//    that is not grouped: a synchronizer's enter or a Signal keeps its
//    turn). The node hands the monitor from one to the next itself and
//    names the new owner in its Exit or Wait, so a hand-off between two
//    threads of one node costs no round trip. Bounded: a request of
//    another node waits for at most one such group per node queued ahead
//    of it, since a thread that enters again after its group was granted
//    queues at the end.
//
// Wait sets: a monitor has one per key. Key 0 is Object.wait's; the others
// serve java.util.concurrent's synchronizers on shared objects (acquirers,
// conditions). Notify and Signal wake only waiters of their key; interrupt
// and timeouts wake a waiter whatever its key. A Signal is a notify that
// needs no ownership: it queues FIFO with the enters and notifies in its
// turn, when the monitor is free (a waiter that checked its condition while
// owning the monitor and then waits cannot miss it). If then nobody is
// queued or waiting, the monitor may stay leased to the signalling node.
// A Signal may move its waiters instead, to the end of another wait set
// (a condition's to its lock's acquirers): a moved waiter has been signalled,
// so neither its deadline nor an interrupt wakes it any more, only a notify
// or Signal of its new key.
//
// The line: java.util.concurrent's acquirers wait in line, each at a place
// (a number, smaller is earlier) that it keeps across its wake-ups until it
// acquires, as an AQS queue node stays queued until its thread acquires:
// a woken acquirer that finds the synchronizer still taken waits again at
// its place, ahead of a newcomer that waited while it re-entered. Waiters
// in line are kept in the order of their places; a grant that ends a wait
// in line says whether the waiter is first in line (a fair synchronizer's
// turn). A waiter moved by a Signal gets a new place at the end.
//
// Failures: a node that dies fails every program it ran threads of; all
// requests of a failed program end with kFailed naming the reason, and any
// monitor the dead node owned is released. Monitors of a program are freed by
// FreeProgram when the program ends.
#ifndef DJAVA_MONITOR_MONITOR_TABLE_H_
#define DJAVA_MONITOR_MONITOR_TABLE_H_

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace djava {
namespace monitor {

using ObjectId = uint64_t;
using NodeId = uint64_t;     // one node = one connected process
using ProgramId = uint64_t;
using TimeNs = int64_t;      // monotonic nanoseconds, supplied by the caller
constexpr TimeNs kNoDeadline = -1;
constexpr NodeId kNoNode = 0;  // node ids start at 1
// A waiter's place in a monitor's line of acquirers (monitor.proto, Wait):
// kNotInLine, kNewPlace (the end of the line), or a place a grant reported.
constexpr uint64_t kNotInLine = 0;
constexpr uint64_t kNewPlace = UINT64_MAX;

// A Java thread, cluster-wide.
struct ThreadRef {
  ProgramId program = 0;
  uint64_t thread = 0;
  bool operator==(const ThreadRef& o) const {
    return program == o.program && thread == o.thread;
  }
  bool operator!=(const ThreadRef& o) const { return !(*this == o); }
  bool operator<(const ThreadRef& o) const {
    return program != o.program ? program < o.program : thread < o.thread;
  }
};

constexpr ThreadRef kNoThread{};

// Why a thread got the monitor (the Java-visible outcome of enter or wait).
// kSignalled: no thread got it; a Signal left the monitor leased to its node.
enum class Wake { kAcquired, kNotified, kTimedOut, kInterrupted, kSignalled };
const char* WakeName(Wake w);

// A waiter in a wait set with a key other than 0, or a thread queued to
// enter (key unused), as Query reports it.
struct QueuedWaiter {
  uint64_t key = 0;
  uint64_t java_thread = 0;  // its Thread object's shared id (0: none)
  ThreadRef thread;
};

// The end of a barrier's await, or a barrier op's answer (barrier_table.h).
enum class BarrierOutcome { kTripped, kLast, kBroken, kTimedOut, kInterrupted, kDone };

struct Event {
  enum Kind { kGranted, kRecall, kFailed, kQueue, kBusy, kBarrier, kWanted };
  explicit Event(Kind k) : kind(k) {}
  Kind kind;
  NodeId node = 0;          // addressee
  ObjectId object = 0;
  ThreadRef thread;         // kGranted, kFailed, kBusy
  bool lease = false;       // kGranted
  // kGranted: the node that owned the monitor last (kNoNode: nobody yet),
  // so the host can move the data written under it along (docs/SOS.md).
  NodeId from_node = kNoNode;
  Wake reason = Wake::kAcquired;
  // kGranted ending a wait in line: the waiter's place, and whether no
  // waiter with an earlier place waits or is queued to re-enter.
  uint64_t place = kNotInLine;
  bool first_in_line = false;
  // kGranted: the node's threads granted the monitor after this one, in
  // order (node hand-offs, see MonitorTable).
  struct Successor {
    ThreadRef thread;
    Wake reason = Wake::kAcquired;
  };
  std::vector<Successor> successors;
  // kGranted: a thread of another node is queued for the monitor already
  // (else a kWanted follows when one queues, once a tenure).
  bool wanted_elsewhere = false;
  // kGranted: threads of another node wait on the monitor (Object.wait, or
  // a condition's await), so a notify or signal during the tenure makes
  // them want it.
  bool waiters_elsewhere = false;
  uint64_t tenure = 0;      // kGranted, kWanted: the grant's number (Monitor::tenure)
  std::string error;        // kFailed; thread.thread == 0: the whole program failed
  uint64_t nonce = 0;       // kQueue: the Query's
  std::vector<QueuedWaiter> waiters;  // kQueue, longest waiting first
  // kQueue: the owner (owner_java_thread 0 if unknown, always under a
  // lease), and the threads queued to enter, first served first.
  bool owned = false;
  bool leased = false;
  uint64_t owner_java_thread = 0;
  std::vector<QueuedWaiter> entering;
  // kBarrier: the outcome, the arrival's index (kTripped, kLast), and the
  // barrier's state after an op (kDone).
  BarrierOutcome barrier = BarrierOutcome::kDone;
  uint32_t index = 0;
  bool broken = false;
  uint32_t waiting_count = 0;
};

class MonitorTable {
 public:
  struct Options {
    bool leases = true;
    TimeNs lease_cooldown = 20 * 1000 * 1000;  // 20 ms
    bool node_handoffs = true;  // grants name successors (see above)
    // A Java monitor's holder hears when another node's thread queues for
    // it (kWanted, Granted.wanted_elsewhere), so that what it wrote under
    // the monitor can leave with its release (monitor.proto, Wanted;
    // docs/SOS.md, "Data leaves with the release"). sos-server
    // --no-data-with-release turns it off, for measurement.
    bool wanted_notices = true;
  };
  MonitorTable() : MonitorTable(Options()) {}
  explicit MonitorTable(Options options) : options_(options) {}

  // Requests from node `node` for thread `t`. Each returns "" or a protocol
  // error (the request was ignored); results arrive as events in *out.
  // `java_thread` (the thread's Thread object, 0: none) is only reported by
  // Query, for the owner and for queued enters. `grouped`: a Java monitor's
  // enter, which may be granted with its node's others (node hand-offs).
  std::string Enter(NodeId node, ObjectId obj, ThreadRef t, TimeNs now, std::vector<Event>* out,
                    uint64_t java_thread = 0, bool grouped = false);
  // An enter that does not queue: granted at once (kGranted, a lease as for
  // Enter) if the monitor is free and nobody is queued, else kBusy and the
  // request is forgotten. Never recalls a lease (a leased monitor is owned).
  std::string TryEnter(NodeId node, ObjectId obj, ThreadRef t, uint64_t java_thread, TimeNs now,
                       std::vector<Event>* out);
  // `next` (kNoThread: none): the successor the node handed the monitor to.
  std::string Exit(NodeId node, ObjectId obj, ThreadRef t, TimeNs now, std::vector<Event>* out,
                   ThreadRef next = kNoThread);
  // Releases the monitor fully and joins its wait set `key` until notified,
  // interrupted or `deadline` (kNoDeadline: none); then re-enters.
  // `java_thread` is only reported by Query. `place`: the waiter's place in
  // line (see the file's comment); a place the monitor never gave counts
  // as kNewPlace.
  // `next` as for Exit.
  std::string Wait(NodeId node, ObjectId obj, ThreadRef t, uint64_t key, uint64_t java_thread,
                   TimeNs deadline, TimeNs now, std::vector<Event>* out,
                   uint64_t place = kNotInLine, ThreadRef next = kNoThread);
  // Wakes the longest waiter (all: every waiter) of the wait set `key`.
  std::string Notify(NodeId node, ObjectId obj, ThreadRef t, uint64_t key, bool all, TimeNs now,
                     std::vector<Event>* out);
  // Notify(key, all) in the monitor's next free turn, by a thread that need
  // not own it: queued FIFO as an Enter (and recalling a lease as one). In
  // its turn, if no one is then queued or waiting and a lease may be
  // granted, the monitor stays leased to `node` (kGranted, kSignalled, for
  // thread `t`); otherwise nothing is sent and the next request is served.
  // With to_key other than 0 the waiters are moved to the end of wait set
  // to_key instead of woken (see the file's comment).
  std::string Signal(NodeId node, ObjectId obj, ThreadRef t, uint64_t key, bool all,
                     uint64_t to_key, TimeNs now, std::vector<Event>* out);
  // Answers at once with kQueue: the owner, the threads queued to enter
  // (not Signals) in the order they will be served, and the waiters with a
  // key other than 0, longest waiting first, after the notified waiters in
  // line that are queued to re-enter or own the monitor to check again
  // (still in line: with their keys).
  // Needs no ownership; changes nothing.
  std::string Query(NodeId node, ObjectId obj, ThreadRef t, uint64_t nonce,
                    std::vector<Event>* out);
  // Whether a request of `t` from `node` about object `obj` may go on: not
  // if its program failed or ended (then it is answered kFailed in *out).
  // The node counts as running threads of the program from now on, so that
  // the program's failure reaches it. For the service's other tables
  // (BarrierTable), whose programs fail with the monitors'.
  bool Admit(NodeId node, ObjectId obj, ThreadRef t, std::vector<Event>* out) {
    return CheckProgram(node, obj, t, out);
  }
  // If `target` waits on a monitor here, it leaves the wait set and re-enters
  // with kInterrupted. Otherwise nothing (the JVM keeps the interrupt flag).
  std::string Interrupt(ThreadRef target, TimeNs now, std::vector<Event>* out);
  // The node gives up a blocked enter or wait of `t` (e.g. VM exit).
  std::string CancelEnter(NodeId node, ObjectId obj, ThreadRef t, TimeNs now,
                          std::vector<Event>* out);
  std::string ReturnLease(NodeId node, ObjectId obj, TimeNs now, std::vector<Event>* out);

  // Ends timed waits whose deadline passed.
  void Tick(TimeNs now, std::vector<Event>* out);
  // The node leaves cleanly (monitor.proto, Leave). If it owns, awaits or
  // waits on nothing here, it is forgotten without failing its programs and
  // true is returned; otherwise it is treated as down (NodeDown) now.
  // Its queued Signals stay (its threads' notifies must still happen), for
  // no node: they leave no lease.
  bool NodeLeave(NodeId node, TimeNs now, std::vector<Event>* out);
  // The node's connection is gone. Its queued Signals are dropped.
  void NodeDown(NodeId node, const std::string& why, TimeNs now, std::vector<Event>* out);
  // The program ended: drop its monitors; its pending requests fail (its
  // queued Signals are dropped: nobody waits for them).
  void FreeProgram(ProgramId program, TimeNs now, std::vector<Event>* out);

  // ---- introspection -------------------------------------------------------
  TimeNs NextDeadline() const;  // earliest timed-wait deadline, or kNoDeadline
  size_t MonitorCount() const { return monitors_.size(); }
  bool IsOwned(ObjectId obj) const;
  bool IsLeased(ObjectId obj, NodeId* node = nullptr) const;
  bool OwnerIs(ObjectId obj, ThreadRef t) const;
  size_t EntryQueueLength(ObjectId obj) const;
  size_t WaitSetSize(ObjectId obj) const;
  bool ProgramFailed(ProgramId p, std::string* why = nullptr) const;

 private:
  struct Request {
    NodeId node;
    ThreadRef thread;
    Wake reason;       // kSignalled: a Signal, which notifies and owns nothing
    uint64_t key = 0;  // the Signal's; a woken waiter's wait set
    bool all = false;  // the Signal's
    uint64_t to_key = 0;  // the Signal's: move to this wait set, or (0) wake
    uint64_t java_thread = 0;
    uint64_t place = kNotInLine;  // a woken waiter's
    bool grouped = false;  // may be granted with its node's others
    bool signal() const { return reason == Wake::kSignalled; }
  };
  struct Waiter {
    NodeId node;
    ThreadRef thread;
    TimeNs deadline;
    uint64_t key;
    uint64_t java_thread;
    bool moved = false;  // by a Signal: only a notify of its key wakes it
    uint64_t place = kNotInLine;
  };
  struct Monitor {
    ProgramId program = 0;      // program of the first thread to use it
    bool owned = false;
    bool leased = false;        // owned by a node, not a thread
    NodeId owner_node = 0;
    ThreadRef owner_thread;     // meaningful when owned && !leased
    uint64_t owner_java_thread = 0;  // likewise
    // The owner when it was granted as a notified waiter in line, until it
    // releases or waits again: still queued (key 0: not so granted).
    QueuedWaiter in_line_owner;
    bool recall_sent = false;
    // The owner's node gave its enter up (CancelEnter) after the grant had
    // left: the node hands the grant back with Exit or, if the same thread
    // enters again before it arrives, takes it as that enter's answer.
    bool grant_cancelled = false;
    TimeNs last_recall = INT64_MIN / 2;
    // Whether the owner's node has heard this tenure that another node
    // wants the monitor.
    bool wanted_told = false;
    uint64_t tenure = 0;  // the owner's tenure's number (next_tenure_)
    std::deque<Request> entry;  // enters and signals, FIFO: no starvation
    // The owner's node's threads it hands the monitor to next, in order
    // (node hand-offs): served before the entry queue.
    std::deque<Request> successors;
    // All keys, FIFO (notify wakes the longest waiter), except that a
    // waiter in line goes before every waiter in line with a later place.
    std::list<Waiter> waiters;
    uint64_t last_place = 0;    // the latest place given
  };

  // Enter and TryEnter: the checks common to both, then the monitor (null:
  // answered or refused, *err says which).
  Monitor* EnterCheck(NodeId node, ObjectId obj, ThreadRef t, std::vector<Event>* out,
                      std::string* err);
  Monitor* Find(ObjectId obj);
  const Monitor* Find(ObjectId obj) const;
  bool Owns(const Monitor& m, NodeId node, ThreadRef t) const;
  bool CheckProgram(NodeId node, ObjectId obj, ThreadRef t, std::vector<Event>* out);
  // Whether a node may hold the monitor as a lease from now on.
  bool MayLease(const Monitor& m, TimeNs now) const;
  // Serves the head of the entry queue of the free monitor: an enter gets
  // the monitor, a signal notifies (and may leave a lease).
  void GrantNext(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out);
  void ServeSignal(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out);
  void Release(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out);
  // The owner's release handed the monitor to its successor `next` (false:
  // `next` is none of its successors; nothing changed).
  bool HandOff(Monitor* m, ThreadRef next);
  // The owner's release: to `next` if it names a successor, else to the
  // service. A `next` that is no successor is a protocol error (*err).
  void ReleaseTo(ObjectId obj, Monitor* m, ThreadRef next, TimeNs now, std::vector<Event>* out,
                 std::string* err);
  void MaybeRecall(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out);
  // Whether a thread of a node other than the owner's is queued to enter.
  bool WantedElsewhere(const Monitor& m) const;
  // Tells the owner's node, once a tenure, that another node wants it.
  void MaybeTellWanted(ObjectId obj, Monitor* m, std::vector<Event>* out);
  // Moves a waiter to the entry queue's tail.
  void Requeue(Monitor* m, std::list<Waiter>::iterator w, enum Wake why);
  // Whether nobody in line with a place before `place` waits or is queued.
  bool FirstInLine(const Monitor& m, uint64_t place) const;
  // Requeues the longest waiter (all: every waiter) of the wait set `key`.
  // Wakes the waiters of key (all: every one), or moves them to the end of
  // wait set to_key if it is not 0.
  void NotifyWaiters(Monitor* m, uint64_t key, bool all, uint64_t to_key = 0);
  // Requeues a waiter and serves the monitor if it is free.
  void Wake(ObjectId obj, Monitor* m, std::list<Waiter>::iterator w, enum Wake why,
            TimeNs now, std::vector<Event>* out);
  void Settle(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out);
  void FailProgram(ProgramId p, const std::string& why, TimeNs now, std::vector<Event>* out);
  void MaybeErase(ObjectId obj);
  // Removes `t` from waiting_ and deadlines_ (it left a wait set).
  void Unwait(const Waiter& w);

  Options options_;
  std::map<ObjectId, Monitor> monitors_;
  // Numbers the grants to threads, table-wide: a monitor erased and made
  // again must not give a number a notice about its old self had.
  uint64_t next_tenure_ = 0;
  std::map<ThreadRef, ObjectId> waiting_;              // thread -> monitor it waits on
  std::set<std::pair<TimeNs, ThreadRef>> deadlines_;   // timed waits, earliest first
  std::map<NodeId, std::set<ProgramId>> node_programs_;
  std::map<ProgramId, std::string> failed_;             // program -> why
  // Programs freed, the newest kEndedKept: a thread of one still being torn
  // down on a node (Thread.stop's join notifies) may send requests after
  // the free, which fail quietly instead of making monitors again.
  static constexpr size_t kEndedKept = 4096;
  std::set<ProgramId> ended_;
  std::deque<ProgramId> ended_order_;
};

}  // namespace monitor
}  // namespace djava

#endif  // DJAVA_MONITOR_MONITOR_TABLE_H_
