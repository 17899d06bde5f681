#include "monitor_service.h"

#include <algorithm>
#include <cstdio>

namespace djava {
namespace monitor {

namespace {

ThreadRef FromProto(const monitorpb::ThreadId& t) { return ThreadRef{t.program(), t.thread()}; }

void ToProto(ThreadRef t, monitorpb::ThreadId* p) {
  p->set_program(t.program);
  p->set_thread(t.thread);
}

monitorpb::WakeReason ToProto(Wake w) {
  switch (w) {
    case Wake::kAcquired: return monitorpb::ACQUIRED;
    case Wake::kNotified: return monitorpb::NOTIFIED;
    case Wake::kTimedOut: return monitorpb::TIMED_OUT;
    case Wake::kInterrupted: return monitorpb::INTERRUPTED;
    case Wake::kSignalled: return monitorpb::SIGNALLED;
  }
  return monitorpb::WAKE_REASON_UNSPECIFIED;
}

constexpr TimeNs kNsPerMs = 1000 * 1000;

monitorpb::BarrierOutcome ToProto(BarrierOutcome o) {
  switch (o) {
    case BarrierOutcome::kTripped: return monitorpb::BARRIER_TRIPPED;
    case BarrierOutcome::kLast: return monitorpb::BARRIER_LAST;
    case BarrierOutcome::kBroken: return monitorpb::BARRIER_BROKEN;
    case BarrierOutcome::kTimedOut: return monitorpb::BARRIER_TIMED_OUT;
    case BarrierOutcome::kInterrupted: return monitorpb::BARRIER_INTERRUPTED;
    case BarrierOutcome::kDone: return monitorpb::BARRIER_DONE;
  }
  return monitorpb::BARRIER_OUTCOME_UNSPECIFIED;
}

// A timeout in ns past now, saturated (a Java timeout may be Long.MAX_VALUE).
TimeNs DeadlineAfter(TimeNs now, uint64_t timeout_ns) {
  const uint64_t room = static_cast<uint64_t>(INT64_MAX - now);
  return timeout_ns >= room ? INT64_MAX : now + static_cast<TimeNs>(timeout_ns);
}

}  // namespace

MonitorService::MonitorService(MonitorTable::Options options, Transport* transport,
                               std::function<void(const std::string&)> log)
    : table_(options), transport_(transport), log_(std::move(log)) {}

void MonitorService::Log(const std::string& line) {
  if (log_) {
    log_(line);
  } else {
    std::fprintf(stderr, "monitor-service: %s\n", line.c_str());
  }
}

void MonitorService::NoteReleased(NodeId node, ObjectId obj,
                                  const google::protobuf::RepeatedField<uint64_t>& ids) {
  if (ids.empty()) {
    released_.erase(obj);
    return;
  }
  if (mover_ == nullptr) return;
  if (released_.size() >= kTenuresKept) released_.clear();  // a lost list only moves less
  Released& r = released_[obj];
  r.node = node;
  // The directory moves at most that many with a lock; the rest, at home,
  // is served from there.
  const int n = std::min(ids.size(), static_cast<int>(kReleasedKept));
  r.ids.assign(ids.begin(), ids.begin() + n);
}

void MonitorService::OnConnect(NodeId node, const std::string& peer) { peers_[node] = peer; }

void MonitorService::OnMessage(NodeId node, const monitorpb::MonitorRequest& req, TimeNs now) {
  std::vector<Event> out;
  std::string err;
  switch (req.body_case()) {
    case monitorpb::MonitorRequest::kEnter: {
      const auto& e = req.enter();
      if (!e.try_only()) {
        err = table_.Enter(node, e.object(), FromProto(e.thread()), now, &out, e.java_thread(),
                           e.grouped());
      } else if (!e.has_thread()) {
        // Its answer (Busy or Granted) would name no thread to end.
        err = "try enter names no thread";
      } else {
        err = table_.TryEnter(node, e.object(), FromProto(e.thread()), e.java_thread(), now, &out);
      }
      break;
    }
    case monitorpb::MonitorRequest::kExit:
      NoteReleased(node, req.exit().object(), req.exit().released());
      err = table_.Exit(node, req.exit().object(), FromProto(req.exit().thread()), now, &out,
                        req.exit().has_next() ? FromProto(req.exit().next()) : kNoThread);
      break;
    case monitorpb::MonitorRequest::kWait: {
      const auto& w = req.wait();
      TimeNs deadline = w.timeout_ms() == 0
                            ? kNoDeadline
                            : now + static_cast<TimeNs>(w.timeout_ms()) * kNsPerMs;
      NoteReleased(node, w.object(), w.released());
      err = table_.Wait(node, w.object(), FromProto(w.thread()), w.key(), w.java_thread(),
                        deadline, now, &out, w.place(),
                        w.has_next() ? FromProto(w.next()) : kNoThread);
      break;
    }
    case monitorpb::MonitorRequest::kNotify:
      err = table_.Notify(node, req.notify().object(), FromProto(req.notify().thread()),
                          req.notify().key(), req.notify().all(), now, &out);
      break;
    // The table has no "no thread"; a request that could not have come from
    // a Java thread is refused here.
    case monitorpb::MonitorRequest::kSignal: {
      const auto& sg = req.signal();
      if (!sg.has_thread()) {
        err = "signal names no thread";
        break;
      }
      err = table_.Signal(node, sg.object(), FromProto(sg.thread()), sg.key(), sg.all(),
                          sg.to_key(), now, &out);
      break;
    }
    case monitorpb::MonitorRequest::kQuery: {
      const auto& q = req.query();
      if (!q.has_thread()) {
        err = "query names no thread";
        break;
      }
      err = table_.Query(node, q.object(), FromProto(q.thread()), q.nonce(), &out);
      break;
    }
    case monitorpb::MonitorRequest::kInterrupt:
      err = table_.Interrupt(FromProto(req.interrupt().target()), now, &out);
      barriers_.Interrupt(FromProto(req.interrupt().target()), &out);
      break;
    case monitorpb::MonitorRequest::kCancelEnter:
      // A thread blocks in one call at a time: an await at a barrier or an
      // enter or wait on a monitor.
      if (!barriers_.Cancel(node, req.cancel_enter().object(),
                            FromProto(req.cancel_enter().thread()), &out)) {
        err = table_.CancelEnter(node, req.cancel_enter().object(),
                                 FromProto(req.cancel_enter().thread()), now, &out);
      }
      break;
    case monitorpb::MonitorRequest::kArrive: {
      const auto& a = req.arrive();
      if (!a.has_thread()) {
        err = "barrier arrival names no thread";
        break;
      }
      err = barriers_.Arrive(node, a.object(), FromProto(a.thread()), a.parties(), a.command(),
                             a.timed(), DeadlineAfter(now, a.timeout_ns()), now, &out,
                             a.interrupted());
      break;
    }
    case monitorpb::MonitorRequest::kBarrierOp: {
      const auto& b = req.barrier_op();
      if (!b.has_thread()) {
        err = "barrier op names no thread";
        break;
      }
      BarrierOp op = BarrierOp::kQuery;
      switch (b.op()) {
        case monitorpb::BARRIER_TRIP: op = BarrierOp::kTrip; break;
        case monitorpb::BARRIER_BREAK: op = BarrierOp::kBreak; break;
        case monitorpb::BARRIER_RESET: op = BarrierOp::kReset; break;
        case monitorpb::BARRIER_QUERY: op = BarrierOp::kQuery; break;
        default: err = "unknown barrier op"; break;
      }
      if (err.empty()) err = barriers_.Op(node, b.object(), FromProto(b.thread()), op, now, &out);
      break;
    }
    case monitorpb::MonitorRequest::kReturnLease:
      err = table_.ReturnLease(node, req.return_lease().object(), now, &out);
      break;
    case monitorpb::MonitorRequest::kFreeProgram:
      table_.FreeProgram(req.free_program().program(), now, &out);
      barriers_.FailProgram(req.free_program().program(), "program ended", &out);
      break;
    case monitorpb::MonitorRequest::kHello:
      peers_[node] = req.hello().node_name() + " at " + peers_[node];
      if (req.hello().sos_node() != 0) sos_nodes_[node] = req.hello().sos_node();
      break;
    case monitorpb::MonitorRequest::kLeave:
      if (barriers_.Involves(node)) {
        // Still a party somewhere: not a clean leave.
        table_.NodeDown(node, "node " + std::to_string(node) +
                                  " left while one of its threads still awaited a barrier",
                        now, &out);
        FailBarriersOf(out, &out);
        barriers_.NodeDown(node, &out);
        Log("node " + std::to_string(node) + " (" + peers_[node] +
            ") left awaiting a barrier: its programs are failed");
      } else if (!table_.NodeLeave(node, now, &out))
        Log("node " + std::to_string(node) + " (" + peers_[node] +
            ") left holding or waiting for a monitor: its programs are failed");
      break;
    case monitorpb::MonitorRequest::kPing: {
      monitorpb::MonitorEvent ev;
      ev.mutable_pong()->set_nonce(req.ping().nonce());
      transport_->Send(node, ev);
      break;
    }
    default:
      Log("node " + std::to_string(node) + " (" + peers_[node] + "): empty monitor request");
      transport_->Close(node, "empty or unknown monitor request");
      return;
  }
  if (!err.empty()) {
    // Misuse by one node is reported to it; the service carries on.
    Log("node " + std::to_string(node) + " (" + peers_[node] + "): " + err);
    monitorpb::MonitorEvent ev;
    ev.mutable_error()->set_seq(req.seq());
    ev.mutable_error()->set_message(err);
    transport_->Send(node, ev);
  }
  Deliver(out);
}

void MonitorService::OnDisconnect(NodeId node, TimeNs now) {
  std::string peer = peers_[node];
  peers_.erase(node);
  sos_nodes_.erase(node);
  std::vector<Event> out;
  std::string why = "node " + std::to_string(node) + " (" + peer +
                    ") disconnected from the monitor service (it may have died holding or "
                    "waiting for a monitor of this program)";
  table_.NodeDown(node, why, now, &out);
  FailBarriersOf(out, &out);
  barriers_.NodeDown(node, &out);
  bool failed_any = false;
  for (const Event& e : out) failed_any |= e.kind == Event::kFailed;
  if (failed_any) Log(why + ": its programs are failed");
  Deliver(out);
}

void MonitorService::OnTick(TimeNs now) {
  std::vector<Event> out;
  table_.Tick(now, &out);
  barriers_.Tick(now, &out);
  Deliver(out);
}

TimeNs MonitorService::NextDeadline() const {
  const TimeNs a = table_.NextDeadline();
  const TimeNs b = barriers_.NextDeadline();
  if (a == kNoDeadline) return b;
  if (b == kNoDeadline) return a;
  return std::min(a, b);
}

void MonitorService::FreeProgram(ProgramId program, TimeNs now) {
  std::vector<Event> out;
  table_.FreeProgram(program, now, &out);
  barriers_.FailProgram(program, "program ended", &out);
  Deliver(out);
}

void MonitorService::FailBarriersOf(const std::vector<Event>& events, std::vector<Event>* out) {
  std::map<ProgramId, std::string> failed;
  for (const Event& e : events)
    if (e.kind == Event::kFailed && e.thread.thread == 0) failed.emplace(e.thread.program, e.error);
  for (const auto& f : failed) barriers_.FailProgram(f.first, f.second, out);
}

void MonitorService::Deliver(const std::vector<Event>& events) {
  for (const Event& e : events) {
    if (!peers_.count(e.node)) continue;  // the node is gone
    monitorpb::MonitorEvent ev;
    switch (e.kind) {
      case Event::kGranted: {
        auto* g = ev.mutable_granted();
        g->set_object(e.object);
        ToProto(e.thread, g->mutable_thread());
        g->set_lease(e.lease);
        g->set_reason(ToProto(e.reason));
        g->set_place(e.place);
        g->set_first_in_line(e.first_in_line);
        g->set_wanted_elsewhere(e.wanted_elsewhere);
        g->set_waiters_elsewhere(e.waiters_elsewhere);
        g->set_tenure(e.tenure);
        for (const Event::Successor& su : e.successors) {
          auto* ps = g->add_successors();
          ToProto(su.thread, ps->mutable_thread());
          ps->set_reason(ToProto(su.reason));
        }
        break;
      }
      case Event::kRecall:
        ev.mutable_recall()->set_object(e.object);
        break;
      case Event::kWanted:
        ev.mutable_wanted()->set_object(e.object);
        ev.mutable_wanted()->set_tenure(e.tenure);
        break;
      case Event::kFailed: {
        auto* f = ev.mutable_failed();
        f->set_object(e.object);
        ToProto(e.thread, f->mutable_thread());
        f->set_error(e.error);
        break;
      }
      case Event::kQueue: {
        auto* q = ev.mutable_queue();
        q->set_object(e.object);
        q->set_nonce(e.nonce);
        for (const QueuedWaiter& w : e.waiters) {
          auto* pw = q->add_waiters();
          pw->set_key(w.key);
          pw->set_java_thread(w.java_thread);
          ToProto(w.thread, pw->mutable_thread());
        }
        q->set_owned(e.owned);
        q->set_owner_java_thread(e.owner_java_thread);
        q->set_leased(e.leased);
        for (const QueuedWaiter& w : e.entering) {
          auto* pw = q->add_entering();
          pw->set_java_thread(w.java_thread);
          ToProto(w.thread, pw->mutable_thread());
        }
        break;
      }
      case Event::kBusy: {
        auto* b = ev.mutable_busy();
        b->set_object(e.object);
        ToProto(e.thread, b->mutable_thread());
        break;
      }
      case Event::kBarrier: {
        auto* b = ev.mutable_barrier_done();
        b->set_object(e.object);
        ToProto(e.thread, b->mutable_thread());
        b->set_outcome(ToProto(e.barrier));
        b->set_index(e.index);
        b->set_broken(e.broken);
        b->set_waiting(e.waiting_count);
        break;
      }
    }
    if (e.kind == Event::kGranted && mover_ != nullptr) {
      // The new holder's tenure starts before any move's grant, so what
      // moves to it now moves on with the monitor next time.
      uint64_t since = DataMover::kNoMark;
      auto t = tenures_.find(e.object);
      if (t != tenures_.end() && t->second.node == e.from_node) since = t->second.mark;
      auto to = sos_nodes_.find(e.node);
      if (to != sos_nodes_.end() && (t == tenures_.end() || t->second.node != e.node)) {
        if (tenures_.size() >= kTenuresKept) tenures_.clear();
        tenures_[e.object] = Tenure{e.node, mover_->Mark(to->second)};
      }
      std::vector<uint64_t> released;
      auto r = released_.find(e.object);
      if (r != released_.end()) {
        if (r->second.node == e.from_node) released = std::move(r->second.ids);
        released_.erase(r);
      }
      if (MovesData(e, !released.empty())) {
        const std::function<void()> later = transport_->SendLater(e.node, ev);
        if (mover_->Move(e.object, sos_nodes_.at(e.from_node), to->second, since,
                         e.thread.program, later, released)) {
          moved_grants_++;
          continue;
        }
        // Nothing moves: sent now, through the same once-only sending, so
        // that the transport's deadline for it sends nothing again.
        later();
        continue;
      }
    }
    transport_->Send(e.node, ev);
  }
}

bool MonitorService::MovesData(const Event& e, bool released) const {
  // A thread's grant handed over from another node, or back to the
  // releasing node with what it wrote home for the release: it handed its
  // data over because another node wanted the monitor, but a thread of its
  // own was ahead in the queue (one a notifyAll woke there), and would
  // fault it back in. Not a lease: a Recall sent after it must not
  // overtake it, and a lease's node keeps the monitor anyway.
  return mover_ != nullptr && !e.lease && e.from_node != kNoNode &&
         (e.from_node != e.node || released) && sos_nodes_.count(e.from_node) != 0 &&
         sos_nodes_.count(e.node) != 0;
}

}  // namespace monitor
}  // namespace djava
