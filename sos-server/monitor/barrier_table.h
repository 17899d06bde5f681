// BarrierTable: java.util.concurrent.CyclicBarrier on shared objects, at the
// monitor service (issue 24), with no I/O and time passed in.
//
// CyclicBarrier is a count under a ReentrantLock and a Condition: each
// await takes the lock, counts down, and waits; the last one signals all,
// and every woken party takes the lock again to see the new generation.
// Across nodes every one of those steps is a lock hand-off, so a trip of N
// parties costs O(N) round trips on its critical path. Here the count
// lives at the service instead: an await is one Arrive, answered when the
// barrier trips (with the arrival's index) or breaks, and a trip wakes
// every party in one step. The Java class keeps its own semantics
// (jvm/java.base/java/util/concurrent/SharedBarriers.java):
//  - a barrier with an action: the last arrival is answered kLast and runs
//    the action on its node; the parties wait until it sends Trip (the
//    action returned) or Break (it threw). Meanwhile arrivals and ops of
//    other threads wait, as they wait for the barrier's lock in Java, and
//    are applied in their order once it ends;
//  - an arrival at a broken barrier is answered kBroken; a party that times
//    out or is interrupted breaks the barrier (kTimedOut, kInterrupted for
//    it; kBroken for the others), as CyclicBarrier.dowait does;
//  - Reset breaks the waiting parties and leaves the barrier whole;
//    Query answers isBroken() and getNumberWaiting().
// A barrier in its initial state (whole, nobody waiting) is forgotten: the
// table holds only barriers in use. Programs are admitted, and failed, by
// the MonitorTable of the same service: a node's death fails its programs
// there, and the service fails their barriers here (FailProgram).
#ifndef DJAVA_MONITOR_BARRIER_TABLE_H_
#define DJAVA_MONITOR_BARRIER_TABLE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "monitor_table.h"

namespace djava {
namespace monitor {

enum class BarrierOp { kTrip, kBreak, kReset, kQuery };

class BarrierTable {
 public:
  explicit BarrierTable(MonitorTable* monitors) : monitors_(monitors) {}

  // Each returns "" or a protocol error (the request was ignored); results
  // arrive as kBarrier (or kFailed) events in *out.
  // An await of `t` at barrier `obj` of `parties` (> 0, the same for every
  // arrival); `command`: it has a barrier action; timed: await(timeout),
  // broken at `deadline` (<= now: at once, unless this arrival trips it);
  // `interrupted`: the thread arrives interrupted, which breaks the barrier
  // (kInterrupted; kBroken if it was broken already).
  std::string Arrive(NodeId node, ObjectId obj, ThreadRef t, uint32_t parties, bool command,
                     bool timed, TimeNs deadline, TimeNs now, std::vector<Event>* out,
                     bool interrupted = false);
  // Trip and Break end the action of the arrival answered kLast, which
  // only that thread may send; Break, Reset and Query any thread may.
  // Answered kBarrierDone with the state after the op.
  std::string Op(NodeId node, ObjectId obj, ThreadRef t, BarrierOp op, TimeNs now,
                 std::vector<Event>* out);
  // If `target` waits at a barrier here, the barrier breaks and its await
  // ends kInterrupted, unless every party has arrived and the action runs
  // (the barrier trips; the JVM keeps the flag); if its arrival waits for another thread's action, it
  // arrives interrupted once that ends. Otherwise nothing (the JVM keeps
  // the interrupt flag).
  void Interrupt(ThreadRef target, std::vector<Event>* out);
  // The node gave up a blocked await of `t` (e.g. VM exit): the barrier
  // breaks, for nobody else could trip it now. False if `t` waits there for
  // nothing.
  bool Cancel(NodeId node, ObjectId obj, ThreadRef t, std::vector<Event>* out);
  // Ends timed awaits whose deadline passed.
  void Tick(TimeNs now, std::vector<Event>* out);
  TimeNs NextDeadline() const;
  // Whether a thread of the node waits at, or an action of it runs for, a
  // barrier here (it cannot leave cleanly then).
  bool Involves(NodeId node) const;
  // The node is gone: its parties leave and their barriers break; events to
  // it are dropped.
  void NodeDown(NodeId node, std::vector<Event>* out);
  // The program failed (or ended): its barriers' threads fail with `why`
  // and its barriers are forgotten.
  void FailProgram(ProgramId program, const std::string& why, std::vector<Event>* out);

  size_t BarrierCount() const { return barriers_.size(); }
  size_t Waiting(ObjectId obj) const;
  bool IsBroken(ObjectId obj) const;

 private:
  struct Party {
    NodeId node;
    ThreadRef thread;
    uint32_t index;
    TimeNs deadline;
  };
  // An arrival or op made while the barrier's action runs.
  struct Later {
    NodeId node;
    ThreadRef thread;
    bool arrive;
    BarrierOp op;        // !arrive
    bool command;        // arrive
    bool timed;
    TimeNs deadline;
    bool interrupted;
  };
  struct Barrier {
    ProgramId program = 0;
    uint32_t parties = 0;  // 0: not known yet (an op came first)
    bool broken = false;
    std::vector<Party> waiting;  // in arrival order
    bool acting = false;         // the last arrival runs the action
    NodeId actor_node = kNoNode;
    ThreadRef actor;
    std::deque<Later> later;
  };

  void ApplyArrive(ObjectId obj, Barrier* b, NodeId node, ThreadRef t, bool command, bool timed,
                   TimeNs deadline, bool interrupted, TimeNs now, std::vector<Event>* out);
  void ApplyOp(ObjectId obj, Barrier* b, NodeId node, ThreadRef t, BarrierOp op,
               std::vector<Event>* out);
  // The action ended: what waited for it goes in its order.
  void RunLater(ObjectId obj, Barrier* b, TimeNs now, std::vector<Event>* out);
  void Trip(ObjectId obj, Barrier* b, std::vector<Event>* out);
  // Breaks the barrier: every waiting party ends kBroken, except `except`
  // (the party that broke it, which the caller answers).
  void Break(ObjectId obj, Barrier* b, std::vector<Event>* out,
             const ThreadRef* except = nullptr);
  void Unwait(const Party& p);
  void MaybeErase(ObjectId obj);

  MonitorTable* monitors_;
  std::map<ObjectId, Barrier> barriers_;
  std::map<ThreadRef, ObjectId> waiting_;             // thread -> barrier it waits at
  std::set<std::pair<TimeNs, ThreadRef>> deadlines_;  // timed awaits, earliest first
};

}  // namespace monitor
}  // namespace djava

#endif  // DJAVA_MONITOR_BARRIER_TABLE_H_
