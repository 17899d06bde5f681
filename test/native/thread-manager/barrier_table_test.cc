// Unit tests of the monitor service's barriers (CyclicBarrier on shared
// objects): trips, the last arrival's action, breaking by timeout,
// interrupt, cancel and a failed action, reset, queries, node death and
// program failure. Deterministic: time is passed in.
#include "barrier_table.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace djava {
namespace monitor {
namespace {

constexpr ObjectId kBarrier = 42;
constexpr ProgramId kProg = 7;
constexpr TimeNs kMs = 1000 * 1000;

ThreadRef T(uint64_t id) { return ThreadRef{kProg, id}; }

class BarrierTableTest : public ::testing::Test {
 protected:
  BarrierTableTest() : barriers_(&monitors_) {}

  std::vector<Event> Take() {
    std::vector<Event> r;
    r.swap(out_);
    return r;
  }
  // The outcome the events give thread t (fails if they give it none or two).
  BarrierOutcome OutcomeOf(const std::vector<Event>& ev, ThreadRef t, uint32_t* index = nullptr) {
    int n = 0;
    BarrierOutcome o = BarrierOutcome::kDone;
    for (const Event& e : ev) {
      if (e.kind == Event::kBarrier && e.thread == t) {
        n++;
        o = e.barrier;
        if (index) *index = e.index;
      }
    }
    EXPECT_EQ(1, n) << "events for thread " << t.thread;
    return o;
  }
  void Arrive(NodeId node, uint64_t t, uint32_t parties, bool command = false, bool timed = false,
              TimeNs deadline = kNoDeadline) {
    ASSERT_EQ("", barriers_.Arrive(node, kBarrier, T(t), parties, command, timed, deadline, now_,
                                   &out_));
  }
  Event Op(NodeId node, uint64_t t, BarrierOp op) {
    EXPECT_EQ("", barriers_.Op(node, kBarrier, T(t), op, now_, &out_));
    auto ev = Take();
    for (const Event& e : ev)
      if (e.kind == Event::kBarrier && e.thread == T(t) && e.barrier == BarrierOutcome::kDone)
        return e;
    ADD_FAILURE() << "no answer to the op";
    return Event(Event::kBarrier);
  }

  MonitorTable monitors_;
  BarrierTable barriers_;
  std::vector<Event> out_;
  TimeNs now_ = 1000 * kMs;
};

TEST_F(BarrierTableTest, TheLastArrivalTripsItAndEveryPartyGetsItsIndex) {
  Arrive(1, 1, 4);
  Arrive(2, 2, 4);
  Arrive(1, 3, 4);
  EXPECT_TRUE(Take().empty()) << "nobody goes on before the last arrival";
  EXPECT_EQ(3u, barriers_.Waiting(kBarrier));
  Arrive(2, 4, 4);
  auto ev = Take();
  ASSERT_EQ(4u, ev.size()) << "one answer each, in one step";
  uint32_t index = 99;
  for (uint64_t t = 1; t <= 4; t++) {
    EXPECT_EQ(BarrierOutcome::kTripped, OutcomeOf(ev, T(t), &index));
    EXPECT_EQ(4 - t, index) << "CyclicBarrier.await's arrival index";
  }
  for (const Event& e : ev) EXPECT_EQ(e.thread.thread % 2 == 1 ? 1u : 2u, e.node);
  EXPECT_EQ(0u, barriers_.BarrierCount()) << "a whole idle barrier holds no state";
  // Cyclic: the next generation trips the same way.
  Arrive(1, 1, 2);
  Arrive(2, 2, 2);
  EXPECT_EQ(2u, Take().size());
}

TEST_F(BarrierTableTest, TheActionRunsBeforeAnyPartyGoesOn) {
  Arrive(1, 1, 2, true);
  Arrive(2, 2, 2, true);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(BarrierOutcome::kLast, OutcomeOf(ev, T(2)));
  // Meanwhile another thread's arrival (next generation) and query wait.
  Arrive(1, 3, 2, true);
  EXPECT_EQ("", barriers_.Op(1, kBarrier, T(5), BarrierOp::kQuery, now_, &out_));
  EXPECT_TRUE(Take().empty()) << "they wait for the action, as for the barrier's lock";
  // The actor itself sees every party arrived.
  Event q = Op(2, 2, BarrierOp::kQuery);
  EXPECT_EQ(2u, q.waiting_count);
  EXPECT_FALSE(q.broken);
  ASSERT_EQ("", barriers_.Op(2, kBarrier, T(2), BarrierOp::kTrip, now_, &out_));
  ev = Take();
  uint32_t index = 9;
  EXPECT_EQ(BarrierOutcome::kTripped, OutcomeOf(ev, T(1), &index));
  EXPECT_EQ(1u, index);
  EXPECT_EQ(BarrierOutcome::kDone, OutcomeOf(ev, T(2)));
  EXPECT_EQ(BarrierOutcome::kDone, OutcomeOf(ev, T(5)));
  for (const Event& e : ev)
    if (e.thread == T(5)) EXPECT_EQ(1u, e.waiting_count) << "thread 3 arrived before it asked";
  EXPECT_EQ(1u, barriers_.Waiting(kBarrier)) << "thread 3 waits in the new generation";
}

TEST_F(BarrierTableTest, AnActionThatThrowsBreaksTheBarrier) {
  Arrive(1, 1, 2, true);
  Arrive(2, 2, 2, true);
  Take();
  Arrive(1, 3, 2, true);
  Event done = Op(2, 2, BarrierOp::kBreak);
  EXPECT_TRUE(done.broken);
  // Op took the events: thread 1 broken, thread 3 (waiting for the action) broken.
  EXPECT_TRUE(barriers_.IsBroken(kBarrier));
  Arrive(2, 4, 2);
  EXPECT_EQ(BarrierOutcome::kBroken, OutcomeOf(Take(), T(4)));
}

TEST_F(BarrierTableTest, TheBreakOfAFailedActionReachesEveryWaiter) {
  Arrive(1, 1, 2, true);
  Arrive(2, 2, 2, true);
  Take();
  Arrive(1, 3, 2, true);
  ASSERT_EQ("", barriers_.Op(2, kBarrier, T(2), BarrierOp::kBreak, now_, &out_));
  auto ev = Take();
  EXPECT_EQ(BarrierOutcome::kBroken, OutcomeOf(ev, T(1)));
  EXPECT_EQ(BarrierOutcome::kBroken, OutcomeOf(ev, T(3)));
  EXPECT_EQ(BarrierOutcome::kDone, OutcomeOf(ev, T(2)));
}

TEST_F(BarrierTableTest, OnlyTheActorTripsTheBarrier) {
  Arrive(1, 1, 2, true);
  EXPECT_NE("", barriers_.Op(1, kBarrier, T(1), BarrierOp::kTrip, now_, &out_));
  EXPECT_TRUE(Take().empty());
  EXPECT_EQ(1u, barriers_.Waiting(kBarrier)) << "a refused trip changes nothing";
}

TEST_F(BarrierTableTest, ATimeoutBreaksTheBarrierForEveryone) {
  Arrive(1, 1, 3);
  Arrive(2, 2, 3, false, true, now_ + 10 * kMs);
  EXPECT_EQ(now_ + 10 * kMs, barriers_.NextDeadline());
  barriers_.Tick(now_ + 9 * kMs, &out_);
  EXPECT_TRUE(Take().empty());
  barriers_.Tick(now_ + 10 * kMs, &out_);
  auto ev = Take();
  EXPECT_EQ(BarrierOutcome::kTimedOut, OutcomeOf(ev, T(2)));
  EXPECT_EQ(BarrierOutcome::kBroken, OutcomeOf(ev, T(1)));
  EXPECT_EQ(kNoDeadline, barriers_.NextDeadline());
  EXPECT_TRUE(barriers_.IsBroken(kBarrier));
}

TEST_F(BarrierTableTest, AZeroTimeoutTimesOutUnlessItTrips) {
  Arrive(1, 1, 2);
  Arrive(2, 2, 2, false, true, now_);
  auto ev = Take();
  EXPECT_EQ(BarrierOutcome::kTripped, OutcomeOf(ev, T(2)));
  EXPECT_EQ(BarrierOutcome::kTripped, OutcomeOf(ev, T(1)));
  Arrive(1, 3, 2, false, true, now_);
  EXPECT_EQ(BarrierOutcome::kTimedOut, OutcomeOf(Take(), T(3)));
  EXPECT_TRUE(barriers_.IsBroken(kBarrier));
}

TEST_F(BarrierTableTest, AnInterruptedPartyBreaksTheBarrier) {
  Arrive(1, 1, 3);
  Arrive(2, 2, 3);
  barriers_.Interrupt(T(9), &out_);
  EXPECT_TRUE(Take().empty()) << "a thread not waiting here: nothing";
  barriers_.Interrupt(T(2), &out_);
  auto ev = Take();
  EXPECT_EQ(BarrierOutcome::kInterrupted, OutcomeOf(ev, T(2)));
  EXPECT_EQ(BarrierOutcome::kBroken, OutcomeOf(ev, T(1)));
  for (const Event& e : ev) EXPECT_EQ(e.thread == T(2) ? 2u : 1u, e.node);
}

TEST_F(BarrierTableTest, AnInterruptedArrivalBreaksAWholeBarrierOnly) {
  Arrive(1, 1, 3);
  ASSERT_EQ("", barriers_.Arrive(2, kBarrier, T(2), 3, false, false, kNoDeadline, now_, &out_,
                                 true));
  auto ev = Take();
  EXPECT_EQ(BarrierOutcome::kInterrupted, OutcomeOf(ev, T(2)));
  EXPECT_EQ(BarrierOutcome::kBroken, OutcomeOf(ev, T(1)));
  // At a broken barrier it is told so (dowait checks broken first).
  ASSERT_EQ("", barriers_.Arrive(2, kBarrier, T(3), 3, false, false, kNoDeadline, now_, &out_,
                                 true));
  EXPECT_EQ(BarrierOutcome::kBroken, OutcomeOf(Take(), T(3)));
}

TEST_F(BarrierTableTest, AnArrivalInterruptedWhileAnActionRunsArrivesInterrupted) {
  Arrive(1, 1, 2, true);
  Arrive(2, 2, 2, true);
  Take();
  Arrive(1, 3, 2, true);
  barriers_.Interrupt(T(3), &out_);
  EXPECT_TRUE(Take().empty()) << "it waits for the action, as for the lock in Java";
  ASSERT_EQ("", barriers_.Op(2, kBarrier, T(2), BarrierOp::kTrip, now_, &out_));
  auto ev = Take();
  EXPECT_EQ(BarrierOutcome::kInterrupted, OutcomeOf(ev, T(3)));
  EXPECT_TRUE(barriers_.IsBroken(kBarrier)) << "its arrival broke the next generation";
}

TEST_F(BarrierTableTest, WhileTheActionRunsNoInterruptOrTimeoutBreaksIt) {
  Arrive(1, 1, 3, true);
  Arrive(1, 2, 3, true, true, now_ + 10 * kMs);
  Arrive(2, 3, 3, true);
  EXPECT_EQ(BarrierOutcome::kLast, OutcomeOf(Take(), T(3)));
  barriers_.Interrupt(T(1), &out_);
  barriers_.Tick(now_ + 20 * kMs, &out_);
  EXPECT_TRUE(Take().empty()) << "every party arrived: the barrier trips";
  ASSERT_EQ("", barriers_.Op(2, kBarrier, T(3), BarrierOp::kTrip, now_ + 20 * kMs, &out_));
  auto ev = Take();
  EXPECT_EQ(BarrierOutcome::kTripped, OutcomeOf(ev, T(1)));
  EXPECT_EQ(BarrierOutcome::kTripped, OutcomeOf(ev, T(2)));
  EXPECT_FALSE(barriers_.IsBroken(kBarrier));
  EXPECT_EQ(kNoDeadline, barriers_.NextDeadline());
}

TEST_F(BarrierTableTest, ResetBreaksTheWaitersAndLeavesItWhole) {
  Arrive(1, 1, 3);
  Arrive(2, 2, 3);
  Event done = Op(1, 5, BarrierOp::kReset);
  EXPECT_FALSE(done.broken);
  EXPECT_EQ(0u, done.waiting_count);
  EXPECT_EQ(0u, barriers_.BarrierCount());
  Arrive(1, 1, 3);
  Event q = Op(2, 5, BarrierOp::kQuery);
  EXPECT_EQ(1u, q.waiting_count);
  // A broken barrier stays broken until reset.
  barriers_.Interrupt(T(1), &out_);
  Take();
  EXPECT_TRUE(Op(2, 5, BarrierOp::kQuery).broken);
  EXPECT_FALSE(Op(2, 5, BarrierOp::kReset).broken);
  EXPECT_FALSE(Op(2, 5, BarrierOp::kQuery).broken);
}

TEST_F(BarrierTableTest, ACancelledAwaitBreaksTheBarrier) {
  Arrive(1, 1, 3);
  Arrive(2, 2, 3);
  EXPECT_FALSE(barriers_.Cancel(2, kBarrier, T(7), &out_));
  EXPECT_TRUE(barriers_.Cancel(2, kBarrier, T(2), &out_));
  auto ev = Take();
  ASSERT_EQ(1u, ev.size()) << "the cancelled thread's own call ends at its node";
  EXPECT_EQ(BarrierOutcome::kBroken, OutcomeOf(ev, T(1)));
}

TEST_F(BarrierTableTest, MismatchedPartiesAndMisuseAreRefused) {
  Arrive(1, 1, 3);
  EXPECT_NE("", barriers_.Arrive(2, kBarrier, T(2), 4, false, false, kNoDeadline, now_, &out_));
  EXPECT_NE("", barriers_.Arrive(2, kBarrier, T(2), 0, false, false, kNoDeadline, now_, &out_));
  EXPECT_NE("", barriers_.Arrive(1, kBarrier, T(1), 3, false, false, kNoDeadline, now_, &out_))
      << "a thread waits at one barrier at a time";
  EXPECT_NE("", barriers_.Arrive(1, kBarrier, ThreadRef{kProg, 0}, 3, false, false, kNoDeadline,
                                 now_, &out_));
  EXPECT_TRUE(Take().empty());
  EXPECT_EQ(1u, barriers_.Waiting(kBarrier));
}

TEST_F(BarrierTableTest, ADeadNodesPartyBreaksTheBarrierForTheOthers) {
  Arrive(1, 1, 3);
  Arrive(2, 2, 3);
  EXPECT_TRUE(barriers_.Involves(2));
  EXPECT_FALSE(barriers_.Involves(3));
  barriers_.NodeDown(2, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size()) << "nothing is sent to the dead node";
  EXPECT_EQ(BarrierOutcome::kBroken, OutcomeOf(ev, T(1)));
  EXPECT_FALSE(barriers_.Involves(2));
}

TEST_F(BarrierTableTest, AFailedProgramsPartiesFailAndItsBarriersGo) {
  Arrive(1, 1, 3);
  Arrive(2, 2, 3);
  barriers_.FailProgram(kProg, "node 3 died", &out_);
  auto ev = Take();
  ASSERT_EQ(2u, ev.size());
  for (const Event& e : ev) {
    EXPECT_EQ(Event::kFailed, e.kind);
    EXPECT_EQ("node 3 died", e.error);
  }
  EXPECT_EQ(0u, barriers_.BarrierCount());
  // A program the monitor table failed is refused from then on.
  monitors_.NodeDown(1, "node 1 died", now_, &out_);
  Take();
  Arrive(2, 3, 3);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kFailed, ev[0].kind);
  EXPECT_EQ(0u, barriers_.Waiting(kBarrier));
}

}  // namespace
}  // namespace monitor
}  // namespace djava
