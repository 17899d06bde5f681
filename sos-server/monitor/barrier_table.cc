#include "barrier_table.h"

#include <algorithm>

namespace djava {
namespace monitor {

namespace {

Event Done(NodeId node, ObjectId obj, ThreadRef t, BarrierOutcome outcome, uint32_t index = 0) {
  Event e{Event::kBarrier};
  e.node = node;
  e.object = obj;
  e.thread = t;
  e.barrier = outcome;
  e.index = index;
  return e;
}

}  // namespace

std::string BarrierTable::Arrive(NodeId node, ObjectId obj, ThreadRef t, uint32_t parties,
                                 bool command, bool timed, TimeNs deadline, TimeNs now,
                                 std::vector<Event>* out, bool interrupted) {
  if (parties == 0) return "barrier arrival with 0 parties";
  if (t.thread == 0) return "barrier arrival names no thread";
  if (waiting_.count(t)) return "barrier arrival of a thread that waits at a barrier already";
  if (!monitors_->Admit(node, obj, t, out)) return "";
  Barrier& b = barriers_[obj];
  if (b.program == 0) b.program = t.program;
  if (b.parties == 0) b.parties = parties;
  if (b.parties != parties) {
    std::string err = "barrier arrival with " + std::to_string(parties) +
                      " parties at a barrier of " + std::to_string(b.parties);
    MaybeErase(obj);
    return err;
  }
  if (b.acting) {
    b.later.push_back(
        Later{node, t, true, BarrierOp::kQuery, command, timed, deadline, interrupted});
    return "";
  }
  ApplyArrive(obj, &b, node, t, command, timed, deadline, interrupted, now, out);
  MaybeErase(obj);
  return "";
}

void BarrierTable::ApplyArrive(ObjectId obj, Barrier* b, NodeId node, ThreadRef t, bool command,
                               bool timed, TimeNs deadline, bool interrupted, TimeNs now,
                               std::vector<Event>* out) {
  if (b->broken) {
    out->push_back(Done(node, obj, t, BarrierOutcome::kBroken));
    return;
  }
  if (interrupted) {
    Break(obj, b, out);
    out->push_back(Done(node, obj, t, BarrierOutcome::kInterrupted));
    return;
  }
  const uint32_t index = b->parties - 1 - static_cast<uint32_t>(b->waiting.size());
  if (index == 0) {
    if (command) {
      // Its action runs before any party goes on (CyclicBarrier's contract).
      b->acting = true;
      b->actor_node = node;
      b->actor = t;
      out->push_back(Done(node, obj, t, BarrierOutcome::kLast));
    } else {
      Trip(obj, b, out);
      out->push_back(Done(node, obj, t, BarrierOutcome::kTripped));
    }
    return;
  }
  if (timed && deadline <= now) {
    // await(0) that does not trip: counted, then at once timed out, which
    // breaks the barrier for the parties waiting (as dowait's check does).
    Break(obj, b, out);
    out->push_back(Done(node, obj, t, BarrierOutcome::kTimedOut));
    return;
  }
  Party p{node, t, index, timed ? deadline : kNoDeadline};
  b->waiting.push_back(p);
  waiting_[t] = obj;
  if (p.deadline != kNoDeadline) deadlines_.insert({p.deadline, t});
}

std::string BarrierTable::Op(NodeId node, ObjectId obj, ThreadRef t, BarrierOp op, TimeNs now,
                             std::vector<Event>* out) {
  if (t.thread == 0) return "barrier op names no thread";
  if (!monitors_->Admit(node, obj, t, out)) return "";
  auto it = barriers_.find(obj);
  const bool actor = it != barriers_.end() && it->second.acting &&
                     it->second.actor_node == node && it->second.actor == t;
  if (op == BarrierOp::kTrip && !actor)
    return "barrier trip by a thread that is not running the barrier's action";
  Barrier& b = barriers_[obj];
  if (b.program == 0) b.program = t.program;
  if (b.acting && !actor) {
    b.later.push_back(Later{node, t, false, op, false, false, kNoDeadline, false});
    return "";
  }
  ApplyOp(obj, &b, node, t, op, out);
  if (actor && (op == BarrierOp::kTrip || op == BarrierOp::kBreak)) RunLater(obj, &b, now, out);
  MaybeErase(obj);
  return "";
}

void BarrierTable::ApplyOp(ObjectId obj, Barrier* b, NodeId node, ThreadRef t, BarrierOp op,
                           std::vector<Event>* out) {
  const bool actor = b->acting && b->actor_node == node && b->actor == t;
  switch (op) {
    case BarrierOp::kTrip:
      b->acting = false;
      Trip(obj, b, out);
      break;
    case BarrierOp::kBreak:
      if (actor) b->acting = false;
      Break(obj, b, out);
      break;
    case BarrierOp::kReset:
      // CyclicBarrier.reset: breakBarrier, then a new generation, whole.
      Break(obj, b, out);
      b->broken = false;
      break;
    case BarrierOp::kQuery:
      break;
  }
  Event e = Done(node, obj, t, BarrierOutcome::kDone);
  e.broken = b->broken;
  // While its action runs, the actor sees every party arrived (count 0).
  e.waiting_count = b->acting ? b->parties : static_cast<uint32_t>(b->waiting.size());
  out->push_back(e);
}

void BarrierTable::RunLater(ObjectId obj, Barrier* b, TimeNs now, std::vector<Event>* out) {
  while (!b->acting && !b->later.empty()) {
    Later l = b->later.front();
    b->later.pop_front();
    if (l.arrive) {
      ApplyArrive(obj, b, l.node, l.thread, l.command, l.timed, l.deadline, l.interrupted, now,
                  out);
    } else {
      ApplyOp(obj, b, l.node, l.thread, l.op, out);
    }
  }
}

void BarrierTable::Trip(ObjectId obj, Barrier* b, std::vector<Event>* out) {
  for (const Party& p : b->waiting) {
    out->push_back(Done(p.node, obj, p.thread, BarrierOutcome::kTripped, p.index));
    Unwait(p);
  }
  b->waiting.clear();
}

void BarrierTable::Break(ObjectId obj, Barrier* b, std::vector<Event>* out,
                         const ThreadRef* except) {
  b->broken = true;
  for (const Party& p : b->waiting) {
    if (except == nullptr || p.thread != *except)
      out->push_back(Done(p.node, obj, p.thread, BarrierOutcome::kBroken));
    Unwait(p);
  }
  b->waiting.clear();
}

void BarrierTable::Interrupt(ThreadRef target, std::vector<Event>* out) {
  auto w = waiting_.find(target);
  if (w == waiting_.end()) {
    // An arrival waiting for another thread's action (in Java, blocked in
    // the barrier's lock) arrives interrupted once it goes on.
    for (auto& kv : barriers_)
      for (Later& l : kv.second.later)
        if (l.thread == target && l.arrive) l.interrupted = true;
    return;
  }
  const ObjectId obj = w->second;
  Barrier& b = barriers_[obj];
  // Every party has arrived and the action runs: the barrier trips, and
  // the interrupt belongs to what the thread does next (dowait, which
  // sees the new generation first).
  if (b.acting) return;
  NodeId node = kNoNode;
  for (const Party& p : b.waiting)
    if (p.thread == target) node = p.node;
  Break(obj, &b, out, &target);
  out->push_back(Done(node, obj, target, BarrierOutcome::kInterrupted));
  MaybeErase(obj);
}

bool BarrierTable::Cancel(NodeId node, ObjectId obj, ThreadRef t, std::vector<Event>* out) {
  auto it = barriers_.find(obj);
  if (it == barriers_.end()) return false;
  Barrier& b = it->second;
  bool found = false;
  for (const Party& p : b.waiting) found |= p.node == node && p.thread == t;
  if (found) {
    Break(obj, &b, out, &t);
  } else {
    auto l = std::find_if(b.later.begin(), b.later.end(),
                          [&](const Later& x) { return x.node == node && x.thread == t; });
    if (l == b.later.end()) return false;
    b.later.erase(l);
  }
  MaybeErase(obj);
  return true;
}

void BarrierTable::Tick(TimeNs now, std::vector<Event>* out) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    const ThreadRef t = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    auto w = waiting_.find(t);
    if (w == waiting_.end()) continue;
    const ObjectId obj = w->second;
    Barrier& b = barriers_[obj];
    NodeId node = kNoNode;
    for (Party& p : b.waiting) {
      if (p.thread == t) {
        node = p.node;
        // Every party has arrived: it returns with the trip, as dowait's
        // check of the generation comes before its timeout's.
        if (b.acting) p.deadline = kNoDeadline;
      }
    }
    if (b.acting) continue;
    Break(obj, &b, out, &t);
    out->push_back(Done(node, obj, t, BarrierOutcome::kTimedOut));
    MaybeErase(obj);
  }
}

TimeNs BarrierTable::NextDeadline() const {
  return deadlines_.empty() ? kNoDeadline : deadlines_.begin()->first;
}

bool BarrierTable::Involves(NodeId node) const {
  for (const auto& kv : barriers_) {
    const Barrier& b = kv.second;
    if (b.acting && b.actor_node == node) return true;
    for (const Party& p : b.waiting)
      if (p.node == node) return true;
    for (const Later& l : b.later)
      if (l.node == node) return true;
  }
  return false;
}

void BarrierTable::NodeDown(NodeId node, std::vector<Event>* out) {
  std::vector<ObjectId> objs;
  for (const auto& kv : barriers_) objs.push_back(kv.first);
  for (ObjectId obj : objs) {
    Barrier& b = barriers_[obj];
    b.later.erase(std::remove_if(b.later.begin(), b.later.end(),
                                 [&](const Later& l) { return l.node == node; }),
                  b.later.end());
    bool party_left = b.acting && b.actor_node == node;
    for (const Party& p : b.waiting) party_left |= p.node == node;
    if (party_left) {
      // Nobody could trip it now: the others end as if a party broke it.
      b.acting = false;
      Break(obj, &b, out);
      RunLater(obj, &b, 0, out);
    }
    MaybeErase(obj);
  }
  out->erase(std::remove_if(out->begin(), out->end(),
                            [&](const Event& e) { return e.node == node; }),
             out->end());
}

void BarrierTable::FailProgram(ProgramId program, const std::string& why,
                               std::vector<Event>* out) {
  for (auto it = barriers_.begin(); it != barriers_.end();) {
    Barrier& b = it->second;
    if (b.program != program) {
      ++it;
      continue;
    }
    auto failed = [&](NodeId node, ThreadRef t) {
      Event e{Event::kFailed};
      e.node = node;
      e.object = it->first;
      e.thread = t;
      e.error = why;
      out->push_back(e);
    };
    for (const Party& p : b.waiting) {
      failed(p.node, p.thread);
      Unwait(p);
    }
    for (const Later& l : b.later) failed(l.node, l.thread);
    it = barriers_.erase(it);
  }
}

size_t BarrierTable::Waiting(ObjectId obj) const {
  auto it = barriers_.find(obj);
  return it == barriers_.end() ? 0 : it->second.waiting.size();
}

bool BarrierTable::IsBroken(ObjectId obj) const {
  auto it = barriers_.find(obj);
  return it != barriers_.end() && it->second.broken;
}

void BarrierTable::Unwait(const Party& p) {
  waiting_.erase(p.thread);
  if (p.deadline != kNoDeadline) deadlines_.erase({p.deadline, p.thread});
}

void BarrierTable::MaybeErase(ObjectId obj) {
  auto it = barriers_.find(obj);
  if (it == barriers_.end()) return;
  const Barrier& b = it->second;
  // A whole barrier nobody waits at is as a new one: the next Arrive brings
  // its parties again.
  if (!b.broken && !b.acting && b.waiting.empty() && b.later.empty()) barriers_.erase(it);
}

}  // namespace monitor
}  // namespace djava
