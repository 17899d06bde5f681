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
//    starvation.
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

// Why a thread got the monitor (the Java-visible outcome of enter or wait).
enum class Wake { kAcquired, kNotified, kTimedOut, kInterrupted };
const char* WakeName(Wake w);

struct Event {
  enum Kind { kGranted, kRecall, kFailed };
  explicit Event(Kind k) : kind(k) {}
  Kind kind;
  NodeId node = 0;          // addressee
  ObjectId object = 0;
  ThreadRef thread;         // kGranted, kFailed
  bool lease = false;       // kGranted
  Wake reason = Wake::kAcquired;
  std::string error;        // kFailed; thread.thread == 0: the whole program failed
};

class MonitorTable {
 public:
  struct Options {
    bool leases = true;
    TimeNs lease_cooldown = 20 * 1000 * 1000;  // 20 ms
  };
  MonitorTable() : MonitorTable(Options()) {}
  explicit MonitorTable(Options options) : options_(options) {}

  // Requests from node `node` for thread `t`. Each returns "" or a protocol
  // error (the request was ignored); results arrive as events in *out.
  std::string Enter(NodeId node, ObjectId obj, ThreadRef t, TimeNs now, std::vector<Event>* out);
  std::string Exit(NodeId node, ObjectId obj, ThreadRef t, TimeNs now, std::vector<Event>* out);
  // Releases the monitor fully and joins its wait set until notified,
  // interrupted or `deadline` (kNoDeadline: none); then re-enters.
  std::string Wait(NodeId node, ObjectId obj, ThreadRef t, TimeNs deadline, TimeNs now,
                   std::vector<Event>* out);
  std::string Notify(NodeId node, ObjectId obj, ThreadRef t, bool all, TimeNs now,
                     std::vector<Event>* out);
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
  bool NodeLeave(NodeId node, TimeNs now, std::vector<Event>* out);
  // The node's connection is gone.
  void NodeDown(NodeId node, const std::string& why, TimeNs now, std::vector<Event>* out);
  // The program ended: drop its monitors; its pending requests fail.
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
    Wake reason;
  };
  struct Waiter {
    NodeId node;
    ThreadRef thread;
    TimeNs deadline;
  };
  struct Monitor {
    ProgramId program = 0;      // program of the first thread to use it
    bool owned = false;
    bool leased = false;        // owned by a node, not a thread
    NodeId owner_node = 0;
    ThreadRef owner_thread;     // meaningful when owned && !leased
    bool recall_sent = false;
    TimeNs last_recall = INT64_MIN / 2;
    std::deque<Request> entry;  // FIFO: no starvation
    std::list<Waiter> waiters;  // FIFO: notify wakes the longest waiter
  };

  Monitor* Find(ObjectId obj);
  const Monitor* Find(ObjectId obj) const;
  bool Owns(const Monitor& m, NodeId node, ThreadRef t) const;
  bool CheckProgram(NodeId node, ObjectId obj, ThreadRef t, std::vector<Event>* out);
  void GrantNext(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out);
  void Release(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out);
  void MaybeRecall(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out);
  // Moves a waiter to the entry queue and serves the monitor if it is free.
  void Wake(ObjectId obj, Monitor* m, std::list<Waiter>::iterator w, enum Wake why,
            TimeNs now, std::vector<Event>* out);
  void Settle(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out);
  void FailProgram(ProgramId p, const std::string& why, TimeNs now, std::vector<Event>* out);
  void MaybeErase(ObjectId obj);
  // Removes `t` from waiting_ and deadlines_ (it left a wait set).
  void Unwait(const Waiter& w);

  Options options_;
  std::map<ObjectId, Monitor> monitors_;
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
