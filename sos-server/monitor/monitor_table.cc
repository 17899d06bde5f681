#include "monitor_table.h"

#include <algorithm>

namespace djava {
namespace monitor {

const char* WakeName(Wake w) {
  switch (w) {
    case Wake::kAcquired: return "acquired";
    case Wake::kNotified: return "notified";
    case Wake::kTimedOut: return "timed-out";
    case Wake::kInterrupted: return "interrupted";
    case Wake::kSignalled: return "signalled";
  }
  return "?";
}

static Event Failed(NodeId node, ObjectId obj, ThreadRef t, const std::string& error) {
  Event e{Event::kFailed};
  e.node = node;
  e.object = obj;
  e.thread = t;
  e.error = error;
  return e;
}

MonitorTable::Monitor* MonitorTable::Find(ObjectId obj) {
  auto it = monitors_.find(obj);
  return it == monitors_.end() ? nullptr : &it->second;
}

const MonitorTable::Monitor* MonitorTable::Find(ObjectId obj) const {
  auto it = monitors_.find(obj);
  return it == monitors_.end() ? nullptr : &it->second;
}

bool MonitorTable::Owns(const Monitor& m, NodeId node, ThreadRef t) const {
  if (!m.owned || m.owner_node != node) return false;
  // Under a lease the node decides which of its threads owns the monitor.
  return m.leased || m.owner_thread == t;
}

// Requests of a failed program are answered with its failure, so that no
// thread of it blocks on a monitor whose protected data may be lost.
bool MonitorTable::CheckProgram(NodeId node, ObjectId obj, ThreadRef t,
                                std::vector<Event>* out) {
  if (ended_.count(t.program)) {
    out->push_back(Failed(node, obj, t, "program ended"));
    return false;
  }
  node_programs_[node].insert(t.program);
  auto f = failed_.find(t.program);
  if (f == failed_.end()) return true;
  out->push_back(Failed(node, obj, t, f->second));
  return false;
}

MonitorTable::Monitor* MonitorTable::EnterCheck(NodeId node, ObjectId obj, ThreadRef t,
                                                std::vector<Event>* out, std::string* err) {
  err->clear();
  if (!CheckProgram(node, obj, t, out)) return nullptr;
  Monitor* m = Find(obj);
  if (m == nullptr) return &monitors_[obj];
  if (m->owned && !m->leased && m->owner_thread == t) {
    if (m->grant_cancelled && m->owner_node == node) {
      // Crossed the grant of the enter (or wait in line) it gave up, which
      // answers this one: an enterer's now, in no line.
      m->grant_cancelled = false;
      m->in_line_owner = QueuedWaiter();
      return nullptr;
    }
    *err = "enter by the thread that already owns the monitor";
    return nullptr;
  }
  // (A Signal of the same thread may be queued: it is no enter.)
  for (const std::deque<Request>* q : {&m->successors, &m->entry}) {
    for (const Request& r : *q) {
      if (r.thread == t && !r.signal()) {
        *err = "enter by a thread already queued";
        return nullptr;
      }
    }
  }
  return m;
}

std::string MonitorTable::Enter(NodeId node, ObjectId obj, ThreadRef t, TimeNs now,
                                std::vector<Event>* out, uint64_t java_thread, bool grouped) {
  std::string err;
  Monitor* m = EnterCheck(node, obj, t, out, &err);
  if (m == nullptr) return err;
  if (m->program == 0) m->program = t.program;
  Request r{node, t, Wake::kAcquired};
  r.java_thread = java_thread;
  r.grouped = grouped;
  m->entry.push_back(r);
  Settle(obj, m, now, out);
  return "";
}

std::string MonitorTable::TryEnter(NodeId node, ObjectId obj, ThreadRef t, uint64_t java_thread,
                                   TimeNs now, std::vector<Event>* out) {
  std::string err;
  Monitor* m = EnterCheck(node, obj, t, out, &err);
  if (m == nullptr) return err;
  // Owned (by a thread, or by a node's lease: no recall for a try) or
  // someone is before us: the try fails and leaves nothing behind.
  if (m->owned || !m->entry.empty()) {
    Event e{Event::kBusy};
    e.node = node;
    e.object = obj;
    e.thread = t;
    out->push_back(e);
    MaybeErase(obj);
    return "";
  }
  if (m->program == 0) m->program = t.program;
  Request r{node, t, Wake::kAcquired};
  r.java_thread = java_thread;
  m->entry.push_back(r);
  Settle(obj, m, now, out);  // free and nobody queued: granted now
  return "";
}

std::string MonitorTable::Exit(NodeId node, ObjectId obj, ThreadRef t, TimeNs now,
                               std::vector<Event>* out, ThreadRef next) {
  Monitor* m = Find(obj);
  if (m == nullptr || !Owns(*m, node, t)) return "exit of a monitor the thread does not own";
  std::string err;
  ReleaseTo(obj, m, next, now, out, &err);
  MaybeErase(obj);
  return err;
}

bool MonitorTable::HandOff(Monitor* m, ThreadRef next) {
  auto it = std::find_if(m->successors.begin(), m->successors.end(),
                         [next](const Request& r) { return r.thread == next; });
  if (it == m->successors.end()) return false;
  Request r = *it;
  // The node hands the monitor on in the grant's order; any successor it
  // passed over gave its enter up (CancelEnter, already here).
  m->successors.erase(m->successors.begin(), it + 1);
  m->owner_thread = r.thread;
  m->owner_java_thread = r.java_thread;
  m->in_line_owner = QueuedWaiter();
  m->recall_sent = false;
  m->grant_cancelled = false;
  return true;
}

void MonitorTable::ReleaseTo(ObjectId obj, Monitor* m, ThreadRef next, TimeNs now,
                             std::vector<Event>* out, std::string* err) {
  if (next != kNoThread) {
    if (!m->leased && HandOff(m, next)) return;
    *err = "hand-off to a thread that is not the monitor's successor";
  }
  Release(obj, m, now, out);
}

std::string MonitorTable::Wait(NodeId node, ObjectId obj, ThreadRef t, uint64_t key,
                               uint64_t java_thread, TimeNs deadline, TimeNs now,
                               std::vector<Event>* out, uint64_t place, ThreadRef next) {
  if (!CheckProgram(node, obj, t, out)) return "";
  Monitor* m = Find(obj);
  if (m == nullptr || !Owns(*m, node, t)) return "wait on a monitor the thread does not own";
  if (waiting_.count(t)) return "thread already waiting";
  Waiter w{node, t, deadline, key, java_thread};
  auto at = m->waiters.end();
  if (place != kNotInLine) {
    if (place == kNewPlace || place > m->last_place) {
      place = ++m->last_place;  // the end of the line
    } else {
      // Back at its place: before the first waiter in line behind it.
      at = std::find_if(m->waiters.begin(), m->waiters.end(), [place](const Waiter& o) {
        return o.place != kNotInLine && o.place > place;
      });
    }
    w.place = place;
  }
  m->waiters.insert(at, w);
  waiting_[t] = obj;
  if (deadline != kNoDeadline) deadlines_.insert({deadline, t});
  // Waiting releases the monitor fully, lease included (so no lease is held
  // while anyone waits); the node remembers the thread's count and restores
  // it on the grant that ends the wait. Or the node handed it on.
  std::string err;
  ReleaseTo(obj, m, next, now, out, &err);
  return err;
}

std::string MonitorTable::Notify(NodeId node, ObjectId obj, ThreadRef t, uint64_t key, bool all,
                                 TimeNs now, std::vector<Event>* out) {
  if (!CheckProgram(node, obj, t, out)) return "";
  Monitor* m = Find(obj);
  if (m == nullptr || !Owns(*m, node, t)) return "notify on a monitor the thread does not own";
  NotifyWaiters(m, key, all);
  Settle(obj, m, now, out);  // owned: recalls a lease the woken now queue behind
  return "";
}

std::string MonitorTable::Signal(NodeId node, ObjectId obj, ThreadRef t, uint64_t key, bool all,
                                 uint64_t to_key, TimeNs now, std::vector<Event>* out) {
  if (to_key == key && to_key != 0) return "signal moves waiters to their own wait set";
  if (!CheckProgram(node, obj, t, out)) return "";
  Monitor& m = monitors_[obj];
  if (m.program == 0) m.program = t.program;
  Request r{node, t, Wake::kSignalled};
  r.key = key;
  r.all = all;
  r.to_key = to_key;
  m.entry.push_back(r);
  Settle(obj, &m, now, out);
  MaybeErase(obj);  // served at once, with nobody to wake and no lease
  return "";
}

std::string MonitorTable::Query(NodeId node, ObjectId obj, ThreadRef /*t*/, uint64_t nonce,
                                std::vector<Event>* out) {
  // No CheckProgram: a query holds nothing and must always be answered (the
  // asking thread blocks on it); a failed program's waiters are gone anyway.
  Event e{Event::kQueue};
  e.node = node;
  e.object = obj;
  e.nonce = nonce;
  if (const Monitor* m = Find(obj)) {
    e.owned = m->owned;
    e.leased = m->owned && m->leased;
    // Under a lease the node picks the owner among its threads, unknown here.
    e.owner_java_thread = m->owned && !m->leased ? m->owner_java_thread : 0;
    // A notified acquirer re-entering keeps its place in line: it is one of
    // the synchronizer's queued threads, as an AQS node stays queued while
    // its thread re-checks, so it is reported with its wait set's key; so is
    // the owner granted the monitor for that check (first: it was ahead),
    // until it releases or waits again.
    if (m->owned && m->in_line_owner.key != 0) e.waiters.push_back(m->in_line_owner);
    for (const Request& r : m->successors)
      e.entering.push_back(QueuedWaiter{0, r.java_thread, r.thread});
    for (const Request& r : m->entry) {
      if (r.signal()) continue;
      if (r.place != kNotInLine && r.reason == Wake::kNotified) {
        e.waiters.push_back(QueuedWaiter{r.key, r.java_thread, r.thread});
      } else {
        e.entering.push_back(QueuedWaiter{0, r.java_thread, r.thread});
      }
    }
    for (const Waiter& w : m->waiters)
      if (w.key != 0) e.waiters.push_back(QueuedWaiter{w.key, w.java_thread, w.thread});
  }
  out->push_back(std::move(e));
  return "";
}

std::string MonitorTable::Interrupt(ThreadRef target, TimeNs now, std::vector<Event>* out) {
  auto w = waiting_.find(target);
  if (w == waiting_.end()) return "";
  ObjectId obj = w->second;
  Monitor* m = Find(obj);
  if (m == nullptr) return "";
  for (auto it = m->waiters.begin(); it != m->waiters.end(); ++it) {
    // A moved waiter was signalled first: it waits for its new key's notify
    // (its thread sees the interrupt once it returns).
    if (it->thread == target && !it->moved) {
      Wake(obj, m, it, Wake::kInterrupted, now, out);
      break;
    }
  }
  return "";
}

std::string MonitorTable::CancelEnter(NodeId node, ObjectId obj, ThreadRef t, TimeNs now,
                                      std::vector<Event>* out) {
  Monitor* m = Find(obj);
  if (m == nullptr) return "";
  for (auto it = m->successors.begin(); it != m->successors.end(); ++it) {
    if (it->thread == t && it->node == node) {
      m->successors.erase(it);
      break;
    }
  }
  for (auto it = m->entry.begin(); it != m->entry.end(); ++it) {
    // A Signal of the thread stays: it does not block, so nothing cancels it.
    if (it->thread == t && it->node == node && !it->signal()) {
      m->entry.erase(it);
      break;
    }
  }
  for (auto it = m->waiters.begin(); it != m->waiters.end(); ++it) {
    if (it->thread == t && it->node == node) {
      Unwait(*it);
      m->waiters.erase(it);
      break;
    }
  }
  // A grant already sent is answered by the node with Exit, or taken for
  // the thread's next enter if that crosses it.
  if (m->owned && !m->leased && m->owner_thread == t && m->owner_node == node) {
    m->grant_cancelled = true;
    m->in_line_owner = QueuedWaiter();  // it left the line with its wait
  }
  Settle(obj, m, now, out);
  MaybeErase(obj);
  return "";
}

std::string MonitorTable::ReturnLease(NodeId node, ObjectId obj, TimeNs now,
                                      std::vector<Event>* out) {
  Monitor* m = Find(obj);
  // A return crossing a Wait or an Exit of the same lease is stale: ignore it.
  if (m == nullptr || !m->owned || !m->leased || m->owner_node != node) return "";
  Release(obj, m, now, out);
  MaybeErase(obj);
  return "";
}

void MonitorTable::Tick(TimeNs now, std::vector<Event>* out) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    ThreadRef t = deadlines_.begin()->second;
    auto w = waiting_.find(t);
    Monitor* m = w == waiting_.end() ? nullptr : Find(w->second);
    if (m == nullptr) {  // cannot happen: Unwait keeps both indexes in step
      deadlines_.erase(deadlines_.begin());
      continue;
    }
    ObjectId obj = w->second;
    for (auto it = m->waiters.begin(); it != m->waiters.end(); ++it) {
      if (it->thread == t) {
        Wake(obj, m, it, Wake::kTimedOut, now, out);
        break;
      }
    }
  }
}

bool MonitorTable::NodeLeave(NodeId node, TimeNs now, std::vector<Event>* out) {
  for (const auto& kv : monitors_) {
    const Monitor& m = kv.second;
    bool holds = m.owned && m.owner_node == node;
    for (const Request& r : m.successors) holds |= r.node == node;
    for (const Request& r : m.entry) holds |= r.node == node && !r.signal();
    for (const Waiter& w : m.waiters) holds |= w.node == node;
    if (holds) {
      NodeDown(node, "node " + std::to_string(node) +
                         " left while it still owned, awaited or waited on a monitor",
               now, out);
      return false;
    }
  }
  // Its queued Signals were sent by threads that ran before it left: their
  // notifies must still happen, but no lease may go to a node that is gone.
  for (auto& kv : monitors_)
    for (Request& r : kv.second.entry)
      if (r.node == node) r.node = kNoNode;
  node_programs_.erase(node);
  return true;
}

void MonitorTable::NodeDown(NodeId node, const std::string& why, TimeNs now,
                            std::vector<Event>* out) {
  std::set<ProgramId> programs = node_programs_[node];
  node_programs_.erase(node);
  for (ProgramId p : programs) FailProgram(p, why, now, out);
  // Whatever of the dead node is left (programs already failed before it
  // died): forget its requests and release what it owned.
  std::vector<ObjectId> objs;
  for (auto& kv : monitors_) objs.push_back(kv.first);
  for (ObjectId obj : objs) {
    Monitor* m = Find(obj);
    for (std::deque<Request>* q : {&m->successors, &m->entry})
      q->erase(std::remove_if(q->begin(), q->end(),
                              [&](const Request& r) { return r.node == node; }),
               q->end());
    for (auto it = m->waiters.begin(); it != m->waiters.end();) {
      if (it->node == node) {
        Unwait(*it);
        it = m->waiters.erase(it);
      } else {
        ++it;
      }
    }
    if (m->owned && m->owner_node == node) Release(obj, m, now, out);
    MaybeErase(obj);
  }
  // Events addressed to the dead node are useless; drop them.
  out->erase(std::remove_if(out->begin(), out->end(),
                            [&](const Event& e) { return e.node == node; }),
             out->end());
}

void MonitorTable::FreeProgram(ProgramId program, TimeNs now, std::vector<Event>* out) {
  FailProgram(program, "program ended", now, out);
  failed_.erase(program);
  for (auto it = monitors_.begin(); it != monitors_.end();) {
    if (it->second.program == program && it->second.entry.empty() &&
        it->second.successors.empty() && it->second.waiters.empty()) {
      it = monitors_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& np : node_programs_) np.second.erase(program);
  if (ended_.insert(program).second) {
    ended_order_.push_back(program);
    if (ended_order_.size() > kEndedKept) {
      ended_.erase(ended_order_.front());
      ended_order_.pop_front();
    }
  }
}

void MonitorTable::FailProgram(ProgramId p, const std::string& why, TimeNs now,
                               std::vector<Event>* out) {
  if (failed_.count(p)) return;
  failed_[p] = why;
  // Every node running threads of the program hears it (thread 0 = the whole
  // program), so that threads not blocked here fail at their next step too.
  for (const auto& np : node_programs_)
    if (np.second.count(p)) out->push_back(Failed(np.first, 0, ThreadRef{p, 0}, why));
  std::vector<ObjectId> objs;
  for (auto& kv : monitors_) objs.push_back(kv.first);
  for (ObjectId obj : objs) {
    Monitor* m = Find(obj);
    for (std::deque<Request>* q : {&m->successors, &m->entry}) {
      for (auto it = q->begin(); it != q->end();) {
        if (it->thread.program == p) {
          // Nobody waits for a Signal: it just goes.
          if (!it->signal()) out->push_back(Failed(it->node, obj, it->thread, why));
          it = q->erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto it = m->waiters.begin(); it != m->waiters.end();) {
      if (it->thread.program == p) {
        out->push_back(Failed(it->node, obj, it->thread, why));
        Unwait(*it);
        it = m->waiters.erase(it);
      } else {
        ++it;
      }
    }
    // The program's monitors are released: nothing of it may block on them.
    bool owner_in_p = m->owned && (m->leased ? m->program == p : m->owner_thread.program == p);
    if (owner_in_p) Release(obj, m, now, out);
    MaybeErase(obj);
  }
}

bool MonitorTable::MayLease(const Monitor& m, TimeNs now) const {
  return options_.leases && m.entry.empty() && m.successors.empty() && m.waiters.empty() &&
         now - m.last_recall >= options_.lease_cooldown;
}

void MonitorTable::GrantNext(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out) {
  if (m->entry.front().signal()) {
    ServeSignal(obj, m, now, out);
    return;
  }
  Request r = m->entry.front();
  m->entry.pop_front();
  const NodeId last_owner = m->owner_node;  // kept by Release
  m->owned = true;
  m->owner_node = r.node;
  m->owner_thread = r.thread;
  m->owner_java_thread = r.java_thread;
  m->recall_sent = false;
  m->grant_cancelled = false;
  const bool in_line = r.place != kNotInLine && r.reason == Wake::kNotified && r.key != 0;
  m->in_line_owner = in_line ? QueuedWaiter{r.key, r.java_thread, r.thread} : QueuedWaiter();
  // Not leased, so its release comes here and ends its report in Query.
  m->leased = !in_line && MayLease(*m, now);
  Event e{Event::kGranted};
  e.node = r.node;
  e.object = obj;
  e.thread = r.thread;
  e.lease = m->leased;
  e.reason = r.reason;
  e.from_node = last_owner;
  if (r.place != kNotInLine) {
    e.place = r.place;
    e.first_in_line = FirstInLine(*m, r.place);
  }
  e.tenure = m->tenure = ++next_tenure_;
  if (options_.node_handoffs && r.grouped && !m->leased) {
    // The node's other grouped requests, up to the first that keeps its
    // turn (a synchronizer's enter, a Signal): the node hands the monitor
    // on among them (see the file's comment).
    for (auto it = m->entry.begin(); it != m->entry.end() && it->grouped;) {
      if (it->node != r.node) {
        ++it;
        continue;
      }
      e.successors.push_back(Event::Successor{it->thread, it->reason});
      m->successors.push_back(*it);
      it = m->entry.erase(it);
    }
  }
  m->wanted_told = options_.wanted_notices && !m->leased && WantedElsewhere(*m);
  e.wanted_elsewhere = m->wanted_told;
  // Any wait set's: a condition's signal makes its waiters want the
  // synchronizer as a notify makes Object.wait's want the monitor.
  if (options_.wanted_notices && !m->leased) {
    for (const Waiter& w : m->waiters) {
      if (w.node != r.node) {
        e.waiters_elsewhere = true;
        break;
      }
    }
  }
  out->push_back(e);
}

bool MonitorTable::FirstInLine(const Monitor& m, uint64_t place) const {
  auto earlier = [place](uint64_t p) { return p != kNotInLine && p < place; };
  for (const Waiter& w : m.waiters) {
    if (earlier(w.place)) return false;
  }
  for (const Request& r : m.entry) {
    if (earlier(r.place)) return false;
  }
  return true;
}

// The signal's turn: the monitor is free, so its notify happens now, as if
// the signalling thread had entered, notified and exited. The woken join the
// entry queue's tail, as after Notify.
void MonitorTable::ServeSignal(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out) {
  Request r = m->entry.front();
  m->entry.pop_front();
  NotifyWaiters(m, r.key, r.all, r.to_key);
  // A node that signals is likely to use the monitor again: leave it a lease
  // when it may have one. Otherwise the monitor stays free and Settle serves
  // the next request.
  if (r.node == kNoNode || !MayLease(*m, now)) return;
  m->owned = true;
  m->leased = true;
  m->owner_node = r.node;
  m->owner_thread = r.thread;
  m->owner_java_thread = 0;
  m->recall_sent = false;
  m->grant_cancelled = false;
  Event e{Event::kGranted};
  e.node = r.node;
  e.object = obj;
  e.thread = r.thread;
  e.lease = true;
  e.reason = Wake::kSignalled;
  out->push_back(e);
}

void MonitorTable::Release(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out) {
  // Successors the owner's node did not hand the monitor to (its release
  // named none, or it died, or their program failed) are served first, as
  // the service would have.
  while (!m->successors.empty()) {
    m->entry.push_front(m->successors.back());
    m->successors.pop_back();
  }
  m->owned = false;
  m->leased = false;
  m->owner_java_thread = 0;
  m->in_line_owner = QueuedWaiter();
  m->recall_sent = false;
  m->grant_cancelled = false;
  Settle(obj, m, now, out);
}

void MonitorTable::MaybeRecall(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out) {
  if (!m->owned || !m->leased || m->recall_sent || m->entry.empty()) return;
  m->recall_sent = true;
  m->last_recall = now;
  Event e{Event::kRecall};
  e.node = m->owner_node;
  e.object = obj;
  out->push_back(e);
}

// Serves a free monitor, or recalls a lease that someone is queued behind.
// Signals leave the monitor free (or leased): serve on until it is owned or
// nobody is queued.
void MonitorTable::Settle(ObjectId obj, Monitor* m, TimeNs now, std::vector<Event>* out) {
  while (!m->owned && !m->entry.empty()) GrantNext(obj, m, now, out);
  MaybeRecall(obj, m, now, out);
  MaybeTellWanted(obj, m, out);
}

bool MonitorTable::WantedElsewhere(const Monitor& m) const {
  for (const Request& r : m.entry)
    if (!r.signal() && r.node != m.owner_node) return true;
  return false;
}

void MonitorTable::MaybeTellWanted(ObjectId obj, Monitor* m, std::vector<Event>* out) {
  // A lease's node hears a Recall instead. A synchronizer's holder (a
  // shared ReentrantLock's) hears it too: what it wrote under the lock
  // leaves with its release.
  if (!options_.wanted_notices || !m->owned || m->leased || m->wanted_told ||
      !WantedElsewhere(*m))
    return;
  m->wanted_told = true;
  Event e{Event::kWanted};
  e.node = m->owner_node;
  e.object = obj;
  e.tenure = m->tenure;
  out->push_back(e);
}

void MonitorTable::Requeue(Monitor* m, std::list<Waiter>::iterator w, enum Wake why) {
  Request r{w->node, w->thread, why};
  r.java_thread = w->java_thread;
  r.place = w->place;
  // Object.wait's: woken, it re-enters a Java monitor (key 0 is only its).
  r.grouped = w->key == 0;
  r.key = w->key;  // its wait set's, which Query reports for a place in line
  m->entry.push_back(r);
  Unwait(*w);
  m->waiters.erase(w);
}

void MonitorTable::NotifyWaiters(Monitor* m, uint64_t key, bool all, uint64_t to_key) {
  // Moved waiters go after the end as it was: each is met once.
  auto end = m->waiters.end();
  std::list<Waiter> moved;
  for (auto it = m->waiters.begin(); it != end;) {
    auto w = it++;
    if (w->key != key) continue;
    if (to_key == 0) {
      Requeue(m, w, Wake::kNotified);
    } else {
      if (w->deadline != kNoDeadline) deadlines_.erase({w->deadline, w->thread});
      w->deadline = kNoDeadline;
      w->key = to_key;
      w->moved = true;
      w->place = ++m->last_place;  // the end of the line
      moved.splice(moved.end(), m->waiters, w);
    }
    if (!all) break;
  }
  m->waiters.splice(m->waiters.end(), moved);
}

void MonitorTable::Wake(ObjectId obj, Monitor* m, std::list<Waiter>::iterator w,
                        enum Wake why, TimeNs now, std::vector<Event>* out) {
  Requeue(m, w, why);
  Settle(obj, m, now, out);
}

void MonitorTable::MaybeErase(ObjectId obj) {
  auto it = monitors_.find(obj);
  if (it == monitors_.end()) return;
  const Monitor& m = it->second;
  // An idle monitor carries no state worth keeping, except a recent recall
  // (the lease cool-down) which is only an optimisation.
  if (!m.owned && m.entry.empty() && m.successors.empty() && m.waiters.empty())
    monitors_.erase(it);
}

TimeNs MonitorTable::NextDeadline() const {
  return deadlines_.empty() ? kNoDeadline : deadlines_.begin()->first;
}

void MonitorTable::Unwait(const Waiter& w) {
  waiting_.erase(w.thread);
  if (w.deadline != kNoDeadline) deadlines_.erase({w.deadline, w.thread});
}

bool MonitorTable::IsOwned(ObjectId obj) const {
  const Monitor* m = Find(obj);
  return m && m->owned;
}

bool MonitorTable::IsLeased(ObjectId obj, NodeId* node) const {
  const Monitor* m = Find(obj);
  if (!m || !m->owned || !m->leased) return false;
  if (node) *node = m->owner_node;
  return true;
}

bool MonitorTable::OwnerIs(ObjectId obj, ThreadRef t) const {
  const Monitor* m = Find(obj);
  return m && m->owned && !m->leased && m->owner_thread == t;
}

size_t MonitorTable::EntryQueueLength(ObjectId obj) const {
  const Monitor* m = Find(obj);
  return m ? m->entry.size() : 0;
}

size_t MonitorTable::WaitSetSize(ObjectId obj) const {
  const Monitor* m = Find(obj);
  return m ? m->waiters.size() : 0;
}

bool MonitorTable::ProgramFailed(ProgramId p, std::string* why) const {
  auto it = failed_.find(p);
  if (it == failed_.end()) return false;
  if (why) *why = it->second;
  return true;
}

}  // namespace monitor
}  // namespace djava
