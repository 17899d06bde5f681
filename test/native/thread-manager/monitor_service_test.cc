// The monitor service's protocol layer: a grant handed from one node to
// another waits for the object's data when a DataMover moves it (data
// follows its lock, docs/SOS.md), and only then.
#include "monitor_service.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace djava {
namespace monitor {
namespace {

constexpr ObjectId kObj = 42;

class RecordingTransport : public MonitorService::Transport {
 public:
  void Send(NodeId node, const monitorpb::MonitorEvent& ev) override {
    sent.emplace_back(node, ev);
  }
  void Close(NodeId, const std::string&) override {}
  std::function<void()> SendLater(NodeId node, const monitorpb::MonitorEvent& ev) override {
    return [this, node, ev] { sent.emplace_back(node, ev); };
  }
  std::vector<std::pair<NodeId, monitorpb::MonitorEvent>> sent;
};

class RecordingMover : public MonitorService::DataMover {
 public:
  uint64_t Mark(uint64_t node) override {
    marks.push_back(node);
    return 1000 + marks.size();
  }
  bool Move(ObjectId obj, uint64_t from, uint64_t to, uint64_t since, ProgramId program,
            std::function<void()> sent, const std::vector<uint64_t>& released) override {
    moves.push_back({obj, from, to, since, program, released});
    if (!accept) return false;
    pending.push_back(std::move(sent));
    return true;
  }
  struct MoveCall {
    ObjectId obj;
    uint64_t from, to, since;
    ProgramId program;
    std::vector<uint64_t> released;
  };
  std::vector<uint64_t> marks;  // the nodes asked for, in order
  bool accept = true;
  std::vector<MoveCall> moves;
  std::vector<std::function<void()>> pending;
};

class MonitorServiceTest : public ::testing::Test {
 protected:
  MonitorServiceTest() : service_(NoLeases(), &transport_, [](const std::string&) {}) {
    service_.SetDataMover(&mover_);
  }
  static MonitorTable::Options NoLeases() {
    MonitorTable::Options o;
    o.leases = false;
    o.wanted_notices = true;
    return o;
  }
  void Connect(NodeId node, uint64_t sos_node) {
    service_.OnConnect(node, "node" + std::to_string(node));
    monitorpb::MonitorRequest hello;
    hello.mutable_hello()->set_node_name("n" + std::to_string(node));
    hello.mutable_hello()->set_sos_node(sos_node);
    service_.OnMessage(node, hello, 0);
  }
  void Enter(NodeId node, uint64_t thread) {
    monitorpb::MonitorRequest req;
    req.mutable_enter()->set_object(kObj);
    req.mutable_enter()->mutable_thread()->set_program(7);
    req.mutable_enter()->mutable_thread()->set_thread(thread);
    service_.OnMessage(node, req, 0);
  }
  void Exit(NodeId node, uint64_t thread) {
    monitorpb::MonitorRequest req;
    req.mutable_exit()->set_object(kObj);
    req.mutable_exit()->mutable_thread()->set_program(7);
    req.mutable_exit()->mutable_thread()->set_thread(thread);
    service_.OnMessage(node, req, 0);
  }
  // The grants sent since the last call, as (node, thread).
  std::vector<std::pair<NodeId, uint64_t>> Grants() {
    std::vector<std::pair<NodeId, uint64_t>> g;
    for (const auto& [node, ev] : transport_.sent)
      if (ev.has_granted()) g.emplace_back(node, ev.granted().thread().thread());
    transport_.sent.clear();
    return g;
  }

  RecordingTransport transport_;
  RecordingMover mover_;
  MonitorService service_;
};

TEST_F(MonitorServiceTest, AGrantHandedToAnotherNodeWaitsForTheObjectsData) {
  Connect(1, 11);
  Connect(2, 12);
  Enter(1, 100);
  EXPECT_EQ(Grants().size(), 1u);
  EXPECT_TRUE(mover_.moves.empty()) << "nobody owned it before: nothing to move";
  Enter(2, 200);
  Exit(1, 100);
  ASSERT_EQ(mover_.moves.size(), 1u);
  EXPECT_EQ(mover_.moves[0].obj, kObj);
  EXPECT_EQ(mover_.moves[0].from, 11u) << "sos node numbers, from the Hellos";
  EXPECT_EQ(mover_.moves[0].to, 12u);
  ASSERT_GE(mover_.marks.size(), 2u);
  EXPECT_EQ(mover_.marks[0], 11u) << "node 1's tenure began at its grant";
  EXPECT_EQ(mover_.moves[0].since, 1001u) << "what node 1 got since its grant moves too";
  EXPECT_EQ(mover_.moves[0].program, 7u) << "the program of the thread the monitor goes to";
  EXPECT_EQ(mover_.marks[1], 12u) << "node 2's tenure begins before its data moves";
  EXPECT_TRUE(Grants().empty()) << "the grant waits for the data";
  ASSERT_EQ(mover_.pending.size(), 1u);
  mover_.pending[0]();
  auto g = Grants();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0], std::make_pair(NodeId{2}, uint64_t{200}));
  EXPECT_EQ(service_.moved_grants(), 1u);
}

TEST_F(MonitorServiceTest, WhatAReleaseNamesMovesWithTheGrantItMakes) {
  Connect(1, 11);
  Connect(2, 12);
  monitorpb::MonitorRequest enter;
  enter.mutable_enter()->set_object(kObj);
  enter.mutable_enter()->mutable_thread()->set_program(7);
  enter.mutable_enter()->mutable_thread()->set_thread(100);
  enter.mutable_enter()->set_grouped(true);
  service_.OnMessage(1, enter, 0);
  auto first = transport_.sent;
  ASSERT_EQ(Grants().size(), 1u);
  EXPECT_FALSE(first[0].second.granted().wanted_elsewhere());
  enter.mutable_enter()->mutable_thread()->set_thread(200);
  service_.OnMessage(2, enter, 0);
  // Node 1 hears that node 2 wants the monitor.
  ASSERT_EQ(transport_.sent.size(), 1u);
  EXPECT_EQ(transport_.sent[0].first, 1u);
  ASSERT_TRUE(transport_.sent[0].second.has_wanted());
  EXPECT_EQ(transport_.sent[0].second.wanted().object(), kObj);
  transport_.sent.clear();
  monitorpb::MonitorRequest exit;
  exit.mutable_exit()->set_object(kObj);
  exit.mutable_exit()->mutable_thread()->set_program(7);
  exit.mutable_exit()->mutable_thread()->set_thread(100);
  exit.mutable_exit()->add_released(0x41);
  exit.mutable_exit()->add_released(0x42);
  service_.OnMessage(1, exit, 0);
  ASSERT_EQ(mover_.moves.size(), 1u);
  EXPECT_EQ(mover_.moves[0].released, (std::vector<uint64_t>{0x41, 0x42}));
  // Named once: the next hand-off moves what its own release names.
  mover_.pending[0]();
  Grants();
  Enter(1, 101);
  Exit(2, 200);
  ASSERT_EQ(mover_.moves.size(), 2u);
  EXPECT_TRUE(mover_.moves[1].released.empty());
}

TEST_F(MonitorServiceTest, AGrantLeavesAtOnceWhenNoDataMoves) {
  Connect(1, 11);
  Connect(2, 12);
  mover_.accept = false;
  Enter(1, 100);
  Enter(2, 200);
  Grants();
  Exit(1, 100);
  EXPECT_EQ(mover_.moves.size(), 1u);
  EXPECT_EQ(Grants().size(), 1u);
  EXPECT_EQ(service_.moved_grants(), 0u);
}

TEST_F(MonitorServiceTest, NoDataMovesWithinANodeOrForANodeWithoutACache) {
  Connect(1, 11);
  Connect(2, 0);  // no sos node given
  Enter(1, 100);
  Enter(1, 101);
  Enter(2, 200);
  Grants();
  Exit(1, 100);  // to thread 101, on node 1 too
  EXPECT_EQ(Grants().size(), 1u);
  Exit(1, 101);  // to node 2, which named no sos node
  EXPECT_EQ(Grants().size(), 1u);
  EXPECT_TRUE(mover_.moves.empty());
}

TEST_F(MonitorServiceTest, WhatAReleaseNamesGoesBackWhenItsOwnNodeIsNext) {
  // Node 1 wrote its data home for node 2, which wants the monitor, but a
  // thread of node 1 is ahead of node 2's in the queue.
  Connect(1, 11);
  Connect(2, 12);
  Enter(1, 100);
  Enter(1, 101);
  Enter(2, 200);
  Grants();
  monitorpb::MonitorRequest exit;
  exit.mutable_exit()->set_object(kObj);
  exit.mutable_exit()->mutable_thread()->set_program(7);
  exit.mutable_exit()->mutable_thread()->set_thread(100);
  exit.mutable_exit()->add_released(0x41);
  service_.OnMessage(1, exit, 0);
  ASSERT_EQ(mover_.moves.size(), 1u);
  EXPECT_EQ(mover_.moves[0].from, 11u);
  EXPECT_EQ(mover_.moves[0].to, 11u) << "back where it came from";
  EXPECT_EQ(mover_.moves[0].released, (std::vector<uint64_t>{0x41}));
  EXPECT_TRUE(Grants().empty()) << "the grant waits for the data";
  ASSERT_EQ(mover_.pending.size(), 1u);
  mover_.pending[0]();
  auto g = Grants();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0], std::make_pair(NodeId{1}, uint64_t{101}));
}

TEST_F(MonitorServiceTest, ALeaseNeverWaitsForData) {
  MonitorTable::Options o;
  o.leases = true;
  o.lease_cooldown = 0;
  RecordingTransport transport;
  RecordingMover mover;
  MonitorService service(o, &transport, [](const std::string&) {});
  service.SetDataMover(&mover);
  for (NodeId n : {NodeId{1}, NodeId{2}}) {  // leases: marks taken, nothing moved
    service.OnConnect(n, "p");
    monitorpb::MonitorRequest hello;
    hello.mutable_hello()->set_sos_node(10 + n);
    service.OnMessage(n, hello, 0);
  }
  monitorpb::MonitorRequest enter;
  enter.mutable_enter()->set_object(kObj);
  enter.mutable_enter()->mutable_thread()->set_program(7);
  enter.mutable_enter()->mutable_thread()->set_thread(100);
  service.OnMessage(1, enter, 0);  // leased to node 1
  monitorpb::MonitorRequest exit = enter;
  exit.mutable_exit()->set_object(kObj);
  *exit.mutable_exit()->mutable_thread() = enter.enter().thread();
  service.OnMessage(1, exit, 0);  // still leased: no message
  monitorpb::MonitorRequest ret;
  ret.mutable_return_lease()->set_object(kObj);
  service.OnMessage(1, ret, 0);
  enter.mutable_enter()->mutable_thread()->set_thread(200);
  service.OnMessage(2, enter, 1000 * 1000 * 1000);  // leased to node 2 now
  bool leased_to_2 = false;
  for (const auto& [node, ev] : transport.sent)
    if (ev.has_granted() && node == 2) leased_to_2 = ev.granted().lease();
  EXPECT_TRUE(leased_to_2);
  EXPECT_TRUE(mover.moves.empty());
}

monitorpb::MonitorRequest Arrival(uint64_t thread, uint32_t parties) {
  monitorpb::MonitorRequest req;
  req.mutable_arrive()->set_object(kObj);
  req.mutable_arrive()->mutable_thread()->set_program(7);
  req.mutable_arrive()->mutable_thread()->set_thread(thread);
  req.mutable_arrive()->set_parties(parties);
  return req;
}

TEST_F(MonitorServiceTest, ABarrierTripAnswersEveryPartyOnItsNode) {
  Connect(1, 11);
  Connect(2, 12);
  service_.OnMessage(1, Arrival(100, 2), 0);
  EXPECT_TRUE(transport_.sent.empty()) << "the first party waits";
  service_.OnMessage(2, Arrival(200, 2), 0);
  std::vector<std::pair<NodeId, uint32_t>> answers;
  for (const auto& [node, ev] : transport_.sent) {
    ASSERT_TRUE(ev.has_barrier_done());
    EXPECT_EQ(monitorpb::BARRIER_TRIPPED, ev.barrier_done().outcome());
    EXPECT_EQ(kObj, ev.barrier_done().object());
    answers.emplace_back(node, ev.barrier_done().index());
  }
  EXPECT_EQ((std::vector<std::pair<NodeId, uint32_t>>{{1, 1}, {2, 0}}), answers);
}

TEST_F(MonitorServiceTest, ABarrierRequestWithoutAThreadIsRefused) {
  Connect(1, 11);
  monitorpb::MonitorRequest req = Arrival(100, 2);
  req.mutable_arrive()->clear_thread();
  service_.OnMessage(1, req, 0);
  monitorpb::MonitorRequest op;
  op.mutable_barrier_op()->set_object(kObj);
  op.mutable_barrier_op()->set_op(monitorpb::BARRIER_QUERY);
  service_.OnMessage(1, op, 0);
  ASSERT_EQ(2u, transport_.sent.size());
  for (const auto& [node, ev] : transport_.sent) {
    EXPECT_EQ(1u, node);
    EXPECT_TRUE(ev.has_error()) << "a protocol error, and the service goes on";
  }
  EXPECT_EQ(0u, service_.barriers().BarrierCount());
}

TEST_F(MonitorServiceTest, ANodesDeathBreaksItsBarriersAndFailsItsPrograms) {
  Connect(1, 11);
  Connect(2, 12);
  service_.OnMessage(1, Arrival(100, 3), 0);
  service_.OnMessage(2, Arrival(200, 3), 0);
  service_.OnDisconnect(2, 0);
  bool failed = false;
  for (const auto& [node, ev] : transport_.sent) {
    EXPECT_EQ(1u, node) << "nothing goes to the dead node";
    failed |= ev.has_failed() && ev.failed().thread().thread() == 100;
  }
  EXPECT_TRUE(failed) << "the program that lost a node fails its barrier's parties";
  EXPECT_EQ(0u, service_.barriers().BarrierCount());
}

}  // namespace
}  // namespace monitor
}  // namespace djava
