// Randomised simulation of the whole monitor protocol: several nodes, each a
// LocalMonitors with several threads, and one MonitorTable, joined by FIFO
// message queues per node and direction. A seeded scheduler interleaves
// thread steps, message deliveries and time. Threads wait in two wait sets
// (keys 0 and 1), notify either, and signal monitors they may not own.
// Checked: mutual exclusion at every grant, re-entry counts restored after
// wait, and progress -- every
// thread finishes its script within a step budget (no deadlock, no
// livelock on lease recall, no lost wake-up), with and without leases, and
// with enters grouped (node hand-offs: a grant names the node's other
// queued threads, and the node hands the monitor on among them itself).
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <vector>

#include "local_monitors.h"
#include "monitor_table.h"

namespace djava {
namespace monitor {
namespace {

using Send = LocalMonitors::Send;
constexpr uint64_t kProg = 3;

struct Msg {  // node -> service
  Send kind;
  uint64_t obj;
  LocalThread t;
  TimeNs timeout;
  bool all;
  uint64_t key;
  LocalThread next;  // kExit, kWait: the successor handed the monitor
};

struct SimThread {
  LocalThread id;
  int iter = 0;
  enum { kReady, kBlocked, kInside, kDone } state = kReady;
  uint64_t obj = 0;
  int depth = 0;      // re-entry depth expected
  bool waited = false;
};

struct Node {
  LocalMonitors local;
  std::deque<Msg> out;
  std::deque<Event> in;
  std::vector<SimThread> threads;
};

class Sim {
 public:
  Sim(uint64_t seed, bool leases, bool grouped, int nodes, int threads, int iters, int objects)
      : rng_(seed), iters_(iters), objects_(objects), grouped_(grouped) {
    MonitorTable::Options o;
    o.leases = leases;
    o.wanted_notices = true;
    o.lease_cooldown = 5;  // in simulated ticks
    o.node_handoffs = grouped;
    table_ = MonitorTable(o);
    nodes_.resize(nodes);
    for (int n = 0; n < nodes; n++)
      for (int t = 0; t < threads; t++) {
        SimThread st;
        st.id = LocalThread{kProg, static_cast<uint64_t>(n * 100 + t + 1)};
        nodes_[n].threads.push_back(st);
      }
  }

  // Runs until every thread is done; false if the step budget ran out.
  bool Run(int budget) {
    for (int step = 0; step < budget; step++) {
      if (AllDone()) return true;
      now_ += Pick(3);
      std::vector<Event> ev;
      table_.Tick(now_, &ev);
      Route(ev);
      int n = Pick(static_cast<int>(nodes_.size()));
      switch (Pick(3)) {
        case 0: DeliverToService(n); break;
        case 1: DeliverToNode(n); break;
        default: StepThread(n, Pick(static_cast<int>(nodes_[n].threads.size())));
      }
      if (::testing::Test::HasFailure()) return false;
    }
    return AllDone();
  }

  int grants = 0, local_grants = 0, signal_leases = 0, handoffs = 0;
  int wanted_notices = 0, wanted_releases = 0;

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool AllDone() const {
    for (const Node& n : nodes_)
      for (const SimThread& t : n.threads)
        if (t.state != SimThread::kDone) return false;
    return true;
  }
  void Route(const std::vector<Event>& ev) {
    for (const Event& e : ev) nodes_[e.node - 1].in.push_back(e);
  }

  void Own(uint64_t obj, LocalThread t) {
    auto it = owner_.find(obj);
    ASSERT_TRUE(it == owner_.end()) << "mutual exclusion violated on " << obj << ": "
                                    << it->second.thread << " and " << t.thread;
    owner_[obj] = t;
  }
  void Disown(uint64_t obj, LocalThread t) {
    ASSERT_TRUE(owner_.count(obj) && owner_[obj] == t);
    owner_.erase(obj);
  }

  void DeliverToService(int n) {
    Node& node = nodes_[n];
    if (node.out.empty()) return;
    Msg m = node.out.front();
    node.out.pop_front();
    std::vector<Event> ev;
    std::string err;
    NodeId id = n + 1;
    ThreadRef t{m.t.program, m.t.thread};
    ThreadRef next{m.next.program, m.next.thread};
    switch (m.kind) {
      case Send::kEnter: err = table_.Enter(id, m.obj, t, now_, &ev, 0, grouped_); break;
      case Send::kExit: err = table_.Exit(id, m.obj, t, now_, &ev, next); break;
      case Send::kWait:
        err = table_.Wait(id, m.obj, t, m.key, t.thread,
                          m.timeout < 0 ? kNoDeadline : now_ + m.timeout, now_, &ev,
                          kNotInLine, next);
        break;
      case Send::kNotify: err = table_.Notify(id, m.obj, t, m.key, m.all, now_, &ev); break;
      case Send::kSignal: err = table_.Signal(id, m.obj, t, m.key, m.all, 0, now_, &ev); break;
      case Send::kReturnLease: err = table_.ReturnLease(id, m.obj, now_, &ev); break;
      case Send::kNothing:
      case Send::kBusy: break;  // never sent
    }
    ASSERT_EQ("", err);
    Route(ev);
  }

  void DeliverToNode(int n) {
    Node& node = nodes_[n];
    if (node.in.empty()) return;
    Event e = node.in.front();
    node.in.pop_front();
    if (e.kind == Event::kWanted) {
      node.local.OnWanted(e.object, e.tenure);
      wanted_notices++;
      return;
    }
    if (e.kind == Event::kRecall) {
      if (node.local.OnRecall(e.object) == Send::kReturnLease)
        node.out.push_back(Msg{Send::kReturnLease, e.object, {}, 0, false, 0});
      return;
    }
    ASSERT_EQ(Event::kGranted, e.kind);
    if (e.reason == Wake::kSignalled) {  // a lease for the node, no thread
      ASSERT_TRUE(e.lease);
      node.local.OnLeaseGranted(e.object);
      signal_leases++;
      return;
    }
    LocalThread lt{e.thread.program, e.thread.thread};
    SimThread* st = Blocked(&node, lt, e.object);
    ASSERT_TRUE(st != nullptr);
    std::vector<LocalMonitors::Successor> successors;
    for (const Event::Successor& su : e.successors) {
      LocalThread s{su.thread.program, su.thread.thread};
      ASSERT_TRUE(Blocked(&node, s, e.object) != nullptr) << "a successor is blocked here";
      successors.push_back(LocalMonitors::Successor{s, 0, 0});
    }
    LocalMonitors::Successor next;
    ASSERT_EQ(Send::kNothing,
              node.local.OnGranted(e.object, lt, e.lease, true, 0, successors, &next));
    ASSERT_EQ(0u, next.thread.thread);
    grants++;
    if (!e.lease)
      node.local.StartTenure(e.object, e.wanted_elsewhere, /*mark=*/grants, e.waiters_elsewhere,
                             e.tenure);
    Own(e.object, lt);
    ASSERT_EQ(st->depth, node.local.Count(e.object, lt));  // wait restores the count
    st->state = SimThread::kInside;
  }

  // A release the node takes to be wanted by another node leaves a request
  // queued at the service: a notice is never about an earlier tenure, and
  // a request queued elsewhere cannot be served while this node owns it.
  void CheckWantedRelease(Node& node, const SimThread& t, bool whole) {
    uint64_t since = 0;
    if (!node.local.ReleaseWanted(t.obj, t.id, whole, &since)) return;
    wanted_releases++;
    EXPECT_GT(table_.EntryQueueLength(t.obj), 0u) << "a release wanted by nobody";
    EXPECT_GT(since, 0u);
  }

  SimThread* Blocked(Node* node, LocalThread id, uint64_t obj) {
    for (SimThread& t : node->threads)
      if (t.id == id) return t.state == SimThread::kBlocked && t.obj == obj ? &t : nullptr;
    return nullptr;
  }

  // The node's release handed the monitor to `next` (if any).
  void HandOn(Node* node, uint64_t obj, const LocalMonitors::Successor& next) {
    if (next.thread.thread == 0) return;
    SimThread* st = Blocked(node, next.thread, obj);
    ASSERT_TRUE(st != nullptr);
    handoffs++;
    Own(obj, next.thread);
    ASSERT_EQ(st->depth, node->local.Count(obj, next.thread));
    st->state = SimThread::kInside;
  }

  void StepThread(int n, int i) {
    Node& node = nodes_[n];
    SimThread& t = node.threads[i];
    switch (t.state) {
      case SimThread::kReady: {
        if (Pick(4) == 0) Signal(&node, t.id, 1 + Pick(objects_));
        t.obj = 1 + Pick(objects_);
        t.depth = 1;
        t.waited = false;
        if (node.local.Enter(t.obj, t.id) == Send::kNothing) {
          local_grants++;
          Own(t.obj, t.id);
          t.state = SimThread::kInside;
        } else {
          node.out.push_back(Msg{Send::kEnter, t.obj, t.id, 0, false, 0});
          t.state = SimThread::kBlocked;
        }
        break;
      }
      case SimThread::kInside: {
        int r = Pick(10);
        if (r == 0 && t.depth < 3) {  // re-enter
          ASSERT_EQ(Send::kNothing, node.local.Enter(t.obj, t.id));
          t.depth++;
        } else if (r == 1 && !t.waited) {  // wait, always timed: nobody may be left to notify
          CheckWantedRelease(node, t, /*whole=*/true);
          LocalMonitors::Successor next;
          ASSERT_TRUE(node.local.BeginWait(t.obj, t.id, &next));
          Disown(t.obj, t.id);
          node.out.push_back(Msg{Send::kWait, t.obj, t.id, 1 + Pick(40), false,
                                 static_cast<uint64_t>(Pick(2)), next.thread});
          t.waited = true;
          t.state = SimThread::kBlocked;
          HandOn(&node, t.obj, next);
        } else if (r == 2) {
          Send s;
          ASSERT_TRUE(node.local.Notify(t.obj, t.id, &s));
          if (s != Send::kNothing)
            node.out.push_back(
                Msg{s, t.obj, t.id, 0, Pick(2) == 0, static_cast<uint64_t>(Pick(2))});
        } else if (r == 3) {
          Signal(&node, t.id, t.obj);  // queued behind its own ownership
        } else {  // exit one level
          if (t.depth == 1) CheckWantedRelease(node, t, /*whole=*/false);
          if (t.depth == 1) Disown(t.obj, t.id);
          Send s;
          LocalMonitors::Successor next;
          ASSERT_TRUE(node.local.Exit(t.obj, t.id, &s, &next));
          if (s != Send::kNothing)
            node.out.push_back(Msg{s, t.obj, t.id, 0, false, 0, next.thread});
          if (--t.depth == 0) t.state = ++t.iter >= iters_ ? SimThread::kDone : SimThread::kReady;
          HandOn(&node, t.obj, next);
        }
        break;
      }
      default:
        break;
    }
  }

  void Signal(Node* node, LocalThread t, uint64_t obj) {
    if (node->local.Signal(obj) == Send::kNothing) return;
    node->out.push_back(
        Msg{Send::kSignal, obj, t, 0, Pick(2) == 0, static_cast<uint64_t>(Pick(2))});
  }

  std::mt19937_64 rng_;
  int iters_, objects_;
  bool grouped_;
  TimeNs now_ = 0;
  MonitorTable table_;
  std::vector<Node> nodes_;
  std::map<uint64_t, LocalThread> owner_;
};

class MonitorSimTest : public ::testing::TestWithParam<std::tuple<bool, bool, int>> {};

TEST_P(MonitorSimTest, ExclusiveAndAlwaysFinishes) {
  bool leases = std::get<0>(GetParam());
  bool grouped = std::get<1>(GetParam());
  int objects = std::get<2>(GetParam());
  int handoffs = 0, wanted_releases = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    Sim sim(seed, leases, grouped, /*nodes=*/3, /*threads=*/3, /*iters=*/15, objects);
    ASSERT_TRUE(sim.Run(400000)) << "seed " << seed << ": did not finish";
    if (leases && seed == 1) {
      EXPECT_GT(sim.local_grants, 0);  // leases are used at all
      EXPECT_GT(sim.signal_leases, 0);  // and signals leave some
    }
    handoffs += sim.handoffs;
    wanted_releases += sim.wanted_releases;
  }
  // Java monitors' holders hear that other nodes want them (a woken
  // Object.wait waiter's grant counts as a Java monitor's even when the
  // enters are not grouped).
  EXPECT_GT(wanted_releases, 0);
  // Grouped enters and woken Object.wait waiters are handed on within
  // their node; with node hand-offs off, nothing is.
  if (grouped) {
    EXPECT_GT(handoffs, 0);
  } else {
    EXPECT_EQ(0, handoffs);
  }
}

INSTANTIATE_TEST_SUITE_P(All, MonitorSimTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values(1, 3)));

}  // namespace
}  // namespace monitor
}  // namespace djava
