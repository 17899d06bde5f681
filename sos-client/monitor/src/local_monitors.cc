#include "local_monitors.h"

namespace djava {
namespace monitor {

LocalMonitors::Send LocalMonitors::Enter(uint64_t obj, LocalThread t, uint64_t java_thread) {
  State& s = states_[obj];
  if (s.owned && s.owner == t) {
    s.count++;
    return Send::kNothing;
  }
  if (TakeKept(&s, t, java_thread)) return Send::kNothing;
  // The lease lets the node grant a free monitor to its own threads without
  // a message -- unless it was recalled: then even local threads go through
  // the service and queue behind the node that asked (no livelock).
  if (s.lease && !s.recall_pending && !s.owned) {
    s.owned = true;
    s.owner = t;
    s.owner_java_thread = java_thread;
    s.count = 1;
    return Send::kNothing;
  }
  // Owned by another local thread under the lease: the service queues this
  // request FIFO and recalls the lease from us, so local waiters are served
  // in the same order as remote ones.
  return Send::kEnter;
}

LocalMonitors::Send LocalMonitors::TryEnter(uint64_t obj, LocalThread t, uint64_t java_thread) {
  auto it = states_.find(obj);
  if (it == states_.end()) return Send::kEnter;  // the service decides
  State& s = it->second;
  if (s.owned && s.owner == t) {
    s.count++;
    return Send::kNothing;
  }
  if (TakeKept(&s, t, java_thread)) return Send::kNothing;
  // Owned by another thread here (with or without a lease: either way it
  // holds the monitor at the service too), or kept for one.
  if (s.owned || s.lingering) return Send::kBusy;
  if (s.lease) {
    // Recalled with nobody owning cannot last (the lease goes back at
    // once); were it so, someone is queued at the service: busy.
    if (s.recall_pending) return Send::kBusy;
    s.owned = true;
    s.owner = t;
    s.owner_java_thread = java_thread;
    s.count = 1;
    return Send::kNothing;
  }
  return Send::kEnter;
}

bool LocalMonitors::TakeKept(State* s, LocalThread t, uint64_t java_thread) {
  if (!s->lingering || s->owner != t) return false;
  // Its own release, kept back: the tenure goes on.
  s->lingering = false;
  s->linger_takes++;
  s->owned = true;
  s->owner_java_thread = java_thread;
  s->count = 1;
  return true;
}

bool LocalMonitors::HandOn(State* s, Successor* next) {
  if (s->successors.empty() || next == nullptr) return false;
  *next = s->successors.front();
  s->successors.pop_front();
  s->owned = true;
  s->owner = next->thread;
  s->owner_java_thread = next->java_thread;
  auto sv = s->saved.find(next->thread);
  if (sv != s->saved.end()) {
    s->count = sv->second;  // a woken waiter re-acquires with its count
    s->saved.erase(sv);
  } else {
    s->count = 1;
  }
  return true;
}

bool LocalMonitors::Exit(uint64_t obj, LocalThread t, Send* send, Successor* next,
                         std::vector<uint64_t>* released, bool may_linger) {
  *send = Send::kNothing;
  if (next != nullptr) *next = Successor();
  auto it = states_.find(obj);
  if (it == states_.end() || !it->second.owned || it->second.owner != t) return false;
  State& s = it->second;
  if (--s.count > 0) return true;
  s.owned = false;
  s.owner_java_thread = 0;
  if (!s.lease) {
    const bool promised = s.linger_promised;
    s.linger_promised = false;
    if (!HandOn(&s, next)) {
      if (may_linger &&
          (promised ||
           s.linger_takes < (s.wanted_elsewhere ? kLingerTakesWanted : kLingerTakes))) {
        s.lingering = true;
        *send = Send::kLinger;
        return true;
      }
      EndTenure(&s, released);
    }
    *send = Send::kExit;
  } else if (s.recall_pending) {
    s.lease = false;
    s.recall_pending = false;
    *send = Send::kReturnLease;
  }  // else: keep the lease, no message
  MaybeErase(obj);
  return true;
}

bool LocalMonitors::BeginWait(uint64_t obj, LocalThread t, Successor* next,
                              std::vector<uint64_t>* released) {
  if (next != nullptr) *next = Successor();
  auto it = states_.find(obj);
  if (it == states_.end() || !it->second.owned || it->second.owner != t) return false;
  State& s = it->second;
  s.saved[t] = s.count;
  s.owned = false;
  s.owner_java_thread = 0;
  s.count = 0;
  // The service treats Wait as a full release, lease included.
  s.lease = false;
  s.recall_pending = false;
  if (!HandOn(&s, next)) EndTenure(&s, released);
  return true;
}

bool LocalMonitors::ReleasesToService(uint64_t obj, LocalThread t) const {
  auto it = states_.find(obj);
  if (it == states_.end()) return false;
  const State& s = it->second;
  return s.owned && s.owner == t && s.count == 1 && !s.lease && s.successors.empty();
}

bool LocalMonitors::PromiseLinger(uint64_t obj, LocalThread t) {
  if (!ReleasesToService(obj, t)) return false;
  State& s = states_.find(obj)->second;
  if (s.linger_takes >= (s.wanted_elsewhere ? kLingerTakesWanted : kLingerTakes)) return false;
  s.linger_promised = true;
  return true;
}

bool LocalMonitors::Lingering(uint64_t obj, LocalThread t, uint64_t* since, bool* wanted) const {
  auto it = states_.find(obj);
  if (it == states_.end() || !it->second.lingering || it->second.owner != t) return false;
  *since = it->second.tenure_mark;
  *wanted = it->second.wanted_elsewhere;
  return true;
}

bool LocalMonitors::EndLinger(uint64_t obj, LocalThread t, const std::vector<uint64_t>& handed,
                              std::vector<uint64_t>* released) {
  auto it = states_.find(obj);
  if (it == states_.end() || !it->second.lingering || it->second.owner != t) return false;
  State& s = it->second;
  s.lingering = false;
  s.released = handed;
  EndTenure(&s, released);
  MaybeErase(obj);
  return true;
}

void LocalMonitors::EndTenure(State* s, std::vector<uint64_t>* released) {
  if (released != nullptr) *released = std::move(s->released);
  s->released.clear();
  s->wanted_elsewhere = false;
  s->waiters_elsewhere = false;
  s->linger_takes = 0;
  s->linger_promised = false;
}

void LocalMonitors::StartTenure(uint64_t obj, bool wanted_elsewhere, uint64_t mark,
                                bool waiters_elsewhere, uint64_t tenure) {
  auto early = early_wanted_.find(obj);
  if (early != early_wanted_.end()) {
    if (tenure != 0 && early->second == tenure) wanted_elsewhere = true;
    early_wanted_.erase(early);
  }
  auto it = states_.find(obj);
  if (it == states_.end() || !it->second.owned || it->second.lease) return;
  it->second.tenure = tenure;
  it->second.linger_takes = 0;
  it->second.tenure_mark = mark;
  it->second.wanted_elsewhere = wanted_elsewhere;
  it->second.waiters_elsewhere = waiters_elsewhere;
  it->second.released.clear();
}

void LocalMonitors::Notified(uint64_t obj) {
  auto it = states_.find(obj);
  if (it != states_.end() && it->second.waiters_elsewhere) it->second.wanted_elsewhere = true;
}

void LocalMonitors::OnWanted(uint64_t obj, uint64_t tenure) {
  // A notice that crossed the release it was about is about no tenure
  // here; one that overtook its grant is kept for it.
  auto it = states_.find(obj);
  if (it != states_.end() && !it->second.lease &&
      (it->second.owned || it->second.lingering || !it->second.successors.empty()) &&
      (tenure == 0 || it->second.tenure == tenure)) {
    it->second.wanted_elsewhere = true;
    return;
  }
  if (tenure == 0) return;
  if (early_wanted_.size() >= kEarlyWantedKept) early_wanted_.clear();  // a lost one only moves less
  early_wanted_[obj] = tenure;
}

bool LocalMonitors::ReleaseWanted(uint64_t obj, LocalThread t, bool whole,
                                  uint64_t* since) const {
  auto it = states_.find(obj);
  if (it == states_.end()) return false;
  const State& s = it->second;
  if (!s.owned || s.owner != t || s.lease || !s.wanted_elsewhere || !s.successors.empty() ||
      (!whole && s.count != 1))
    return false;
  *since = s.tenure_mark;
  return true;
}

void LocalMonitors::NoteReleased(uint64_t obj, LocalThread t, const std::vector<uint64_t>& ids) {
  auto it = states_.find(obj);
  if (it == states_.end() || !it->second.owned || it->second.owner != t) return;
  it->second.released = ids;
}

bool LocalMonitors::Notify(uint64_t obj, LocalThread t, Send* send) const {
  *send = Send::kNothing;
  if (!Owns(obj, t)) return false;
  // Under the lease nobody waits: a notify would wake no one.
  if (!HoldsLease(obj)) *send = Send::kNotify;
  return true;
}

LocalMonitors::Send LocalMonitors::Signal(uint64_t obj) const {
  auto it = states_.find(obj);
  if (it != states_.end() && it->second.lease && !it->second.owned) return Send::kNothing;
  // Not leased: the service decides when the monitor is free. Leased but
  // owned here: the notify is due at the owner's release, which may be a
  // wait that this very signal must wake, so the service queues it (and
  // recalls the lease from this node).
  return Send::kSignal;
}

LocalMonitors::Send LocalMonitors::OnGranted(uint64_t obj, LocalThread t, bool lease,
                                             bool wanted, uint64_t java_thread,
                                             const std::vector<Successor>& successors,
                                             Successor* next) {
  State& s = states_[obj];
  s.lease = lease;
  s.recall_pending = false;
  if (next != nullptr) *next = Successor();
  s.successors.assign(successors.begin(), successors.end());
  if (!wanted) {
    s.saved.erase(t);
    // Given up: the monitor goes on to the first successor at once.
    if (!lease && HandOn(&s, next)) return Send::kExit;
    // Nobody to give it to: keep a lease (no message), else hand it back.
    Send r = lease ? Send::kNothing : Send::kExit;
    MaybeErase(obj);
    return r;
  }
  s.owned = true;
  s.owner = t;
  s.owner_java_thread = java_thread;
  auto sv = s.saved.find(t);
  if (sv != s.saved.end()) {
    s.count = sv->second;  // wait() re-acquires with the same count
    s.saved.erase(sv);
  } else {
    s.count = 1;
  }
  return Send::kNothing;
}

void LocalMonitors::OnLeaseGranted(uint64_t obj) {
  State& s = states_[obj];
  // The service leases only a monitor it counts free, and this node's
  // requests and the service's events are each in order, so a local owner
  // or a lease held already cannot be here. Were they, the service's view
  // wins: the node holds the lease (any of its threads may release it), an
  // owner keeps owning under it and its exit keeps the lease, and a recall
  // of an earlier lease no longer applies.
  s.lease = true;
  s.recall_pending = false;
}

LocalMonitors::Send LocalMonitors::OnRecall(uint64_t obj) {
  auto it = states_.find(obj);
  if (it == states_.end() || !it->second.lease) return Send::kNothing;
  State& s = it->second;
  if (s.owned) {
    s.recall_pending = true;
    return Send::kNothing;
  }
  s.lease = false;
  MaybeErase(obj);
  return Send::kReturnLease;
}

void LocalMonitors::Forget(uint64_t obj, LocalThread t) {
  auto it = states_.find(obj);
  if (it == states_.end()) return;
  it->second.saved.erase(t);
  auto& su = it->second.successors;
  for (auto s = su.begin(); s != su.end(); ++s) {
    if (s->thread == t) {
      su.erase(s);
      break;
    }
  }
  MaybeErase(obj);
}

bool LocalMonitors::Owns(uint64_t obj, LocalThread t) const {
  auto it = states_.find(obj);
  return it != states_.end() && it->second.owned && it->second.owner == t;
}

int LocalMonitors::Count(uint64_t obj, LocalThread t) const {
  return Owns(obj, t) ? states_.at(obj).count : 0;
}

bool LocalMonitors::HoldsLease(uint64_t obj) const {
  auto it = states_.find(obj);
  return it != states_.end() && it->second.lease;
}

bool LocalMonitors::Idle() const {
  for (const auto& kv : states_)
    if (kv.second.owned || kv.second.lingering || !kv.second.saved.empty()) return false;
  return true;
}

std::vector<uint64_t> LocalMonitors::Leases() const {
  std::vector<uint64_t> out;
  for (const auto& kv : states_)
    if (kv.second.lease) out.push_back(kv.first);
  return out;
}

bool LocalMonitors::RecallPending(uint64_t obj) const {
  auto it = states_.find(obj);
  return it != states_.end() && it->second.recall_pending;
}

bool LocalMonitors::LocalOwner(uint64_t obj, uint64_t* java_thread) const {
  *java_thread = 0;
  auto it = states_.find(obj);
  if (it == states_.end() || !it->second.owned) return false;
  *java_thread = it->second.owner_java_thread;
  return true;
}

bool LocalMonitors::KnowsState(uint64_t obj) const {
  auto it = states_.find(obj);
  return it != states_.end() && it->second.lease && !it->second.recall_pending;
}

void LocalMonitors::MaybeErase(uint64_t obj) {
  auto it = states_.find(obj);
  if (it == states_.end()) return;
  const State& s = it->second;
  if (!s.owned && !s.lingering && !s.lease && s.saved.empty() && s.successors.empty())
    states_.erase(it);
}

}  // namespace monitor
}  // namespace djava
