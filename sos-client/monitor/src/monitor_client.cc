#include "monitor_client.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace djava {
namespace monitor {

namespace {

thread_local std::string last_error;
// The place in line the thread's last wait ended with (WaitKeyed).
thread_local MonitorClient::LinePlace last_place;
// What the thread's last Arrive or BarrierOp ended with.
thread_local MonitorClient::BarrierResult last_barrier;

int SetError(int status, const std::string& why) {
  last_error = why;
  return status;
}

void ToProto(uint64_t obj, LocalThread t, uint64_t* o, monitorpb::ThreadId* id) {
  *o = obj;
  id->set_program(t.program);
  id->set_thread(t.thread);
}

}  // namespace

const std::string& MonitorClient::LastError() { return last_error; }

MonitorClient::LinePlace MonitorClient::LastPlace() { return last_place; }

MonitorClient::BarrierResult MonitorClient::LastBarrier() { return last_barrier; }

MonitorClient::MonitorClient(std::vector<std::unique_ptr<Channel>> shards,
                             const std::string& node_name, uint64_t sos_node)
    : pong_(shards.size(), 0), shards_(std::move(shards)) {
  if (!node_name.empty() || sos_node != 0) {
    std::lock_guard<std::mutex> l(mu_);
    for (size_t i = 0; i < shards_.size(); i++) {
      monitorpb::MonitorRequest req;
      req.mutable_hello()->set_node_name(node_name);
      // The cache's number, which the first shard gave and every shard
      // knows the node by: each shard's monitors move that shard's data.
      req.mutable_hello()->set_sos_node(sos_node);
      SendLocked(i, &req);
    }
  }
  for (size_t i = 0; i < shards_.size(); i++)
    readers_.emplace_back([this, i] { ReaderLoop(i); });
}

MonitorClient::~MonitorClient() {
  Close();
  {
    std::lock_guard<std::mutex> lock(mu_);
    linger_stop_ = true;
  }
  linger_cv_.notify_all();
  if (linger_thread_.joinable()) linger_thread_.join();
  for (auto& t : readers_) t.join();
}

void MonitorClient::Close() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Releases kept back go now: the node is leaving.
    std::vector<std::pair<uint64_t, LocalThread>> kept;
    for (const auto& l : lingers_) kept.push_back(l.first);
    for (const auto& [obj, t] : kept) EndLinger(&lock, obj, t, /*hand_over=*/false);
    if (!closed_ && !AnyBlocked() && local_.Idle() && !LeaveLocked(&lock))
      std::fprintf(stderr, "djava monitor client: the monitor service did not confirm this "
                           "node's leave: %s\n", closed_ ? io_error_.c_str() : "timed out");
  }
  for (auto& s : shards_) s->Shutdown();
}

bool MonitorClient::LeaveLocked(std::unique_lock<std::mutex>* lock) {
  for (uint64_t obj : local_.Leases()) {
    if (local_.OnRecall(obj) != LocalMonitors::Send::kReturnLease) continue;
    monitorpb::MonitorRequest req;
    req.mutable_return_lease()->set_object(obj);
    if (!SendLocked(ShardOf(obj), &req)) return false;
  }
  // Leave, then a Ping on the same connection: its Pong proves the service
  // took the Leave before this node's connection closes.
  const uint64_t nonce = seq_ + 1;
  for (size_t i = 0; i < shards_.size(); i++) {
    monitorpb::MonitorRequest leave;
    leave.mutable_leave();
    monitorpb::MonitorRequest ping;
    ping.mutable_ping()->set_nonce(nonce);
    if (!SendLocked(i, &leave) || !SendLocked(i, &ping)) return false;
  }
  auto confirmed = [&] {
    for (uint64_t p : pong_)
      if (p < nonce) return false;
    return true;
  };
  // Bounded: a service that stopped answering must not keep the VM from
  // exiting.
  pong_cv_.wait_for(*lock, std::chrono::seconds(5), [&] { return confirmed() || closed_; });
  return confirmed();
}

int MonitorClient::Check(LocalThread t) {
  if (closed_) return SetError(DJAVA_MON_IO, io_error_);
  auto f = failed_programs_.find(t.program);
  if (f != failed_programs_.end()) return SetError(DJAVA_MON_FAILED, f->second);
  return DJAVA_MON_OK;
}

bool MonitorClient::SendLocked(size_t shard, monitorpb::MonitorRequest* req) {
  // Sent under mu_: the service sees this node's messages in the order of
  // the local state changes that caused them (e.g. Enter before ReturnLease).
  req->set_seq(++seq_);
  sent_by_kind_.Count(req->body_case());
  return shards_[shard]->Send(*req);
}

namespace {

// How a blocked enter or wait ends with the monitor, by why it got it.
int GrantStatus(monitorpb::WakeReason reason) {
  if (reason == monitorpb::TIMED_OUT) return DJAVA_MON_TIMED_OUT;
  if (reason == monitorpb::INTERRUPTED) return DJAVA_MON_INTERRUPTED;
  return DJAVA_MON_OK;
}

}  // namespace

void MonitorClient::HandedOn(uint64_t obj, const LocalMonitors::Successor& s) {
  Pending* p = Awaiting(s.thread, obj);
  if (p == nullptr) return;  // cannot be: a request given up leaves the successors
  p->woken_place = LinePlace();
  Finish(p, s.outcome, s.outcome == DJAVA_MON_INTERRUPTED ? "interrupted" : "");
}

void MonitorClient::Finish(Pending* p, int status, const std::string& error) {
  if (p->done) return;
  p->done = true;
  p->status = status;
  p->error = error;
  p->cv.notify_all();
}

int MonitorClient::Block(std::unique_lock<std::mutex>* lock, LocalThread t,
                         const std::shared_ptr<Pending>& p, int64_t poll_ms) {
  using Clock = std::chrono::steady_clock;
  const bool polled = poll_ms >= 0;
  const Clock::time_point poll_end = Clock::now() + std::chrono::milliseconds(poll_ms);
  if (polled && poked_.erase(t.thread) != 0) p->poked = true;
  auto done = [&p, polled] { return p->done || (polled && p->poked); };
  while (!p->done) {
    const Clock::time_point now = Clock::now();
    // The deadline first: a poll that ends with it reports the timeout.
    if (p->has_deadline && now >= p->deadline) {
      if (p->enter)
        GiveUp(t, p.get(), DJAVA_MON_TIMED_OUT, "monitor enter timed out");
      else
        GiveUp(t, p.get(), DJAVA_MON_CANCELLED, "wait in line timed out");
      break;
    }
    if (polled && (p->poked || now >= poll_end)) {
      p->poked = false;
      return DJAVA_MON_WAITING;
    }
    if (!polled && !p->has_deadline) {
      p->cv.wait(*lock, done);
    } else {
      Clock::time_point end = polled ? poll_end : p->deadline;
      if (polled && p->has_deadline && p->deadline < end) end = p->deadline;
      p->cv.wait_until(*lock, end, done);
    }
  }
  auto it = pending_.find(t);
  if (it != pending_.end() && it->second == p) pending_.erase(it);
  if (p->status != DJAVA_MON_OK) last_error = p->error;
  last_place = p->woken_place;
  if (p->barrier) last_barrier = p->barrier_result;
  return p->status;
}

void MonitorClient::Poke(uint64_t thread) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [t, p] : pending_) {
    if (t.thread != thread || p->done) continue;
    p->poked = true;
    p->cv.notify_all();
    return;
  }
  if (poked_.size() >= kPokedKept) poked_.clear();
  poked_.insert(thread);
}

MonitorClient::Pending* MonitorClient::Awaiting(LocalThread t, uint64_t obj) {
  auto it = pending_.find(t);
  if (it == pending_.end() || it->second->done || it->second->obj != obj) return nullptr;
  return it->second.get();
}

bool MonitorClient::AnyBlocked() const {
  for (const auto& p : pending_)
    if (!p.second->done) return true;
  return false;
}

int MonitorClient::EnterPolled(uint64_t obj, LocalThread t, uint64_t java_thread,
                               int64_t timeout_ms, int64_t poll_ms, bool grouped,
                               bool barging) {
  if (timeout_ms < 0) return SetError(DJAVA_MON_BAD_ARGUMENT, "timeout value is negative");
  // Taken before the lock: the time spent waiting for it counts.
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  uint64_t since;
  bool wanted;
  // Only an enter that promises no order may find its own release kept.
  const bool unordered = grouped || barging;
  const bool kept = unordered && local_.Lingering(obj, t, &since, &wanted);
  if (local_.Enter(obj, t, java_thread) == LocalMonitors::Send::kNothing) {
    if (kept) {
      lingers_.erase({obj, t});
      auto h = linger_history_.find({obj, t});
      if (h != linger_history_.end()) h->second.score = std::min(h->second.score + 1, 3);
    }
    return DJAVA_MON_OK;
  }
  if (unordered) NoteEnterAfterRelease(obj, t);
  auto p = std::make_shared<Pending>();
  p->obj = obj;
  p->enter = true;
  p->java_thread = java_thread;
  if (mark_ != nullptr) p->mark = mark_();
  if (timeout_ms > 0) {
    p->has_deadline = true;
    p->deadline = start + std::chrono::milliseconds(timeout_ms);
  }
  pending_[t] = p;
  monitorpb::MonitorRequest req;
  auto* e = req.mutable_enter();
  uint64_t o;
  ToProto(obj, t, &o, e->mutable_thread());
  e->set_object(o);
  e->set_java_thread(java_thread);
  e->set_grouped(grouped);
  if (!SendLocked(ShardOf(obj), &req))
    Finish(p.get(), DJAVA_MON_IO, "monitor service connection lost");
  return Block(&lock, t, p, poll_ms);
}

int MonitorClient::EnterMore(LocalThread t, int64_t poll_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = pending_.find(t);
  if (it == pending_.end() || !it->second->enter)
    return SetError(DJAVA_MON_BAD_ARGUMENT, "the thread has no enter in progress");
  std::shared_ptr<Pending> p = it->second;
  return Block(&lock, t, p, poll_ms);
}

int MonitorClient::TryEnter(uint64_t obj, LocalThread t, uint64_t java_thread) {
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  switch (local_.TryEnter(obj, t, java_thread)) {
    case LocalMonitors::Send::kNothing:
      return DJAVA_MON_OK;
    case LocalMonitors::Send::kBusy:
      return SetError(DJAVA_MON_BUSY, "monitor is owned or entered by another thread");
    default:
      break;
  }
  auto p = std::make_shared<Pending>();
  p->obj = obj;
  p->enter = true;
  p->try_only = true;
  p->java_thread = java_thread;
  pending_[t] = p;
  monitorpb::MonitorRequest req;
  auto* e = req.mutable_enter();
  uint64_t o;
  ToProto(obj, t, &o, e->mutable_thread());
  e->set_object(o);
  e->set_java_thread(java_thread);
  e->set_try_only(true);
  if (!SendLocked(ShardOf(obj), &req))
    Finish(p.get(), DJAVA_MON_IO, "monitor service connection lost");
  return Block(&lock, t, p);  // one round trip: Granted or Busy
}

void MonitorClient::SetMarkSource(std::function<uint64_t()> mark) {
  std::lock_guard<std::mutex> lock(mu_);
  mark_ = std::move(mark);
}

void MonitorClient::SetHandOver(HandOverFn f) {
  std::lock_guard<std::mutex> lock(mu_);
  hand_over_ = std::move(f);
}

bool MonitorClient::ReleaseWanted(uint64_t obj, LocalThread t, bool whole, uint64_t* since) {
  if (!told_wanted_.load(std::memory_order_relaxed)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  // A release kept back hands over when it goes, if it goes; one past its
  // tenure's bound is not kept back, and hands over now.
  if (!whole && WouldLinger(obj, t) && local_.PromiseLinger(obj, t)) return false;
  return mark_ != nullptr && local_.ReleaseWanted(obj, t, whole, since);
}

bool MonitorClient::WouldLinger(uint64_t obj, LocalThread t) const {
  if (hand_over_ == nullptr) return false;
  auto h = linger_history_.find({obj, t});
  return h != linger_history_.end() && h->second.score > 0 && local_.ReleasesToService(obj, t);
}

void MonitorClient::NoteEnterAfterRelease(uint64_t obj, LocalThread t) {
  if (hand_over_ == nullptr) return;  // nothing is kept back: no history to keep
  auto h = linger_history_.find({obj, t});
  if (h == linger_history_.end()) return;
  if (std::chrono::steady_clock::now() - h->second.released <= linger_for_)
    h->second.score = std::min(h->second.score + 1, 3);
}

void MonitorClient::NoteReleaseToService(uint64_t obj, LocalThread t) {
  if (hand_over_ == nullptr) return;
  if (linger_history_.size() >= kLingerHistoryKept && linger_history_.count({obj, t}) == 0)
    linger_history_.clear();  // a forgotten one only lingers later
  linger_history_[{obj, t}].released = std::chrono::steady_clock::now();
}

void MonitorClient::EndLinger(std::unique_lock<std::mutex>* lock, uint64_t obj, LocalThread t,
                              bool hand_over) {
  lingers_.erase({obj, t});
  uint64_t since = 0;
  bool wanted = false;
  if (!local_.Lingering(obj, t, &since, &wanted)) return;
  std::vector<uint64_t> handed;
  if (hand_over && wanted && mark_ != nullptr && hand_over_ != nullptr &&
      failed_programs_.count(t.program) == 0) {
    // Never under mu_: writing a chunk home may wait for a safepoint, which
    // may wait for a thread of the JVM waiting for mu_.
    auto write_home = hand_over_;
    lock->unlock();
    handed = write_home(obj, since, t.program);
    lock->lock();
  }
  std::vector<uint64_t> released;
  if (!local_.EndLinger(obj, t, handed, &released)) return;  // entered again meanwhile
  auto h = linger_history_.find({obj, t});
  if (h != linger_history_.end()) h->second.score = std::max(h->second.score - 2, -3);
  NoteReleaseToService(obj, t);
  // A failed program's monitors are gone at the service already.
  if (failed_programs_.count(t.program) != 0 || closed_) return;
  monitorpb::MonitorRequest req;
  uint64_t o;
  ToProto(obj, t, &o, req.mutable_exit()->mutable_thread());
  req.mutable_exit()->set_object(o);
  for (uint64_t id : released) req.mutable_exit()->add_released(id);
  SendLocked(ShardOf(obj), &req);  // a lost connection fails every waiter anyway
}

void MonitorClient::LingerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!linger_stop_) {
    if (lingers_.empty()) {
      linger_cv_.wait(lock);
      continue;
    }
    auto first = lingers_.begin();
    for (auto it = lingers_.begin(); it != lingers_.end(); ++it)
      if (it->second < first->second) first = it;
    if (std::chrono::steady_clock::now() < first->second) {
      linger_cv_.wait_until(lock, first->second);
      continue;
    }
    const auto [obj, t] = first->first;
    EndLinger(&lock, obj, t);
  }
}

void MonitorClient::NoteReleased(uint64_t obj, LocalThread t, const std::vector<uint64_t>& ids) {
  std::lock_guard<std::mutex> lock(mu_);
  local_.NoteReleased(obj, t, ids);
}

int MonitorClient::Exit(uint64_t obj, LocalThread t) {
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  LocalMonitors::Send send;
  LocalMonitors::Successor next;
  std::vector<uint64_t> released;
  if (!local_.Exit(obj, t, &send, &next, &released, WouldLinger(obj, t)))
    return SetError(DJAVA_MON_NOT_OWNER, "current thread is not owner");
  monitorpb::MonitorRequest req;
  if (send == LocalMonitors::Send::kLinger) {
    lingers_[{obj, t}] = std::chrono::steady_clock::now() + linger_for_;
    if (!linger_thread_.joinable()) linger_thread_ = std::thread([this] { LingerLoop(); });
    linger_cv_.notify_all();
    return DJAVA_MON_OK;
  }
  if (send == LocalMonitors::Send::kExit && next.thread.thread == 0) NoteReleaseToService(obj, t);
  if (send == LocalMonitors::Send::kExit) {
    uint64_t o;
    ToProto(obj, t, &o, req.mutable_exit()->mutable_thread());
    req.mutable_exit()->set_object(o);
    for (uint64_t id : released) req.mutable_exit()->add_released(id);
    if (next.thread.thread != 0) {
      ToProto(obj, next.thread, &o, req.mutable_exit()->mutable_next());
      // Sent first: whatever the successor does next follows the Exit
      // that makes it the owner at the service.
      bool sent = SendLocked(ShardOf(obj), &req);
      HandedOn(obj, next);
      return sent ? DJAVA_MON_OK : SetError(DJAVA_MON_IO, "monitor service connection lost");
    }
  } else if (send == LocalMonitors::Send::kReturnLease) {
    req.mutable_return_lease()->set_object(obj);
  } else {
    return DJAVA_MON_OK;
  }
  if (!SendLocked(ShardOf(obj), &req))
    return SetError(DJAVA_MON_IO, "monitor service connection lost");
  return DJAVA_MON_OK;
}

int MonitorClient::WaitKeyed(uint64_t obj, LocalThread t, uint64_t key, uint64_t java_thread,
                             int64_t timeout_ms, int64_t poll_ms, uint64_t place) {
  if (timeout_ms < 0) return SetError(DJAVA_MON_BAD_ARGUMENT, "timeout value is negative");
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  // Object.wait names no Thread object: the one of the thread's enter then.
  if (java_thread == 0) local_.LocalOwner(obj, &java_thread);
  LocalMonitors::Successor next;
  std::vector<uint64_t> released;
  if (!local_.BeginWait(obj, t, &next, &released))
    return SetError(DJAVA_MON_NOT_OWNER, "current thread is not owner");
  auto p = std::make_shared<Pending>();
  p->obj = obj;
  p->java_thread = java_thread;
  if (mark_ != nullptr) p->mark = mark_();
  // An acquirer's timeout is the client's, as an enter's is: at its
  // deadline the wait ends without the monitor, which the thread needs
  // back only to look at the synchronizer's state again. A lock's holder
  // holds that monitor for as long as it holds the lock, so a timed
  // tryLock waiting for a holder from before the lock was shared would
  // otherwise wait out the next holder too. The service then needs no
  // timer: CancelEnter takes the thread out of its line.
  const bool timed_in_line = place != 0 && timeout_ms > 0;
  if (timed_in_line) {
    p->has_deadline = true;
    p->deadline = start + std::chrono::milliseconds(timeout_ms);
  }
  pending_[t] = p;
  monitorpb::MonitorRequest req;
  auto* w = req.mutable_wait();
  uint64_t o;
  ToProto(obj, t, &o, w->mutable_thread());
  w->set_object(o);
  w->set_timeout_ms(timed_in_line ? 0 : static_cast<uint64_t>(timeout_ms));
  w->set_key(key);
  w->set_java_thread(java_thread);
  w->set_place(place);
  for (uint64_t id : released) w->add_released(id);
  if (next.thread.thread != 0) ToProto(obj, next.thread, &o, w->mutable_next());
  if (!SendLocked(ShardOf(obj), &req))
    Finish(p.get(), DJAVA_MON_IO, "monitor service connection lost");
  if (next.thread.thread != 0) HandedOn(obj, next);
  return Block(&lock, t, p, poll_ms);
}

int MonitorClient::WaitMore(LocalThread t, int64_t poll_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = pending_.find(t);
  if (it == pending_.end())
    return SetError(DJAVA_MON_BAD_ARGUMENT, "the thread has no wait in progress");
  std::shared_ptr<Pending> p = it->second;
  return Block(&lock, t, p, poll_ms);
}

int MonitorClient::NotifyKeyed(uint64_t obj, LocalThread t, uint64_t key, bool all) {
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  LocalMonitors::Send send;
  if (!local_.Notify(obj, t, &send))
    return SetError(DJAVA_MON_NOT_OWNER, "current thread is not owner");
  if (send == LocalMonitors::Send::kNothing) return DJAVA_MON_OK;  // leased: nobody waits
  // The waiters of other nodes woken (Object.wait's, or a condition's)
  // queue for the monitor.
  local_.Notified(obj);
  monitorpb::MonitorRequest req;
  auto* n = req.mutable_notify();
  uint64_t o;
  ToProto(obj, t, &o, n->mutable_thread());
  n->set_object(o);
  n->set_all(all);
  n->set_key(key);
  if (!SendLocked(ShardOf(obj), &req))
    return SetError(DJAVA_MON_IO, "monitor service connection lost");
  return DJAVA_MON_OK;
}

int MonitorClient::Signal(uint64_t obj, LocalThread t, uint64_t key, bool all, uint64_t to_key) {
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  if (local_.Signal(obj) == LocalMonitors::Send::kNothing) return DJAVA_MON_OK;
  monitorpb::MonitorRequest req;
  auto* sg = req.mutable_signal();
  uint64_t o;
  ToProto(obj, t, &o, sg->mutable_thread());
  sg->set_object(o);
  sg->set_key(key);
  sg->set_all(all);
  sg->set_to_key(to_key);
  if (!SendLocked(ShardOf(obj), &req))
    return SetError(DJAVA_MON_IO, "monitor service connection lost");
  return DJAVA_MON_OK;
}

int MonitorClient::Queue(uint64_t obj, LocalThread t, std::vector<KeyedWaiter>* waiters) {
  waiters->clear();
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  if (local_.HoldsLease(obj)) return DJAVA_MON_OK;  // nobody waits under a lease
  std::shared_ptr<Pending> p;
  if (int st = QueryLocked(&lock, obj, t, &p)) return st;
  *waiters = std::move(p->queue);
  return DJAVA_MON_OK;
}

int MonitorClient::State(uint64_t obj, LocalThread t, MonitorState* state) {
  *state = MonitorState();
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  bool enter_in_flight = false;
  for (const auto& kv : pending_)
    enter_in_flight |= kv.second->obj == obj && !kv.second->done;
  // Under an unrecalled lease nobody of another node owns, waits or is
  // queued (an Enter of theirs would have brought a Recall); enters of this
  // node's own threads in flight are queued at the service: ask it then.
  if (local_.KnowsState(obj) && !enter_in_flight) {
    state->owned = local_.LocalOwner(obj, &state->owner_java_thread);
    return DJAVA_MON_OK;
  }
  std::shared_ptr<Pending> p;
  if (int st = QueryLocked(&lock, obj, t, &p)) return st;
  state->owned = p->owned;
  state->owner_java_thread = p->owner_java_thread;
  // Leased to this node (it still holds the lease: only one node does):
  // which thread here owns it, if any, only this node knows.
  if (p->leased && local_.HoldsLease(obj))
    state->owned = local_.LocalOwner(obj, &state->owner_java_thread);
  state->entering = std::move(p->entering);
  state->waiters = std::move(p->queue);
  return DJAVA_MON_OK;
}

int MonitorClient::QueryLocked(std::unique_lock<std::mutex>* lock, uint64_t obj, LocalThread t,
                               std::shared_ptr<Pending>* answer) {
  auto p = std::make_shared<Pending>();
  p->obj = obj;
  p->thread = t;
  const uint64_t nonce = ++query_nonce_;
  queries_[nonce] = p;
  monitorpb::MonitorRequest req;
  auto* q = req.mutable_query();
  uint64_t o;
  ToProto(obj, t, &o, q->mutable_thread());
  q->set_object(o);
  q->set_nonce(nonce);
  if (!SendLocked(ShardOf(obj), &req))
    Finish(p.get(), DJAVA_MON_IO, "monitor service connection lost");
  p->cv.wait(*lock, [&p] { return p->done; });
  queries_.erase(nonce);
  if (p->status != DJAVA_MON_OK) return SetError(p->status, p->error);
  *answer = std::move(p);
  return DJAVA_MON_OK;
}

void MonitorClient::FailQueries(uint64_t program, const std::string& error) {
  for (auto& q : queries_)
    if (q.second->thread.program == program) Finish(q.second.get(), DJAVA_MON_FAILED, error);
}

int MonitorClient::Arrive(uint64_t obj, LocalThread t, uint32_t parties, bool command,
                          bool timed, uint64_t timeout_ns, bool interrupted,
                          uint64_t java_thread, int64_t poll_ms) {
  if (parties == 0) return SetError(DJAVA_MON_BAD_ARGUMENT, "a barrier has at least 1 party");
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  auto p = std::make_shared<Pending>();
  p->obj = obj;
  p->barrier = true;
  p->java_thread = java_thread;
  pending_[t] = p;
  monitorpb::MonitorRequest req;
  auto* a = req.mutable_arrive();
  uint64_t o;
  ToProto(obj, t, &o, a->mutable_thread());
  a->set_object(o);
  a->set_parties(parties);
  a->set_command(command);
  a->set_timed(timed);
  a->set_timeout_ns(timeout_ns);
  a->set_java_thread(java_thread);
  a->set_interrupted(interrupted);
  if (!SendLocked(ShardOf(obj), &req))
    Finish(p.get(), DJAVA_MON_IO, "monitor service connection lost");
  return Block(&lock, t, p, poll_ms);
}

int MonitorClient::BarrierOp(uint64_t obj, LocalThread t, int op) {
  if (op < monitorpb::BARRIER_TRIP || op > monitorpb::BARRIER_QUERY)
    return SetError(DJAVA_MON_BAD_ARGUMENT, "unknown barrier op");
  std::unique_lock<std::mutex> lock(mu_);
  if (int st = Check(t)) return st;
  auto p = std::make_shared<Pending>();
  p->obj = obj;
  p->barrier = true;
  pending_[t] = p;
  monitorpb::MonitorRequest req;
  auto* b = req.mutable_barrier_op();
  uint64_t o;
  ToProto(obj, t, &o, b->mutable_thread());
  b->set_object(o);
  b->set_op(static_cast<monitorpb::BarrierOpKind>(op));
  if (!SendLocked(ShardOf(obj), &req))
    Finish(p.get(), DJAVA_MON_IO, "monitor service connection lost");
  return Block(&lock, t, p);
}

int MonitorClient::Interrupt(LocalThread target) {
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return SetError(DJAVA_MON_IO, io_error_);
  // The target may wait on a monitor of any shard.
  for (size_t s = 0; s < shards_.size(); s++) {
    monitorpb::MonitorRequest req;
    req.mutable_interrupt()->mutable_target()->set_program(target.program);
    req.mutable_interrupt()->mutable_target()->set_thread(target.thread);
    if (!SendLocked(s, &req)) return SetError(DJAVA_MON_IO, "monitor service connection lost");
  }
  return DJAVA_MON_OK;
}

int MonitorClient::Cancel(LocalThread t) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = pending_.find(t);
  if (it == pending_.end() || it->second->done) return DJAVA_MON_OK;
  GiveUp(t, it->second.get(), DJAVA_MON_CANCELLED, "blocking monitor operation cancelled");
  return DJAVA_MON_OK;
}

void MonitorClient::GiveUp(LocalThread t, Pending* p, int status, const std::string& error) {
  local_.Forget(p->obj, t);
  monitorpb::MonitorRequest req;
  auto* c = req.mutable_cancel_enter();
  uint64_t o;
  ToProto(p->obj, t, &o, c->mutable_thread());
  c->set_object(o);
  if (!closed_) SendLocked(ShardOf(p->obj), &req);
  // A grant already on its way finds no pending request and is handed back.
  Finish(p, status, error);
}

int MonitorClient::FreeProgram(uint64_t program) {
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return SetError(DJAVA_MON_IO, io_error_);
  for (size_t s = 0; s < shards_.size(); s++) {
    monitorpb::MonitorRequest req;
    req.mutable_free_program()->set_program(program);
    if (!SendLocked(s, &req)) return SetError(DJAVA_MON_IO, "monitor service connection lost");
  }
  return DJAVA_MON_OK;
}

int MonitorClient::Ping() {
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return SetError(DJAVA_MON_IO, io_error_);
  monitorpb::MonitorRequest req;
  uint64_t nonce = seq_ + 1;
  req.mutable_ping()->set_nonce(nonce);
  if (!SendLocked(0, &req)) return SetError(DJAVA_MON_IO, "monitor service connection lost");
  pong_cv_.wait(lock, [&] { return pong_[0] >= nonce || closed_; });
  return pong_[0] >= nonce ? DJAVA_MON_OK : SetError(DJAVA_MON_IO, io_error_);
}

int MonitorClient::Count(uint64_t obj, LocalThread t) {
  std::unique_lock<std::mutex> lock(mu_);
  return local_.Count(obj, t);
}

std::string MonitorClient::TrafficByKind() {
  return "sent " + sent_by_kind_.Describe(monitorpb::MonitorRequest::descriptor()) +
         "; received " + received_by_kind_.Describe(monitorpb::MonitorEvent::descriptor());
}

void MonitorClient::ReaderLoop(size_t shard) {
  monitorpb::MonitorEvent ev;
  while (shards_[shard]->Receive(&ev)) {
    OnEvent(shard, ev);
    ev.Clear();
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!closed_) {
    closed_ = true;
    io_error_ = "monitor service connection (shard " + std::to_string(shard) + " of " +
                std::to_string(shards_.size()) +
                (shard < shard_addresses_.size() ? ", sos-server " + shard_addresses_[shard] : "") +
                ") lost: " + shards_[shard]->Error();
  }
  // Nothing may stay blocked on a service that is gone.
  for (auto& p : pending_) Finish(p.second.get(), DJAVA_MON_IO, io_error_);
  for (auto& q : queries_) Finish(q.second.get(), DJAVA_MON_IO, io_error_);
  pong_cv_.notify_all();
  for (auto& s : shards_) s->Shutdown();
}

void MonitorClient::OnEvent(size_t shard, const monitorpb::MonitorEvent& ev) {
  std::unique_lock<std::mutex> lock(mu_);
  received_by_kind_.Count(ev.body_case());
  switch (ev.body_case()) {
    case monitorpb::MonitorEvent::kGranted: {
      const auto& g = ev.granted();
      if (g.reason() == monitorpb::SIGNALLED) {
        // A signal of ours left us the lease: no thread waits for it, and
        // it completes no request (a blocked enter of the same thread was
        // queued after the signal and gets its own grant).
        if (g.lease()) local_.OnLeaseGranted(g.object());
        break;
      }
      LocalThread t{g.thread().program(), g.thread().thread()};
      Pending* p = Awaiting(t, g.object());
      bool wanted = p != nullptr;
      // The successors still blocked here (one given up sent its
      // CancelEnter, which takes it out at the service too).
      std::vector<LocalMonitors::Successor> successors;
      for (const auto& su : g.successors()) {
        LocalThread st{su.thread().program(), su.thread().thread()};
        if (st == t) continue;
        if (Pending* sp = Awaiting(st, g.object()))
          successors.push_back(
              LocalMonitors::Successor{st, sp->java_thread,
                                       sp->enter ? DJAVA_MON_OK : GrantStatus(su.reason())});
      }
      LocalMonitors::Successor next;
      if (local_.OnGranted(g.object(), t, g.lease(), wanted, wanted ? p->java_thread : 0,
                           successors, &next) == LocalMonitors::Send::kExit) {
        monitorpb::MonitorRequest req;
        uint64_t o;
        ToProto(g.object(), t, &o, req.mutable_exit()->mutable_thread());
        req.mutable_exit()->set_object(o);
        if (next.thread.thread != 0)
          ToProto(g.object(), next.thread, &o, req.mutable_exit()->mutable_next());
        SendLocked(shard, &req);
        if (next.thread.thread != 0) HandedOn(g.object(), next);
      } else if (wanted && !g.lease() && mark_ != nullptr) {
        if (g.wanted_elsewhere() || g.waiters_elsewhere()) told_wanted_.store(true);
        local_.StartTenure(g.object(), g.wanted_elsewhere(), p->mark, g.waiters_elsewhere(),
                           g.tenure());
      }
      if (wanted) {
        // An enter may take the grant of a wait the thread gave up (its
        // CancelEnter crossed it): whatever woke that wait, the enter holds.
        int st = p->enter ? DJAVA_MON_OK : GrantStatus(g.reason());
        p->woken_place = LinePlace{g.place(), g.first_in_line()};
        Finish(p, st, st == DJAVA_MON_INTERRUPTED ? "interrupted" : "");
      }
      break;
    }
    case monitorpb::MonitorEvent::kWanted:
      told_wanted_.store(true);
      local_.OnWanted(ev.wanted().object(), ev.wanted().tenure());
      break;
    case monitorpb::MonitorEvent::kRecall:
      if (local_.OnRecall(ev.recall().object()) == LocalMonitors::Send::kReturnLease) {
        monitorpb::MonitorRequest req;
        req.mutable_return_lease()->set_object(ev.recall().object());
        SendLocked(shard, &req);
      }
      break;
    case monitorpb::MonitorEvent::kFailed: {
      const auto& f = ev.failed();
      uint64_t program = f.thread().program();
      if (f.thread().thread() == 0) {
        // The whole program failed (or ended): every blocked thread of it
        // ends now, with the reason as its error.
        failed_programs_.emplace(program, f.error());
        for (auto& p : pending_) {
          if (p.first.program == program && !p.second->done) {
            local_.Forget(p.second->obj, p.first);
            Finish(p.second.get(), DJAVA_MON_FAILED, f.error());
          }
        }
        FailQueries(program, f.error());
      } else {
        LocalThread t{program, f.thread().thread()};
        failed_programs_.emplace(program, f.error());
        auto it = pending_.find(t);
        if (it != pending_.end() && !it->second->done) {
          local_.Forget(it->second->obj, t);
          Finish(it->second.get(), DJAVA_MON_FAILED, f.error());
        }
        FailQueries(program, f.error());
      }
      break;
    }
    case monitorpb::MonitorEvent::kPong:
      if (ev.pong().nonce() > pong_[shard]) pong_[shard] = ev.pong().nonce();
      pong_cv_.notify_all();
      break;
    case monitorpb::MonitorEvent::kQueue: {
      auto it = queries_.find(ev.queue().nonce());
      if (it == queries_.end() || it->second->done) break;  // its asker gave up
      Pending* q = it->second.get();
      for (const auto& w : ev.queue().waiters())
        q->queue.push_back(KeyedWaiter{
            w.key(), w.java_thread(), LocalThread{w.thread().program(), w.thread().thread()}});
      for (const auto& w : ev.queue().entering())
        q->entering.push_back(KeyedWaiter{DJAVA_MON_ENTERING_KEY, w.java_thread(),
                                          LocalThread{w.thread().program(), w.thread().thread()}});
      q->owned = ev.queue().owned();
      q->leased = ev.queue().leased();
      q->owner_java_thread = ev.queue().owner_java_thread();
      Finish(q, DJAVA_MON_OK, "");
      break;
    }
    case monitorpb::MonitorEvent::kBusy: {
      // The try found the monitor taken; it left nothing at the service.
      LocalThread t{ev.busy().thread().program(), ev.busy().thread().thread()};
      Pending* p = Awaiting(t, ev.busy().object());
      if (p != nullptr && p->try_only)
        Finish(p, DJAVA_MON_BUSY, "monitor is owned or entered by another thread");
      break;
    }
    case monitorpb::MonitorEvent::kBarrierDone: {
      const auto& b = ev.barrier_done();
      LocalThread t{b.thread().program(), b.thread().thread()};
      Pending* p = Awaiting(t, b.object());
      if (p == nullptr || !p->barrier) break;  // given up (Cancel): the barrier broke for it
      int st = DJAVA_MON_OK;
      const char* why = "";
      switch (b.outcome()) {
        case monitorpb::BARRIER_TRIPPED:
        case monitorpb::BARRIER_DONE:
          break;
        case monitorpb::BARRIER_LAST:
          st = DJAVA_MON_BARRIER_LAST;
          why = "the last arrival runs the barrier's action";
          break;
        case monitorpb::BARRIER_BROKEN:
          st = DJAVA_MON_BROKEN;
          why = "the barrier is broken";
          break;
        case monitorpb::BARRIER_TIMED_OUT:
          st = DJAVA_MON_TIMED_OUT;
          why = "barrier await timed out";
          break;
        case monitorpb::BARRIER_INTERRUPTED:
          st = DJAVA_MON_INTERRUPTED;
          why = "interrupted";
          break;
        default:
          st = DJAVA_MON_IO;
          why = "the monitor service answered a barrier request with an unknown outcome";
          break;
      }
      p->barrier_result = BarrierResult{b.index(), b.broken(), b.waiting()};
      Finish(p, st, why);
      break;
    }
    case monitorpb::MonitorEvent::kError:
      std::fprintf(stderr, "djava monitor client: service reports: %s\n",
                   ev.error().message().c_str());
      break;
    default:
      break;
  }
}

}  // namespace monitor
}  // namespace djava
