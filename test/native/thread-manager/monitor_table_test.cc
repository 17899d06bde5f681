// Unit tests of the monitor service's state machine: enter/exit, wait,
// notify/notifyAll, interrupt, timeouts, fairness, leases and recall, node
// death, program end. Deterministic: time is passed in.
#include "monitor_table.h"

#include <gtest/gtest.h>

namespace djava {
namespace monitor {
namespace {

constexpr ObjectId kObj = 42;
constexpr ProgramId kProg = 7;
constexpr TimeNs kMs = 1000 * 1000;

ThreadRef T(uint64_t id) { return ThreadRef{kProg, id}; }

class MonitorTableTest : public ::testing::Test {
 protected:
  MonitorTableTest() : table_(NoLeases()) {}
  static MonitorTable::Options NoLeases() {
    MonitorTable::Options o;
    o.leases = false;
    o.wanted_notices = false;  // WantedTest's
    return o;
  }
  std::vector<Event> Take() {
    std::vector<Event> r;
    r.swap(out_);
    return r;
  }
  // Expects exactly one event, a grant to `t` on `node` for `why`.
  void ExpectGrant(NodeId node, ThreadRef t, Wake why, bool lease = false) {
    auto ev = Take();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(Event::kGranted, ev[0].kind);
    EXPECT_EQ(node, ev[0].node);
    EXPECT_EQ(t, ev[0].thread);
    EXPECT_EQ(why, ev[0].reason) << WakeName(ev[0].reason);
    EXPECT_EQ(lease, ev[0].lease);
  }
  void ExpectNothing() { EXPECT_TRUE(Take().empty()); }

  MonitorTable table_;
  std::vector<Event> out_;
  TimeNs now_ = 1000 * kMs;
};

TEST_F(MonitorTableTest, EnterExitAndFifoQueue) {
  ASSERT_EQ("", table_.Enter(1, kObj, T(1), now_, &out_));
  ExpectGrant(1, T(1), Wake::kAcquired);
  table_.Enter(2, kObj, T(2), now_, &out_);
  table_.Enter(3, kObj, T(3), now_, &out_);
  table_.Enter(1, kObj, T(4), now_, &out_);
  ExpectNothing();
  EXPECT_EQ(3u, table_.EntryQueueLength(kObj));
  ASSERT_EQ("", table_.Exit(1, kObj, T(1), now_, &out_));
  ExpectGrant(2, T(2), Wake::kAcquired);
  table_.Exit(2, kObj, T(2), now_, &out_);
  ExpectGrant(3, T(3), Wake::kAcquired);
  table_.Exit(3, kObj, T(3), now_, &out_);
  ExpectGrant(1, T(4), Wake::kAcquired);
  table_.Exit(1, kObj, T(4), now_, &out_);
  ExpectNothing();
  EXPECT_EQ(0u, table_.MonitorCount());  // idle monitors hold no state
}

TEST_F(MonitorTableTest, AGrantNamesTheNodeThatOwnedTheMonitorLast) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(kNoNode, ev[0].from_node) << "nobody owned it before";
  table_.Enter(2, kObj, T(2), now_, &out_);
  table_.Enter(2, kObj, T(3), now_, &out_);
  table_.Exit(1, kObj, T(1), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(2u, ev[0].node);
  EXPECT_EQ(1u, ev[0].from_node) << "handed over from node 1";
  table_.Exit(2, kObj, T(2), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(2u, ev[0].from_node) << "within node 2";
  // A waiter re-entering after a notify: from the notifier's node.
  table_.Wait(2, kObj, T(3), 0, 0, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Notify(1, kObj, T(1), 0, false, now_, &out_);
  table_.Exit(1, kObj, T(1), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(T(3), ev[0].thread);
  EXPECT_EQ(1u, ev[0].from_node);
}

TEST_F(MonitorTableTest, RejectsMisuse) {
  EXPECT_NE("", table_.Exit(1, kObj, T(1), now_, &out_));
  EXPECT_NE("", table_.Wait(1, kObj, T(1), 0, 0, kNoDeadline, now_, &out_));
  EXPECT_NE("", table_.Notify(1, kObj, T(1), 0, false, now_, &out_));
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  // Re-entry is counted by the node: a second Enter from the owner is misuse.
  EXPECT_NE("", table_.Enter(1, kObj, T(1), now_, &out_));
  EXPECT_NE("", table_.Exit(2, kObj, T(2), now_, &out_));
  EXPECT_NE("", table_.Notify(1, kObj, T(2), 0, false, now_, &out_));
  EXPECT_TRUE(table_.OwnerIs(kObj, T(1)));
}

TEST_F(MonitorTableTest, WaitReleasesAndNotifyReacquires) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  Take();
  ASSERT_EQ("", table_.Wait(1, kObj, T(1), 0, 0, kNoDeadline, now_, &out_));
  ExpectGrant(2, T(2), Wake::kAcquired);  // wait released the monitor
  EXPECT_EQ(1u, table_.WaitSetSize(kObj));
  table_.Notify(2, kObj, T(2), 0, false, now_, &out_);
  ExpectNothing();  // notified, but T2 still owns it
  EXPECT_EQ(0u, table_.WaitSetSize(kObj));
  table_.Exit(2, kObj, T(2), now_, &out_);
  ExpectGrant(1, T(1), Wake::kNotified);
}

TEST_F(MonitorTableTest, NotifyWakesOneInFifoOrderAndNotifyAllWakesAll) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  for (uint64_t t = 1; t <= 3; t++) {
    if (t > 1) table_.Enter(1, kObj, T(t), now_, &out_);
    table_.Wait(1, kObj, T(t), 0, 0, kNoDeadline, now_, &out_);
  }
  Take();
  EXPECT_EQ(3u, table_.WaitSetSize(kObj));
  table_.Enter(2, kObj, T(9), now_, &out_);
  ExpectGrant(2, T(9), Wake::kAcquired);
  table_.Notify(2, kObj, T(9), 0, false, now_, &out_);
  EXPECT_EQ(2u, table_.WaitSetSize(kObj));
  table_.Notify(2, kObj, T(9), 0, true, now_, &out_);
  EXPECT_EQ(0u, table_.WaitSetSize(kObj));
  table_.Exit(2, kObj, T(9), now_, &out_);
  ExpectGrant(1, T(1), Wake::kNotified);  // longest waiter first
  table_.Exit(1, kObj, T(1), now_, &out_);
  ExpectGrant(1, T(2), Wake::kNotified);
  table_.Exit(1, kObj, T(2), now_, &out_);
  ExpectGrant(1, T(3), Wake::kNotified);
  // Notify with an empty wait set is not remembered: no lost wake-up is
  // possible only because waiters test their condition under the monitor.
  table_.Notify(1, kObj, T(3), 0, true, now_, &out_);
  table_.Exit(1, kObj, T(3), now_, &out_);
  ExpectNothing();
}

TEST_F(MonitorTableTest, TimedWaitReturnsAtDeadline) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Wait(1, kObj, T(1), 0, 0, now_ + 50 * kMs, now_, &out_);
  ExpectNothing();
  EXPECT_EQ(now_ + 50 * kMs, table_.NextDeadline());
  table_.Tick(now_ + 49 * kMs, &out_);
  ExpectNothing();
  table_.Tick(now_ + 50 * kMs, &out_);
  ExpectGrant(1, T(1), Wake::kTimedOut);
  EXPECT_EQ(kNoDeadline, table_.NextDeadline());
}

TEST_F(MonitorTableTest, TimedOutWaiterQueuesBehindOwner) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 0, 0, now_ + 10 * kMs, now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  Take();
  table_.Tick(now_ + 10 * kMs, &out_);
  ExpectNothing();  // must re-acquire: T2 holds the monitor
  table_.Exit(2, kObj, T(2), now_, &out_);
  ExpectGrant(1, T(1), Wake::kTimedOut);
}

TEST_F(MonitorTableTest, InterruptTakesThreadOutOfWaitSet) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 0, 0, kNoDeadline, now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  Take();
  ASSERT_EQ("", table_.Interrupt(T(1), now_, &out_));
  EXPECT_EQ(0u, table_.WaitSetSize(kObj));
  ExpectNothing();
  table_.Notify(2, kObj, T(2), 0, false, now_, &out_);  // nobody left to notify
  table_.Exit(2, kObj, T(2), now_, &out_);
  ExpectGrant(1, T(1), Wake::kInterrupted);
  // Interrupting a thread that is not waiting does nothing here.
  EXPECT_EQ("", table_.Interrupt(T(5), now_, &out_));
  ExpectNothing();
}

TEST_F(MonitorTableTest, CancelEnterLeavesQueue) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  table_.Enter(3, kObj, T(3), now_, &out_);
  Take();
  table_.CancelEnter(2, kObj, T(2), now_, &out_);
  table_.Exit(1, kObj, T(1), now_, &out_);
  ExpectGrant(3, T(3), Wake::kAcquired);
}

// A node gives an enter up (a timed tryLock, an interrupt) just as its grant
// leaves, and the same thread enters again before the grant arrives: the
// node takes that grant as the new enter's answer, so the service takes the
// new enter as answered, not as an owner's protocol error.
TEST_F(MonitorTableTest, AnEnterCrossingTheGrantOfOneGivenUpIsAnsweredByIt) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  Take();
  table_.Exit(1, kObj, T(1), now_, &out_);
  ExpectGrant(2, T(2), Wake::kAcquired);
  table_.CancelEnter(2, kObj, T(2), now_, &out_);  // crossed the grant
  ExpectNothing();
  EXPECT_EQ("", table_.Enter(2, kObj, T(2), now_, &out_));
  ExpectNothing();
  EXPECT_EQ(0u, table_.EntryQueueLength(kObj));
  // Only once: a second enter of the owner is still its error.
  EXPECT_NE("", table_.Enter(2, kObj, T(2), now_, &out_));
  Take();
  table_.Enter(3, kObj, T(3), now_, &out_);
  ExpectNothing();
  ASSERT_EQ("", table_.Exit(2, kObj, T(2), now_, &out_));
  ExpectGrant(3, T(3), Wake::kAcquired);
}

TEST_F(MonitorTableTest, NoStarvationUnderContention) {
  // Three nodes hammer one monitor; every request is served in order.
  std::deque<std::pair<NodeId, ThreadRef>> expected;
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  NodeId owner_node = 1;
  ThreadRef owner = T(1);
  for (int round = 0; round < 30; round++) {
    NodeId n = 1 + round % 3;
    ThreadRef t = T(100 + round);
    table_.Enter(n, kObj, t, now_, &out_);
    expected.emplace_back(n, t);
    table_.Exit(owner_node, kObj, owner, now_, &out_);
    auto ev = Take();
    ASSERT_EQ(1u, ev.size());
    EXPECT_EQ(expected.front().second, ev[0].thread);
    owner_node = ev[0].node;
    owner = ev[0].thread;
    expected.pop_front();
  }
}

// ---- leases ----------------------------------------------------------------

class LeaseTest : public MonitorTableTest {
 protected:
  LeaseTest() { table_ = MonitorTable(MonitorTable::Options()); }
};

TEST_F(LeaseTest, UncontendedGrantCarriesLease) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  ExpectGrant(1, T(1), Wake::kAcquired, /*lease=*/true);
  NodeId n = 0;
  EXPECT_TRUE(table_.IsLeased(kObj, &n));
  EXPECT_EQ(1u, n);
  // Node 1's threads now enter/exit locally; it may wait and notify as any
  // of its threads.
  EXPECT_EQ("", table_.Notify(1, kObj, T(3), 0, false, now_, &out_));
  ExpectNothing();
}

TEST_F(LeaseTest, AnotherNodeRecallsTheLeaseOnceAndGetsTheMonitor) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Enter(2, kObj, T(2), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kRecall, ev[0].kind);
  EXPECT_EQ(1u, ev[0].node);
  table_.Enter(3, kObj, T(3), now_, &out_);
  ExpectNothing();  // a single recall per lease
  ASSERT_EQ("", table_.ReturnLease(1, kObj, now_, &out_));
  // T3 is still queued: T2 gets a plain grant, no lease.
  ExpectGrant(2, T(2), Wake::kAcquired, /*lease=*/false);
  table_.Exit(2, kObj, T(2), now_, &out_);
  // Just recalled: the cool-down withholds the lease even though T3 is alone.
  ExpectGrant(3, T(3), Wake::kAcquired, /*lease=*/false);
  table_.Exit(3, kObj, T(3), now_, &out_);
  // Once the monitor is quiet for the cool-down, leases come back.
  table_.Enter(3, kObj, T(3), now_ + 100 * kMs, &out_);
  ExpectGrant(3, T(3), Wake::kAcquired, /*lease=*/true);
}

TEST_F(LeaseTest, RecalledNodeQueuesBehindRequesterNoLivelock) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Enter(2, kObj, T(2), now_, &out_);  // recall to node 1
  Take();
  // While the recall is pending, node 1 must not re-grant locally; its new
  // enters go to the service and queue behind node 2.
  table_.Enter(1, kObj, T(5), now_, &out_);
  ExpectNothing();
  table_.ReturnLease(1, kObj, now_, &out_);
  ExpectGrant(2, T(2), Wake::kAcquired, false);
  table_.Exit(2, kObj, T(2), now_, &out_);
  ExpectGrant(1, T(5), Wake::kAcquired, false);
}

TEST_F(LeaseTest, WaitUnderLeaseDropsLeaseAndNoLeaseWhileAnyoneWaits) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  // T1 waits while node 1 holds the lease: the lease goes with the release.
  table_.Wait(1, kObj, T(1), 0, 0, kNoDeadline, now_, &out_);
  EXPECT_FALSE(table_.IsOwned(kObj));
  // Nobody is queued, but T1 waits: no lease, so that a node holding one
  // may take notify for a no-op.
  table_.Enter(2, kObj, T(2), now_, &out_);
  ExpectGrant(2, T(2), Wake::kAcquired, false);
  table_.Notify(2, kObj, T(2), 0, false, now_, &out_);
  // The notified waiter of node 1 now wants the monitor: node 2 hears it
  // (data leaves with the release), and nothing else happens.
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kWanted, ev[0].kind);
  EXPECT_EQ(2u, ev[0].node);
  table_.Exit(2, kObj, T(2), now_, &out_);
  // Nobody waits or queues any more: the lease comes back.
  ExpectGrant(1, T(1), Wake::kNotified, true);
}

TEST_F(LeaseTest, NoLeaseWhileAKeyedWaiterWaits) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Wait(1, kObj, T(1), 5, 100, kNoDeadline, now_, &out_);
  for (int i = 0; i < 3; i++) {
    table_.Enter(2, kObj, T(2), now_, &out_);
    ExpectGrant(2, T(2), Wake::kAcquired, false);
    table_.Notify(2, kObj, T(2), 0, true, now_, &out_);  // another wait set
    table_.Exit(2, kObj, T(2), now_, &out_);
    ExpectNothing();
  }
  EXPECT_EQ(1u, table_.WaitSetSize(kObj));
  table_.Interrupt(T(1), now_, &out_);
  ExpectGrant(1, T(1), Wake::kInterrupted, true);
}

TEST_F(LeaseTest, StaleReturnIsIgnored) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Exit(1, kObj, T(1), now_, &out_);  // an Exit also gives the lease back
  EXPECT_EQ("", table_.ReturnLease(1, kObj, now_, &out_));
  ExpectNothing();
  table_.Enter(2, kObj, T(2), now_, &out_);
  ExpectGrant(2, T(2), Wake::kAcquired, true);
  table_.ReturnLease(1, kObj, now_, &out_);  // not node 1's lease any more
  EXPECT_TRUE(table_.IsLeased(kObj));
}

// ---- keyed wait sets, signals, queries ----------------------------------------

TEST_F(MonitorTableTest, KeyedWaitIsWokenOnlyByItsKey) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 0, 0, kNoDeadline, now_, &out_);  // Object.wait's set
  table_.Enter(1, kObj, T(2), now_, &out_);
  table_.Wait(1, kObj, T(2), 5, 0, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(3), now_, &out_);
  table_.Wait(1, kObj, T(3), 5, 0, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(4), now_, &out_);
  table_.Wait(1, kObj, T(4), 6, 0, now_ + 10 * kMs, now_, &out_);
  Take();
  table_.Enter(2, kObj, T(9), now_, &out_);
  ExpectGrant(2, T(9), Wake::kAcquired);
  table_.Notify(2, kObj, T(9), 7, true, now_, &out_);  // nobody waits with key 7
  EXPECT_EQ(4u, table_.WaitSetSize(kObj));
  table_.Notify(2, kObj, T(9), 5, false, now_, &out_);  // the longest of key 5
  EXPECT_EQ(3u, table_.WaitSetSize(kObj));
  table_.Notify(2, kObj, T(9), 0, true, now_, &out_);  // key 0 only
  EXPECT_EQ(2u, table_.WaitSetSize(kObj));
  table_.Exit(2, kObj, T(9), now_, &out_);
  ExpectGrant(1, T(2), Wake::kNotified);
  table_.Exit(1, kObj, T(2), now_, &out_);
  ExpectGrant(1, T(1), Wake::kNotified);
  table_.Exit(1, kObj, T(1), now_, &out_);
  ExpectNothing();  // T3 (key 5) and T4 (key 6) still wait
  // Interrupt and timeouts end a keyed wait whatever its key.
  table_.Interrupt(T(3), now_, &out_);
  ExpectGrant(1, T(3), Wake::kInterrupted);
  table_.Exit(1, kObj, T(3), now_, &out_);
  table_.Tick(now_ + 10 * kMs, &out_);
  ExpectGrant(1, T(4), Wake::kTimedOut);
}

TEST_F(MonitorTableTest, SignalWaitsForTheOwnersReleaseSoACheckThenWaitIsNotMissed) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  // T1 checked its condition (false) and is about to wait for key 5; T2 on
  // node 2 makes it true and signals meanwhile.
  ASSERT_EQ("", table_.Signal(2, kObj, T(2), 5, false, 0, now_, &out_));
  ExpectNothing();
  EXPECT_EQ(1u, table_.EntryQueueLength(kObj));
  table_.Enter(3, kObj, T(3), now_, &out_);  // queued behind the signal
  // T1's wait releases the monitor: the signal's turn wakes it, behind T3.
  table_.Wait(1, kObj, T(1), 5, 0, kNoDeadline, now_, &out_);
  ExpectGrant(3, T(3), Wake::kAcquired);
  EXPECT_EQ(0u, table_.WaitSetSize(kObj));
  table_.Exit(3, kObj, T(3), now_, &out_);
  ExpectGrant(1, T(1), Wake::kNotified);
}

TEST_F(MonitorTableTest, SignalOfAnotherKeyOrOnAFreeMonitorWithNobodyWaitingDoesNothing) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 5, 0, kNoDeadline, now_, &out_);
  Take();
  table_.Signal(2, kObj, T(2), 6, true, 0, now_, &out_);
  table_.Signal(2, kObj, T(2), 0, true, 0, now_, &out_);
  ExpectNothing();
  EXPECT_EQ(1u, table_.WaitSetSize(kObj));
  EXPECT_FALSE(table_.IsOwned(kObj));
  table_.Signal(2, kObj, T(2), 5, false, 0, now_, &out_);
  ExpectGrant(1, T(1), Wake::kNotified);
  table_.Exit(1, kObj, T(1), now_, &out_);
  table_.Signal(2, kObj, T(2), 5, false, 0, now_, &out_);
  ExpectNothing();
  EXPECT_EQ(0u, table_.MonitorCount());  // no lease: nothing kept
}

TEST_F(MonitorTableTest, QueuedSignalsAndTheEnterBehindThemAreServedInOneTurn) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 5, 0, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(2), now_, &out_);
  Take();
  table_.Signal(2, kObj, T(3), 6, false, 0, now_, &out_);  // nobody: no effect
  table_.Signal(3, kObj, T(4), 5, false, 0, now_, &out_);  // wakes T1
  table_.Enter(4, kObj, T(5), now_, &out_);
  ExpectNothing();
  EXPECT_EQ(3u, table_.EntryQueueLength(kObj));
  table_.Exit(1, kObj, T(2), now_, &out_);
  ExpectGrant(4, T(5), Wake::kAcquired);
  table_.Exit(4, kObj, T(5), now_, &out_);
  ExpectGrant(1, T(1), Wake::kNotified);
}

TEST_F(MonitorTableTest, SignalIsNoEnterAndCancelLeavesIt) {
  table_.Enter(1, kObj, T(2), now_, &out_);
  table_.Wait(1, kObj, T(2), 5, 0, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  ASSERT_TRUE(table_.OwnerIs(kObj, T(1)));
  table_.Signal(2, kObj, T(3), 5, false, 0, now_, &out_);
  // The signalling thread may enter after its signal...
  ASSERT_EQ("", table_.Enter(2, kObj, T(3), now_, &out_));
  EXPECT_EQ(2u, table_.EntryQueueLength(kObj));
  // ...and giving the enter up leaves the signal queued.
  table_.CancelEnter(2, kObj, T(3), now_, &out_);
  EXPECT_EQ(1u, table_.EntryQueueLength(kObj));
  table_.Exit(1, kObj, T(1), now_, &out_);
  ExpectGrant(1, T(2), Wake::kNotified);
}

TEST_F(MonitorTableTest, SignalAndQueryNeedNoOwnershipButCheckTheProgram) {
  table_.FreeProgram(kProg, now_, &out_);
  Take();
  EXPECT_EQ("", table_.Signal(1, kObj, T(1), 5, false, 0, now_, &out_));
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kFailed, ev[0].kind);
  EXPECT_EQ(0u, table_.MonitorCount());
}

TEST_F(MonitorTableTest, QueryListsKeyedWaitersInFifoOrder) {
  table_.Query(3, kObj, T(9), 11, &out_);  // an unknown monitor: nobody
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kQueue, ev[0].kind);
  EXPECT_EQ(3u, ev[0].node);
  EXPECT_EQ(11u, ev[0].nonce);
  EXPECT_TRUE(ev[0].waiters.empty());
  EXPECT_EQ(0u, table_.MonitorCount());  // a query makes no monitor
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 5, 101, kNoDeadline, now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  table_.Wait(2, kObj, T(2), 0, 102, kNoDeadline, now_, &out_);  // Object.wait: not listed
  table_.Enter(2, kObj, T(3), now_, &out_);
  table_.Wait(2, kObj, T(3), 6, 103, now_ + kMs, now_, &out_);
  table_.Enter(1, kObj, T(4), now_, &out_);
  table_.Wait(1, kObj, T(4), 5, 104, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(5), now_, &out_);  // owned by T5 now
  Take();
  ASSERT_EQ("", table_.Query(3, kObj, T(9), 12, &out_));  // T9 owns nothing
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kQueue, ev[0].kind);
  EXPECT_EQ(kObj, ev[0].object);
  EXPECT_EQ(12u, ev[0].nonce);
  ASSERT_EQ(3u, ev[0].waiters.size());
  const std::vector<std::pair<uint64_t, uint64_t>> expected = {{5, 101}, {6, 103}, {5, 104}};
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(expected[i].first, ev[0].waiters[i].key);
    EXPECT_EQ(expected[i].second, ev[0].waiters[i].java_thread);
  }
  EXPECT_EQ(T(3), ev[0].waiters[1].thread);
  // A woken waiter is no longer listed.
  table_.Notify(1, kObj, T(5), 5, false, now_, &out_);
  Take();
  table_.Query(3, kObj, T(9), 13, &out_);
  ev = Take();
  ASSERT_EQ(2u, ev[0].waiters.size());
  EXPECT_EQ(103u, ev[0].waiters[0].java_thread);
}

TEST_F(MonitorTableTest, ASignalThatMovesWaitersLeavesThemSignalledUnderTheNewKey) {
  // An acquirer (key 1) waits, then two condition waiters (key 5), one timed.
  table_.Enter(1, kObj, T(3), now_, &out_);
  table_.Wait(1, kObj, T(3), 1, 103, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 5, 101, now_ + 10 * kMs, now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  table_.Wait(2, kObj, T(2), 5, 102, kNoDeadline, now_, &out_);
  Take();
  EXPECT_NE("", table_.Signal(3, kObj, T(4), 5, true, 5, now_, &out_));  // onto itself
  // signalAll of the condition: both join the acquirers, behind T3; nobody wakes.
  ASSERT_EQ("", table_.Signal(3, kObj, T(4), 5, true, 1, now_, &out_));
  ExpectNothing();
  EXPECT_EQ(3u, table_.WaitSetSize(kObj));
  table_.Query(3, kObj, T(4), 21, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  ASSERT_EQ(3u, ev[0].waiters.size());
  const uint64_t order[] = {103, 101, 102};
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(1u, ev[0].waiters[i].key);
    EXPECT_EQ(order[i], ev[0].waiters[i].java_thread);
  }
  // Signalled, so neither an interrupt nor T1's deadline wakes them now.
  table_.Interrupt(T(1), now_, &out_);
  table_.Tick(now_ + 20 * kMs, &out_);
  ExpectNothing();
  // Each release's signal of the acquirers wakes the next, FIFO.
  table_.Signal(3, kObj, T(4), 1, false, 0, now_, &out_);
  ExpectGrant(1, T(3), Wake::kNotified);
  table_.Exit(1, kObj, T(3), now_, &out_);
  ExpectNothing();
  table_.Signal(3, kObj, T(4), 1, false, 0, now_, &out_);
  ExpectGrant(1, T(1), Wake::kNotified);
  table_.Exit(1, kObj, T(1), now_, &out_);
  table_.Signal(3, kObj, T(4), 1, false, 0, now_, &out_);
  ExpectGrant(2, T(2), Wake::kNotified);
  table_.Exit(2, kObj, T(2), now_, &out_);
  EXPECT_EQ(0u, table_.WaitSetSize(kObj));
}

// The grant that ends a wait, its only event.
Event TakeGrant(std::vector<Event>* out) {
  std::vector<Event> ev;
  ev.swap(*out);
  EXPECT_EQ(1u, ev.size());
  return ev.empty() ? Event(Event::kFailed) : ev[0];
}

// An acquirer woken in line that gave its wait up (its client's deadline)
// after the service granted it is in line no more: not while its Exit is
// on its way, nor once its next enter took that grant over.
TEST_F(MonitorTableTest, AWokenAcquirerThatGaveUpIsNotListedInLine) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  ASSERT_EQ("", table_.Wait(1, kObj, T(1), 2, 101, kNoDeadline, now_, &out_, kNewPlace));
  Take();
  table_.Signal(2, kObj, T(9), 2, true, 0, now_, &out_);
  Event g = TakeGrant(&out_);
  ASSERT_EQ(T(1), g.thread);
  auto listed = [this] {
    table_.Query(3, kObj, T(4), 21, &out_);
    auto ev = Take();
    return ev.size() == 1 ? ev[0].waiters.size() : size_t{99};
  };
  EXPECT_EQ(1u, listed());
  ASSERT_EQ("", table_.CancelEnter(1, kObj, T(1), now_, &out_));
  EXPECT_EQ(0u, listed());
  ASSERT_EQ("", table_.Enter(1, kObj, T(1), now_, &out_));  // answered by the grant
  ExpectNothing();
  EXPECT_TRUE(table_.OwnerIs(kObj, T(1)));
  EXPECT_EQ(0u, listed());
  ASSERT_EQ("", table_.Exit(1, kObj, T(1), now_, &out_));
  EXPECT_FALSE(table_.IsOwned(kObj));
}

TEST_F(MonitorTableTest, AWokenAcquirerThatWaitsAgainKeepsItsPlaceAheadOfANewcomer) {
  // A fair semaphore's first waiter T1 (key 2, a new place), woken by a
  // release that leaves too few permits; while it re-enters, newcomer T2
  // enters and waits first.
  table_.Enter(1, kObj, T(1), now_, &out_);
  ASSERT_EQ("", table_.Wait(1, kObj, T(1), 2, 101, kNoDeadline, now_, &out_, kNewPlace));
  Take();
  table_.Signal(2, kObj, T(9), 2, true, 0, now_, &out_);  // T1 re-enters
  table_.Enter(2, kObj, T(2), now_, &out_);                // behind it
  Event g = TakeGrant(&out_);
  EXPECT_EQ(T(1), g.thread);
  EXPECT_EQ(1u, g.place);
  EXPECT_TRUE(g.first_in_line);
  // Not T1's turn yet (its check fails): it waits again at its place...
  table_.Wait(1, kObj, T(1), 2, 101, kNoDeadline, now_, &out_, g.place);
  ExpectGrant(2, T(2), Wake::kAcquired);
  // ...ahead of T2, which waits at a new place although it waited later.
  table_.Wait(2, kObj, T(2), 2, 102, kNoDeadline, now_, &out_, kNewPlace);
  table_.Query(3, kObj, T(4), 21, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  ASSERT_EQ(2u, ev[0].waiters.size());
  EXPECT_EQ(101u, ev[0].waiters[0].java_thread);
  EXPECT_EQ(102u, ev[0].waiters[1].java_thread);
  // The next release wakes both, in line order; T1 is first, T2 is not
  // while T1 is queued ahead of it, and is once T1 has left the line.
  table_.Signal(3, kObj, T(9), 2, true, 0, now_, &out_);
  g = TakeGrant(&out_);
  EXPECT_EQ(T(1), g.thread);
  EXPECT_TRUE(g.first_in_line);
  table_.Exit(1, kObj, T(1), now_, &out_);  // acquired: leaves the line
  g = TakeGrant(&out_);
  EXPECT_EQ(T(2), g.thread);
  EXPECT_EQ(2u, g.place);
  EXPECT_TRUE(g.first_in_line) << "T1 left the line";
  table_.Exit(2, kObj, T(2), now_, &out_);
  EXPECT_EQ(0u, table_.MonitorCount());
}

TEST_F(MonitorTableTest, ANotifiedAcquirerReEnteringIsStillReportedInLine) {
  // T1 waits in line (key 1); T3 owns the monitor and releases the
  // synchronizer: T1 is queued to re-enter, behind T3's hold. It is still
  // one of the synchronizer's queued threads (an AQS node stays queued
  // while its thread re-checks): Query reports it with its key, not as a
  // plain enter like T2's; an interrupted acquirer is leaving the line.
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 1, 101, kNoDeadline, now_, &out_, kNewPlace);
  table_.Enter(5, kObj, T(5), now_, &out_);
  table_.Wait(5, kObj, T(5), 1, 105, kNoDeadline, now_, &out_, kNewPlace);
  Take();
  table_.Enter(3, kObj, T(3), now_, &out_);
  ExpectGrant(3, T(3), Wake::kAcquired);
  table_.Enter(2, kObj, T(2), now_, &out_, 102);
  table_.Notify(3, kObj, T(3), 1, false, now_, &out_);
  table_.Interrupt(T(5), now_, &out_);
  table_.Query(4, kObj, T(4), 31, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  ASSERT_EQ(1u, ev[0].waiters.size());
  EXPECT_EQ(1u, ev[0].waiters[0].key);
  EXPECT_EQ(101u, ev[0].waiters[0].java_thread);
  ASSERT_EQ(2u, ev[0].entering.size());
  EXPECT_EQ(102u, ev[0].entering[0].java_thread);
  EXPECT_EQ(105u, ev[0].entering[1].java_thread);
}

TEST_F(MonitorTableTest, AWaiterWokenBehindAnEarlierPlaceIsNotFirstInLine) {
  // T1 (shared, place 1) and T2 (exclusive, place 2) wait; a release wakes
  // the exclusive waiter first, then the shared ones: T2 re-enters ahead
  // of T1 but is not first in line.
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 2, 101, kNoDeadline, now_, &out_, kNewPlace);
  table_.Enter(2, kObj, T(2), now_, &out_);
  table_.Wait(2, kObj, T(2), 1, 102, kNoDeadline, now_, &out_, kNewPlace);
  Take();
  table_.Enter(3, kObj, T(3), now_, &out_);
  ExpectGrant(3, T(3), Wake::kAcquired);
  table_.Signal(3, kObj, T(3), 1, false, 0, now_, &out_);
  table_.Signal(3, kObj, T(3), 2, true, 0, now_, &out_);
  table_.Exit(3, kObj, T(3), now_, &out_);
  Event g = TakeGrant(&out_);
  EXPECT_EQ(T(2), g.thread);
  EXPECT_EQ(2u, g.place);
  EXPECT_FALSE(g.first_in_line) << "T1 (place 1) is queued to re-enter";
  // A place the monitor never gave is a new one; Object.wait is in no line.
  table_.Wait(2, kObj, T(2), 1, 102, kNoDeadline, now_, &out_, 77);
  g = TakeGrant(&out_);
  EXPECT_EQ(T(1), g.thread);
  EXPECT_TRUE(g.first_in_line);
  table_.Wait(1, kObj, T(1), 0, 0, kNoDeadline, now_, &out_);
  table_.Query(3, kObj, T(4), 22, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  ASSERT_EQ(1u, ev[0].waiters.size());  // keyed waiters only
  EXPECT_EQ(102u, ev[0].waiters[0].java_thread);
  table_.Enter(3, kObj, T(3), now_, &out_);
  ExpectGrant(3, T(3), Wake::kAcquired);
  table_.Notify(3, kObj, T(3), 0, true, now_, &out_);
  table_.Exit(3, kObj, T(3), now_, &out_);
  g = TakeGrant(&out_);
  EXPECT_EQ(T(1), g.thread);
  EXPECT_EQ(kNotInLine, g.place);
  EXPECT_FALSE(g.first_in_line);
}

TEST_F(MonitorTableTest, AMovedWaiterJoinsTheEndOfTheLine) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 5, 101, kNoDeadline, now_, &out_);  // a condition's
  table_.Enter(2, kObj, T(2), now_, &out_);
  table_.Wait(2, kObj, T(2), 1, 102, kNoDeadline, now_, &out_, kNewPlace);
  Take();
  table_.Signal(3, kObj, T(9), 5, true, 1, now_, &out_);  // moved behind T2
  table_.Signal(3, kObj, T(9), 1, true, 0, now_, &out_);
  Event g = TakeGrant(&out_);
  EXPECT_EQ(T(2), g.thread);
  EXPECT_EQ(1u, g.place);
  EXPECT_TRUE(g.first_in_line);
  table_.Exit(2, kObj, T(2), now_, &out_);
  g = TakeGrant(&out_);
  EXPECT_EQ(T(1), g.thread);
  EXPECT_EQ(2u, g.place);
  EXPECT_TRUE(g.first_in_line);
  table_.Exit(1, kObj, T(1), now_, &out_);
}

TEST_F(MonitorTableTest, SignalsOfADeadNodeAreDropped) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Wait(1, kObj, T(1), 5, 0, kNoDeadline, now_, &out_);
  table_.Enter(3, kObj, ThreadRef{8, 3}, now_, &out_);  // another program owns
  Take();
  // A thread of program 8 on node 2 signals and its node dies: program 8
  // fails (and with it the owner), and the signal goes.
  table_.Signal(2, kObj, ThreadRef{8, 2}, 5, false, 0, now_, &out_);
  table_.NodeDown(2, "node 2 died", now_, &out_);
  auto ev = Take();
  for (const Event& e : ev) {
    EXPECT_EQ(Event::kFailed, e.kind);
    EXPECT_NE(2u, e.node);
    EXPECT_NE(2u, e.thread.thread);  // nobody waits for the signal
  }
  EXPECT_EQ(0u, table_.EntryQueueLength(kObj));
  EXPECT_FALSE(table_.IsOwned(kObj));
  EXPECT_EQ(1u, table_.WaitSetSize(kObj));  // T1 (program 7) was not signalled
}

TEST_F(MonitorTableTest, SignalsOfAFailedProgramAreDroppedQuietly) {
  table_.Enter(1, kObj, ThreadRef{8, 1}, now_, &out_);  // program 8 owns
  table_.Signal(2, kObj, T(2), 0, true, 0, now_, &out_);
  table_.Enter(3, 43, T(3), now_, &out_);  // node 3 runs program 7 too
  Take();
  table_.NodeDown(3, "node 3 died", now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());  // only the program-wide notice to node 2
  EXPECT_EQ(Event::kFailed, ev[0].kind);
  EXPECT_EQ(2u, ev[0].node);
  EXPECT_EQ(0u, ev[0].thread.thread);
  EXPECT_EQ(0u, table_.EntryQueueLength(kObj));
  table_.Exit(1, kObj, ThreadRef{8, 1}, now_, &out_);
  ExpectNothing();
  EXPECT_EQ(0u, table_.MonitorCount());
}

TEST_F(LeaseTest, SignalsOfANodeThatLeftCleanlyStillNotifyButLeaveNoLease) {
  table_.Enter(3, kObj, T(3), now_, &out_);
  table_.Wait(3, kObj, T(3), 5, 0, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Signal(2, kObj, T(2), 5, false, 0, now_, &out_);
  table_.Signal(2, kObj, T(2), 6, false, 0, now_, &out_);
  EXPECT_TRUE(table_.NodeLeave(2, now_, &out_));  // queued signals are no holding
  table_.NodeDown(2, "node 2 disconnected", now_, &out_);
  ExpectNothing();
  EXPECT_FALSE(table_.ProgramFailed(kProg));
  table_.Exit(1, kObj, T(1), now_, &out_);
  ExpectGrant(3, T(3), Wake::kNotified, true);
  table_.Exit(3, kObj, T(3), now_, &out_);
  EXPECT_FALSE(table_.IsLeased(kObj));
  EXPECT_EQ(0u, table_.MonitorCount());
}

TEST_F(LeaseTest, SignalLeavesTheLeaseWhenNobodyWaitsOrQueues) {
  ASSERT_EQ("", table_.Signal(2, kObj, T(2), 5, true, 0, now_, &out_));
  ExpectGrant(2, T(2), Wake::kSignalled, /*lease=*/true);
  NodeId n = 0;
  EXPECT_TRUE(table_.IsLeased(kObj, &n));
  EXPECT_EQ(2u, n);
  EXPECT_STREQ("signalled", WakeName(Wake::kSignalled));
  // Node 2's threads use it under the lease: any of them may release it.
  EXPECT_EQ("", table_.Exit(2, kObj, T(7), now_, &out_));
  ExpectNothing();
  // A signal that wakes someone leaves no lease to the signaller (the woken
  // gets the monitor, with the lease since nobody else waits or queues).
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Wait(1, kObj, T(1), 5, 0, kNoDeadline, now_, &out_);
  table_.Signal(2, kObj, T(2), 5, true, 0, now_, &out_);
  ExpectGrant(1, T(1), Wake::kNotified, true);
}

TEST_F(LeaseTest, SignalFromTheLeaseHolderWhileItsThreadOwnsRecallsItsOwnLease) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  ExpectGrant(1, T(1), Wake::kAcquired, true);
  // T1 owns under node 1's lease; T2 of node 1 signals: it must wait for
  // T1's release, which the node makes only when recalled.
  table_.Signal(1, kObj, T(2), 5, false, 0, now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kRecall, ev[0].kind);
  EXPECT_EQ(1u, ev[0].node);
  // T1 waits for key 5 (releasing the lease): the signal wakes it.
  table_.Wait(1, kObj, T(1), 5, 0, kNoDeadline, now_, &out_);
  ExpectGrant(1, T(1), Wake::kNotified, false);  // just recalled: cool-down
  table_.Exit(1, kObj, T(1), now_, &out_);
  // Idle, the monitor is forgotten with its cool-down: a signal leaves the
  // lease to node 1.
  table_.Signal(1, kObj, T(2), 5, false, 0, now_, &out_);
  ExpectGrant(1, T(2), Wake::kSignalled, true);
  // An enter of another node recalls that lease as any other.
  table_.Enter(2, kObj, T(3), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kRecall, ev[0].kind);
  table_.ReturnLease(1, kObj, now_, &out_);
  ExpectGrant(2, T(3), Wake::kAcquired, false);
}

TEST_F(LeaseTest, SignalQueuedBehindALeaseReturnedWithoutAWait) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Signal(2, kObj, T(2), 0, false, 0, now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kRecall, ev[0].kind);
  table_.ReturnLease(1, kObj, now_, &out_);
  ExpectNothing();  // served; no lease in the cool-down
  EXPECT_EQ(0u, table_.MonitorCount());
}

// ---- try-enter, owner and entry queue in Query ------------------------------

TEST_F(MonitorTableTest, TryEnterGrantsAFreeMonitorElseBusyAndLeavesNothing) {
  ASSERT_EQ("", table_.TryEnter(1, kObj, T(1), 101, now_, &out_));
  ExpectGrant(1, T(1), Wake::kAcquired);
  EXPECT_TRUE(table_.OwnerIs(kObj, T(1)));
  table_.Enter(2, kObj, T(2), now_, &out_);  // queued behind T1
  ASSERT_EQ("", table_.TryEnter(3, kObj, T(3), 103, now_, &out_));
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kBusy, ev[0].kind);
  EXPECT_EQ(3u, ev[0].node);
  EXPECT_EQ(kObj, ev[0].object);
  EXPECT_EQ(T(3), ev[0].thread);
  EXPECT_EQ(1u, table_.EntryQueueLength(kObj));  // T3 was not queued
  // The owner's release goes to T2; T3 gets nothing later.
  table_.Exit(1, kObj, T(1), now_, &out_);
  ExpectGrant(2, T(2), Wake::kAcquired);
  table_.Exit(2, kObj, T(2), now_, &out_);
  ExpectNothing();
  EXPECT_EQ(0u, table_.MonitorCount());
  // A busy try on a monitor nobody else uses: nothing kept either.
  table_.Enter(1, 43, T(1), now_, &out_);
  Take();
  table_.TryEnter(2, 43, T(2), 0, now_, &out_);
  EXPECT_EQ(Event::kBusy, Take().at(0).kind);
  table_.Exit(1, 43, T(1), now_, &out_);
  EXPECT_EQ(0u, table_.MonitorCount());
}

TEST_F(MonitorTableTest, TryEnterMisuseAndFailedPrograms) {
  table_.TryEnter(1, kObj, T(1), 0, now_, &out_);
  Take();
  EXPECT_NE("", table_.TryEnter(1, kObj, T(1), 0, now_, &out_));  // owns it already
  table_.Enter(2, kObj, T(2), now_, &out_);
  EXPECT_NE("", table_.TryEnter(2, kObj, T(2), 0, now_, &out_));  // queued already
  ExpectNothing();
  EXPECT_EQ(1u, table_.EntryQueueLength(kObj));
  table_.FreeProgram(kProg, now_, &out_);
  Take();
  EXPECT_EQ("", table_.TryEnter(1, kObj, T(3), 0, now_, &out_));
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kFailed, ev[0].kind);
  EXPECT_EQ(0u, table_.MonitorCount());
}

TEST_F(LeaseTest, TryEnterGetsALeaseButNeverRecallsOne) {
  ASSERT_EQ("", table_.TryEnter(1, kObj, T(1), 0, now_, &out_));
  ExpectGrant(1, T(1), Wake::kAcquired, /*lease=*/true);
  // Leased to node 1 (idle or not, the service cannot tell): busy for
  // everyone, node 1 included, and no recall.
  table_.TryEnter(2, kObj, T(2), 0, now_, &out_);
  table_.TryEnter(1, kObj, T(3), 0, now_, &out_);
  auto ev = Take();
  ASSERT_EQ(2u, ev.size());
  EXPECT_EQ(Event::kBusy, ev[0].kind);
  EXPECT_EQ(Event::kBusy, ev[1].kind);
  NodeId n = 0;
  EXPECT_TRUE(table_.IsLeased(kObj, &n));
  EXPECT_EQ(1u, n);
  EXPECT_EQ(0u, table_.EntryQueueLength(kObj));
  // An ordinary enter still recalls it.
  table_.Enter(2, kObj, T(2), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kRecall, ev[0].kind);
}

TEST_F(MonitorTableTest, QueryReportsTheOwnerAndTheEnteringInOrder) {
  table_.Enter(1, kObj, T(4), now_, &out_, 104);
  table_.Wait(1, kObj, T(4), 5, 104, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(1), now_, &out_, 101);
  table_.Enter(2, kObj, T(2), now_, &out_, 102);
  table_.Signal(3, kObj, T(9), 6, false, 0, now_, &out_);  // no enter: not listed
  table_.Enter(3, kObj, T(3), now_, &out_, 103);
  table_.Notify(1, kObj, T(1), 5, false, now_, &out_);  // T4 re-enters last
  Take();
  table_.Query(4, kObj, T(8), 1, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_TRUE(ev[0].owned);
  EXPECT_FALSE(ev[0].leased);
  EXPECT_EQ(101u, ev[0].owner_java_thread);
  ASSERT_EQ(3u, ev[0].entering.size());
  EXPECT_EQ(102u, ev[0].entering[0].java_thread);
  EXPECT_EQ(T(2), ev[0].entering[0].thread);
  EXPECT_EQ(103u, ev[0].entering[1].java_thread);
  EXPECT_EQ(104u, ev[0].entering[2].java_thread);  // the woken waiter's
  EXPECT_TRUE(ev[0].waiters.empty());
  // The next owner's Thread object is reported once it is granted.
  table_.Exit(1, kObj, T(1), now_, &out_);
  Take();
  table_.Query(4, kObj, T(8), 2, &out_);
  ev = Take();
  EXPECT_EQ(102u, ev[0].owner_java_thread);
  ASSERT_EQ(2u, ev[0].entering.size());
  // Woken, T4 owns with the Thread object of its wait.
  table_.Exit(2, kObj, T(2), now_, &out_);
  table_.Exit(3, kObj, T(3), now_, &out_);
  Take();
  table_.Query(4, kObj, T(8), 3, &out_);
  ev = Take();
  EXPECT_EQ(104u, ev[0].owner_java_thread);
  EXPECT_TRUE(ev[0].entering.empty());
  table_.Exit(1, kObj, T(4), now_, &out_);
  table_.Query(4, kObj, T(8), 4, &out_);
  ev = Take();
  EXPECT_FALSE(ev[0].owned);
  EXPECT_EQ(0u, ev[0].owner_java_thread);
}

TEST_F(LeaseTest, QueryOfALeasedMonitorReportsAnUnknownOwner) {
  table_.Enter(1, kObj, T(1), now_, &out_, 101);
  ExpectGrant(1, T(1), Wake::kAcquired, true);
  table_.Query(2, kObj, T(2), 1, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_TRUE(ev[0].owned);
  EXPECT_TRUE(ev[0].leased);
  EXPECT_EQ(0u, ev[0].owner_java_thread);  // node 1 decides who owns it
  table_.Enter(2, kObj, T(2), now_, &out_, 102);  // recalls
  Take();
  table_.Query(2, kObj, T(3), 2, &out_);
  ev = Take();
  EXPECT_TRUE(ev[0].leased);
  ASSERT_EQ(1u, ev[0].entering.size());
  EXPECT_EQ(102u, ev[0].entering[0].java_thread);
}

TEST_F(LeaseTest, TheOwnerGrantedAsAWokenAcquirerIsReportedInLineUntilItLeaves) {
  // T1 waits in line (key 1) and is woken to check again. While it holds
  // the monitor for that check it is in no wait set, but still one of the
  // synchronizer's queued threads (an AQS node stays queued while its
  // thread re-checks). Its grant has no lease, so the service sees it leave.
  table_.Enter(1, kObj, T(1), now_, &out_, 101);
  ExpectGrant(1, T(1), Wake::kAcquired, true);
  table_.Wait(1, kObj, T(1), 1, 101, kNoDeadline, now_, &out_, kNewPlace);
  Take();
  table_.Signal(2, kObj, T(9), 1, false, 0, now_, &out_);
  Event g = TakeGrant(&out_);
  EXPECT_EQ(T(1), g.thread);
  EXPECT_FALSE(g.lease);
  auto query = [this](uint64_t nonce) {
    table_.Query(3, kObj, T(4), nonce, &out_);
    auto ev = Take();
    EXPECT_EQ(1u, ev.size());
    return ev[0];
  };
  Event q = query(1);
  ASSERT_EQ(1u, q.waiters.size());
  EXPECT_EQ(1u, q.waiters[0].key);
  EXPECT_EQ(101u, q.waiters[0].java_thread);
  EXPECT_EQ(101u, q.owner_java_thread);
  // Its check fails: it waits again, reported once.
  table_.Wait(1, kObj, T(1), 1, 101, kNoDeadline, now_, &out_, g.place);
  EXPECT_EQ(1u, query(2).waiters.size());
  // Woken again, it acquires and leaves the monitor: no longer in line.
  table_.Signal(2, kObj, T(9), 1, false, 0, now_, &out_);
  TakeGrant(&out_);
  EXPECT_EQ(1u, query(3).waiters.size());
  table_.Exit(1, kObj, T(1), now_, &out_);
  Take();
  q = query(4);
  EXPECT_TRUE(q.waiters.empty());
  EXPECT_FALSE(q.owned);
  // A plain enter is not in line, and may have its lease again.
  table_.Enter(1, kObj, T(1), now_, &out_, 101);
  ExpectGrant(1, T(1), Wake::kAcquired, true);
  EXPECT_TRUE(query(5).waiters.empty());
}

// ---- failures ----------------------------------------------------------------

TEST_F(MonitorTableTest, NodeDeathHoldingLockFailsProgramAndWakesEveryone) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  table_.Enter(3, 43, T(3), now_, &out_);
  table_.Wait(3, 43, T(3), 0, 0, kNoDeadline, now_, &out_);
  Take();
  table_.NodeDown(1, "node 1 (host:123) died", now_, &out_);
  auto ev = Take();
  std::set<uint64_t> failed;
  for (const Event& e : ev) {
    ASSERT_EQ(Event::kFailed, e.kind);
    EXPECT_NE(1u, e.node);  // nothing sent to the dead node
    EXPECT_NE(std::string::npos, e.error.find("node 1")) << e.error;
    failed.insert(e.thread.thread);
  }
  EXPECT_EQ((std::set<uint64_t>{0, 2, 3}), failed);  // 0: program-wide notice
  EXPECT_FALSE(table_.IsOwned(kObj));
  EXPECT_TRUE(table_.ProgramFailed(kProg));
  // Any later request of the failed program fails at once.
  table_.Enter(2, kObj, T(2), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kFailed, ev[0].kind);
  EXPECT_EQ(2u, ev[0].thread.thread);
  // Other programs are unaffected.
  table_.Enter(2, kObj, ThreadRef{8, 1}, now_, &out_);
  ExpectGrant(2, ThreadRef{8, 1}, Wake::kAcquired);
}

TEST_F(MonitorTableTest, NodeDeathWhileQueuedFailsProgramToo) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  Take();
  table_.NodeDown(2, "node 2 died", now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());  // the owner on node 1 is told its program failed
  EXPECT_EQ(Event::kFailed, ev[0].kind);
  EXPECT_EQ(1u, ev[0].node);
  EXPECT_EQ(0u, ev[0].thread.thread);
  EXPECT_FALSE(table_.IsOwned(kObj));
  EXPECT_EQ(0u, table_.EntryQueueLength(kObj));
}

TEST_F(MonitorTableTest, CleanLeaveFailsNothing) {
  // Node 1 used the monitor and is done with it; node 2 holds it now.
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Exit(1, kObj, T(1), now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  Take();
  EXPECT_TRUE(table_.NodeLeave(1, now_, &out_));
  table_.NodeDown(1, "node 1 disconnected", now_, &out_);  // its connection then closes
  EXPECT_TRUE(Take().empty());
  EXPECT_FALSE(table_.ProgramFailed(kProg));
  EXPECT_TRUE(table_.OwnerIs(kObj, T(2)));
}

TEST_F(MonitorTableTest, LeaveWhileOwningOrQueuedIsADeath) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Enter(2, kObj, T(2), now_, &out_);
  Take();
  EXPECT_FALSE(table_.NodeLeave(2, now_, &out_));  // still queued for kObj
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kFailed, ev[0].kind);
  EXPECT_EQ(1u, ev[0].node);
  EXPECT_NE(std::string::npos, ev[0].error.find("left while")) << ev[0].error;
  EXPECT_TRUE(table_.ProgramFailed(kProg));
}

TEST_F(LeaseTest, LeaveAfterReturningLeasesIsClean) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  ExpectGrant(1, T(1), Wake::kAcquired, /*lease=*/true);
  // A lease still held at Leave may cover a thread inside the monitor.
  MonitorTable copy = table_;
  EXPECT_FALSE(copy.NodeLeave(1, now_, &out_));
  EXPECT_TRUE(copy.ProgramFailed(kProg));
  Take();
  // Returned first, as the client does: nothing fails.
  table_.ReturnLease(1, kObj, now_, &out_);
  EXPECT_TRUE(table_.NodeLeave(1, now_, &out_));
  table_.NodeDown(1, "node 1 disconnected", now_, &out_);
  EXPECT_TRUE(Take().empty());
  EXPECT_FALSE(table_.ProgramFailed(kProg));
}

TEST_F(LeaseTest, NodeDeathHoldingLeaseReleasesIt) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.Enter(2, kObj, ThreadRef{8, 2}, now_, &out_);  // another program
  Take();  // recall
  table_.NodeDown(1, "node 1 died", now_, &out_);
  ExpectGrant(2, ThreadRef{8, 2}, Wake::kAcquired, false);
}

TEST_F(MonitorTableTest, FreeProgramDropsItsMonitors) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  table_.Enter(1, 43, T(1), now_, &out_);
  table_.Wait(1, 43, T(1), 0, 0, now_ + kMs, now_, &out_);
  Take();
  EXPECT_EQ(2u, table_.MonitorCount());
  table_.FreeProgram(kProg, now_, &out_);
  EXPECT_EQ(0u, table_.MonitorCount());
  EXPECT_EQ(kNoDeadline, table_.NextDeadline());
  EXPECT_FALSE(table_.ProgramFailed(kProg));
}

// A thread of the ended program still being torn down on a node (Thread.stop
// runs its exit, which notifies joiners) is told its program ended; its
// notify is no "does not own" error, and its enter makes no monitor.
TEST_F(MonitorTableTest, RequestsAfterFreeProgramFailQuietly) {
  table_.Enter(1, kObj, T(1), now_, &out_);
  Take();
  table_.FreeProgram(kProg, now_, &out_);
  Take();
  EXPECT_EQ("", table_.Notify(1, kObj, T(1), 0, true, now_, &out_));
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kFailed, ev[0].kind);
  EXPECT_EQ("", table_.Enter(1, 43, T(2), now_, &out_));
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kFailed, ev[0].kind);
  EXPECT_EQ(0u, table_.MonitorCount());
  // Other programs are unaffected.
  table_.Enter(2, kObj, ThreadRef{8, 1}, now_, &out_);
  ExpectGrant(2, ThreadRef{8, 1}, Wake::kAcquired);
}

// ---- node hand-offs (grouped enters) ---------------------------------------

// The single event of a step: a grant, with its successors' threads.
static std::vector<ThreadRef> SuccessorsOf(const Event& e) {
  std::vector<ThreadRef> r;
  for (const Event::Successor& s : e.successors) r.push_back(s.thread);
  return r;
}

TEST_F(MonitorTableTest, AGroupedGrantNamesItsNodesQueuedThreadsAsSuccessors) {
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  ExpectGrant(1, T(1), Wake::kAcquired);
  table_.Enter(2, kObj, T(2), now_, &out_, 0, true);
  table_.Enter(1, kObj, T(3), now_, &out_, 0, true);
  table_.Enter(2, kObj, T(4), now_, &out_, 0, true);
  table_.Enter(1, kObj, T(5), now_, &out_, 0, true);
  ExpectNothing();
  // Node 2's threads go together, ahead of node 1's T(3) queued before T(4).
  table_.Exit(1, kObj, T(1), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(2u, ev[0].node);
  EXPECT_EQ(T(2), ev[0].thread);
  EXPECT_EQ(std::vector<ThreadRef>{T(4)}, SuccessorsOf(ev[0]));
  EXPECT_FALSE(ev[0].lease);
  EXPECT_EQ(2u, table_.EntryQueueLength(kObj));
  // The node hands it on itself: no event, and T(4) owns it at the service.
  ASSERT_EQ("", table_.Exit(2, kObj, T(2), now_, &out_, T(4)));
  ExpectNothing();
  EXPECT_TRUE(table_.OwnerIs(kObj, T(4)));
  // Its release names nobody: node 1's two go together.
  table_.Exit(2, kObj, T(4), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(T(3), ev[0].thread);
  EXPECT_EQ(std::vector<ThreadRef>{T(5)}, SuccessorsOf(ev[0]));
  EXPECT_EQ(2u, ev[0].from_node);
}

// Data leaves with the release: a Java monitor's holder hears, once a
// tenure, that a thread of another node is queued for it.
class WantedTest : public MonitorTableTest {
 protected:
  WantedTest() {
    MonitorTable::Options o = NoLeases();
    o.wanted_notices = true;
    table_ = MonitorTable(o);
  }
  static int Wanted(const std::vector<Event>& ev, NodeId node) {
    int n = 0;
    for (const Event& e : ev) n += e.kind == Event::kWanted && e.node == node && e.object == kObj;
    return n;
  }
};

TEST_F(WantedTest, AHolderHearsOnceATenureThatAnotherNodeWantsIt) {
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_FALSE(ev[0].wanted_elsewhere);
  table_.Enter(1, kObj, T(2), now_, &out_, 0, true);
  ExpectNothing();  // its own node's thread: the monitor need not leave
  table_.Enter(2, kObj, T(3), now_, &out_, 0, true);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(1, Wanted(ev, 1));
  table_.Enter(3, kObj, T(4), now_, &out_, 0, true);
  ExpectNothing();  // told already this tenure
  // T(2)'s grant (FIFO: it was queued before the others) says so itself.
  table_.Exit(1, kObj, T(1), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(T(2), ev[0].thread);
  EXPECT_TRUE(ev[0].wanted_elsewhere);
  table_.Exit(1, kObj, T(2), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(T(3), ev[0].thread);
  EXPECT_TRUE(ev[0].wanted_elsewhere);  // T(4), on node 3
  EXPECT_EQ(1u, ev[0].from_node);
  table_.Exit(2, kObj, T(3), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(T(4), ev[0].thread);
  EXPECT_FALSE(ev[0].wanted_elsewhere);
  // A woken Object.wait waiter of another node wants it too.
  table_.Wait(3, kObj, T(4), 0, 0, kNoDeadline, now_, &out_);
  Take();  // nobody queued: free
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  Take();
  table_.Notify(1, kObj, T(1), 0, true, now_, &out_);
  EXPECT_EQ(1, Wanted(Take(), 1));
}

TEST_F(WantedTest, AGrantSaysWhetherObjectWaitersOfAnotherNodeWait) {
  table_.Enter(2, kObj, T(2), now_, &out_, 0, true);
  Take();
  table_.Wait(2, kObj, T(2), 0, 0, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_TRUE(ev[0].waiters_elsewhere);
  EXPECT_FALSE(ev[0].wanted_elsewhere);
  table_.Exit(1, kObj, T(1), now_, &out_);
  table_.Enter(2, kObj, T(3), now_, &out_, 0, true);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_FALSE(ev[0].waiters_elsewhere) << "its node's own waiter";
}

TEST_F(WantedTest, ASynchronizersGrantSaysWhetherAConditionsWaitersOfAnotherNodeWait) {
  // A shared ReentrantLock's enter (not grouped) and a Condition's await
  // (wait set 7): the holder's signal makes the waiter want the lock, so
  // its await's release hands its data over (the turn's one round trip).
  table_.Enter(2, kObj, T(2), now_, &out_);
  Take();
  table_.Wait(2, kObj, T(2), 7, 0, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(1), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_TRUE(ev[0].waiters_elsewhere);
  EXPECT_FALSE(ev[0].wanted_elsewhere);
  table_.Exit(1, kObj, T(1), now_, &out_);
  table_.Enter(2, kObj, T(3), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_FALSE(ev[0].waiters_elsewhere) << "its node's own waiter";
}

TEST_F(WantedTest, ASynchronizersHolderIsToldButNeitherSignalsNorLeases) {
  // A synchronizer's holder (a shared ReentrantLock's) hears it too: what
  // it wrote under the lock leaves with its release (the JVM hands over
  // only the JDK's objects then, Client::HandOver).
  table_.Enter(1, kObj, T(1), now_, &out_);  // a synchronizer's monitor
  Take();
  table_.Enter(2, kObj, T(2), now_, &out_, 0, true);
  EXPECT_EQ(1, Wanted(Take(), 1));
  table_.Exit(1, kObj, T(1), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_FALSE(ev[0].wanted_elsewhere) << "nobody else is queued";
  // A Signal wants no data.
  table_.Signal(3, kObj, T(3), 7, true, 0, now_, &out_);
  ExpectNothing();
  table_.Exit(2, kObj, T(2), now_, &out_);
  Take();
  // A lease's node hears a Recall, not this.
  MonitorTable::Options o;
  table_ = MonitorTable(o);
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  ASSERT_TRUE(ev[0].lease);
  table_.Enter(2, kObj, T(2), now_, &out_, 0, true);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(Event::kRecall, ev[0].kind);
}

TEST_F(MonitorTableTest, EntersNotGroupedKeepTheirTurnAndEndTheGroup) {
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  ExpectGrant(1, T(1), Wake::kAcquired);
  table_.Enter(2, kObj, T(2), now_, &out_, 0, true);
  table_.Enter(2, kObj, T(3), now_, &out_);  // a synchronizer's: FIFO
  table_.Enter(2, kObj, T(4), now_, &out_, 0, true);
  table_.Exit(1, kObj, T(1), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(T(2), ev[0].thread);
  EXPECT_TRUE(ev[0].successors.empty()) << "T(4) is behind an enter that keeps its turn";
  table_.Exit(2, kObj, T(2), now_, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(T(3), ev[0].thread);
  EXPECT_TRUE(ev[0].successors.empty()) << "an enter not grouped has no successors";
}

TEST_F(MonitorTableTest, WokenObjectWaitersAreHandedOnAndAWaitNamesTheNext) {
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  ExpectGrant(1, T(1), Wake::kAcquired);
  table_.Wait(1, kObj, T(1), 0, 0, kNoDeadline, now_, &out_);
  table_.Enter(1, kObj, T(2), now_, &out_, 0, true);
  ExpectGrant(1, T(2), Wake::kAcquired);
  table_.Wait(1, kObj, T(2), 0, 0, kNoDeadline, now_, &out_);
  table_.Enter(2, kObj, T(3), now_, &out_, 0, true);
  ExpectGrant(2, T(3), Wake::kAcquired);
  table_.Notify(2, kObj, T(3), 0, true, now_, &out_);
  table_.Exit(2, kObj, T(3), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ(T(1), ev[0].thread);
  EXPECT_EQ(Wake::kNotified, ev[0].reason);
  ASSERT_EQ(1u, ev[0].successors.size());
  EXPECT_EQ(T(2), ev[0].successors[0].thread);
  EXPECT_EQ(Wake::kNotified, ev[0].successors[0].reason);
  // T(1) waits again and hands the monitor to T(2) in the same step.
  ASSERT_EQ("", table_.Wait(1, kObj, T(1), 0, 0, kNoDeadline, now_, &out_, kNotInLine, T(2)));
  ExpectNothing();
  EXPECT_TRUE(table_.OwnerIs(kObj, T(2)));
  EXPECT_EQ(1u, table_.WaitSetSize(kObj));
}

TEST_F(MonitorTableTest, ASuccessorThatGivesUpIsPassedOver) {
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  ExpectGrant(1, T(1), Wake::kAcquired);
  table_.Enter(2, kObj, T(9), now_, &out_, 0, true);
  table_.Exit(1, kObj, T(1), now_, &out_);
  Take();
  table_.Enter(1, kObj, T(2), now_, &out_, 0, true);
  table_.Enter(1, kObj, T(3), now_, &out_, 0, true);
  table_.Exit(2, kObj, T(9), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ((std::vector<ThreadRef>{T(3)}), SuccessorsOf(ev[0]));
  table_.CancelEnter(1, kObj, T(3), now_, &out_);
  ExpectNothing();
  // A hand-off to it now is refused, and the monitor goes back to the
  // service as if none was named.
  EXPECT_NE("", table_.Exit(1, kObj, T(2), now_, &out_, T(3)));
  EXPECT_FALSE(table_.IsOwned(kObj));
}

TEST_F(MonitorTableTest, AReleaseThatNamesNobodyServesTheSuccessorsFirst) {
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  ExpectGrant(1, T(1), Wake::kAcquired);
  table_.Enter(2, kObj, T(2), now_, &out_, 0, true);
  table_.Enter(2, kObj, T(3), now_, &out_, 0, true);
  table_.Enter(1, kObj, T(4), now_, &out_, 0, true);
  table_.Exit(1, kObj, T(1), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ((std::vector<ThreadRef>{T(3)}), SuccessorsOf(ev[0]));
  // Queued first, in the grant's order: the query lists T(3) before T(4).
  table_.Query(2, kObj, T(2), 5, &out_);
  ev = Take();
  ASSERT_EQ(1u, ev.size());
  ASSERT_EQ(2u, ev[0].entering.size());
  EXPECT_EQ(T(3), ev[0].entering[0].thread);
  EXPECT_EQ(T(4), ev[0].entering[1].thread);
  table_.Exit(2, kObj, T(2), now_, &out_);
  ExpectGrant(2, T(3), Wake::kAcquired);
}

TEST_F(MonitorTableTest, ADeadNodesSuccessorsGoWithItAndAFailedProgramsAreFailed) {
  table_.Enter(1, kObj, T(1), now_, &out_, 0, true);
  Take();
  table_.Enter(2, kObj, T(3), now_, &out_, 0, true);
  table_.Enter(2, kObj, T(4), now_, &out_, 0, true);
  table_.Exit(1, kObj, T(1), now_, &out_);
  auto ev = Take();
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ((std::vector<ThreadRef>{T(4)}), SuccessorsOf(ev[0]));
  table_.NodeDown(2, "node 2 died", now_, &out_);
  EXPECT_FALSE(table_.IsOwned(kObj));
  EXPECT_EQ(0u, table_.EntryQueueLength(kObj));
  for (const Event& e : Take()) EXPECT_NE(Event::kGranted, e.kind);

  // A program that fails fails its successors' requests too.
  constexpr ObjectId kOther = 43;
  const ThreadRef a{8, 1}, b{8, 2}, c{8, 3};
  table_.Enter(3, kOther, a, now_, &out_, 0, true);
  table_.Enter(4, kOther, b, now_, &out_, 0, true);
  table_.Enter(4, kOther, c, now_, &out_, 0, true);
  table_.Exit(3, kOther, a, now_, &out_);
  Take();
  table_.NodeDown(3, "node 3 died", now_, &out_);
  bool c_failed = false;
  for (const Event& e : Take()) c_failed |= e.kind == Event::kFailed && e.thread == c;
  EXPECT_TRUE(c_failed);
  EXPECT_FALSE(table_.IsOwned(kOther));
}

}  // namespace
}  // namespace monitor
}  // namespace djava
