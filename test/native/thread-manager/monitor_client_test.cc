// The real MonitorClient against the real MonitorService, joined in one
// process by memory channels: Java monitor semantics end to end, several
// "nodes" (clients) and threads each.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "djava/monitor_client.h"
#include "inproc.h"
#include "monitor_capi_internal.h"
#include "monitor_client.h"

namespace djava {
namespace monitor {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
constexpr uint64_t kProg = 77;
constexpr uint64_t kObj = 1000;

std::unique_ptr<MonitorClient> NewNode(test::InProcMonitorHost* host,
                                       const std::string& name = "") {
  std::vector<std::unique_ptr<Channel>> shards;
  shards.push_back(host->Connect());
  return std::make_unique<MonitorClient>(std::move(shards), name);
}

// Continues a polled wait until it ends (DJAVA_MON_WAITING if it does not
// within about two seconds).
int WaitToEnd(MonitorClient* c, LocalThread t, int status) {
  for (int i = 0; i < 400 && status == DJAVA_MON_WAITING; i++) status = c->WaitMore(t, 5);
  return status;
}

// Whether the service comes to list n threads entering kObj (asked by t
// of node c) within about two seconds.
bool EnteringReaches(MonitorClient* c, LocalThread t, size_t n) {
  for (int i = 0; i < 400; i++) {
    MonitorState st;
    if (c->State(kObj, t, &st) == DJAVA_MON_OK && st.entering.size() == n) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return false;
}

class MonitorClientTest : public ::testing::TestWithParam<bool> {
 protected:
  MonitorClientTest() : host_(Opts()) {}
  MonitorTable::Options Opts() {
    MonitorTable::Options o;
    o.leases = GetParam();
    return o;
  }
  test::InProcMonitorHost host_;
};

TEST_P(MonitorClientTest, CounterUnderLockIsExact) {
  constexpr int kNodes = 3, kThreads = 3, kIters = 300;
  std::vector<std::unique_ptr<MonitorClient>> nodes;
  for (int n = 0; n < kNodes; n++) nodes.push_back(NewNode(&host_));
  long counter = 0;  // "shared": the lock is the only thing ordering access
  std::vector<std::thread> ts;
  for (int n = 0; n < kNodes; n++)
    for (int t = 0; t < kThreads; t++)
      ts.emplace_back([&, n, t] {
        LocalThread me{kProg, static_cast<uint64_t>(1 + n * 10 + t)};
        for (int i = 0; i < kIters; i++) {
          ASSERT_EQ(DJAVA_MON_OK, nodes[n]->Enter(kObj, me));
          ASSERT_EQ(DJAVA_MON_OK, nodes[n]->Enter(kObj, me));  // re-entry
          long v = counter;
          counter = v + 1;
          ASSERT_EQ(DJAVA_MON_OK, nodes[n]->Exit(kObj, me));
          ASSERT_EQ(DJAVA_MON_OK, nodes[n]->Exit(kObj, me));
        }
      });
  for (auto& t : ts) t.join();
  EXPECT_EQ(kNodes * kThreads * kIters, counter);
}

// The clocked simulation's shape: threads of two nodes meet on one monitor
// each round, the last wakes the others with notifyAll. With grouped enters
// the monitor passes among a node's threads there (node hand-offs).
TEST_P(MonitorClientTest, GroupedEntersAndWaitsKeepRoundsExact) {
  constexpr int kNodes = 2, kThreads = 2, kRounds = 200;
  std::vector<std::unique_ptr<MonitorClient>> nodes;
  for (int n = 0; n < kNodes; n++) nodes.push_back(NewNode(&host_));
  long arrived = 0, round = 0, inside = 0;  // guarded by the monitor alone
  std::vector<std::thread> ts;
  for (int n = 0; n < kNodes; n++)
    for (int t = 0; t < kThreads; t++)
      ts.emplace_back([&, n, t] {
        LocalThread me{kProg, static_cast<uint64_t>(1 + n * 10 + t)};
        MonitorClient* c = nodes[n].get();
        for (int k = 0; k < kRounds; k++) {
          ASSERT_EQ(DJAVA_MON_OK, c->EnterGrouped(kObj, me));
          ASSERT_EQ(0, inside++) << "two owners at once";
          long mine = round;
          if (++arrived == kNodes * kThreads) {
            arrived = 0;
            round++;
            ASSERT_EQ(DJAVA_MON_OK, c->Notify(kObj, me, true));
          } else {
            while (round == mine) {
              inside--;
              ASSERT_EQ(DJAVA_MON_OK, c->Wait(kObj, me, 0));
              ASSERT_EQ(0, inside++) << "two owners at once";
              ASSERT_EQ(1, c->Count(kObj, me));
            }
          }
          inside--;
          ASSERT_EQ(DJAVA_MON_OK, c->Exit(kObj, me));
        }
      });
  for (auto& t : ts) t.join();
  EXPECT_EQ(kRounds, round);
}

// Grouped enters of one node queued around another node's are granted
// together: the monitor passes from the first to the second in their node.
TEST_P(MonitorClientTest, ANodesGroupedEntersGoTogether) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread a1{kProg, 1}, a2{kProg, 2}, a3{kProg, 3}, b1{kProg, 4};
  ASSERT_EQ(DJAVA_MON_OK, a->EnterGrouped(kObj, a1));
  std::mutex mu;
  std::vector<uint64_t> order;
  auto queued = [&](size_t n) { return EnteringReaches(b.get(), b1, n); };
  auto enter = [&](MonitorClient* c, LocalThread t) {
    return std::thread([&, c, t] {
      ASSERT_EQ(DJAVA_MON_OK, c->EnterGrouped(kObj, t));
      {
        std::lock_guard<std::mutex> l(mu);
        order.push_back(t.thread);
      }
      ASSERT_EQ(DJAVA_MON_OK, c->Exit(kObj, t));
    });
  };
  std::thread t2 = enter(a.get(), a2);
  ASSERT_TRUE(queued(1));
  std::thread t4 = enter(b.get(), b1);
  ASSERT_TRUE(queued(2));
  std::thread t3 = enter(a.get(), a3);
  ASSERT_TRUE(queued(3));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
  t2.join();
  t3.join();
  t4.join();
  EXPECT_EQ((std::vector<uint64_t>{2, 3, 4}), order);
}

// A successor whose enter is given up is passed over, and the monitor goes
// back to the service when no successor is left.
TEST_P(MonitorClientTest, ASuccessorCancelledIsPassedOver) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread a1{kProg, 1}, a2{kProg, 2}, b1{kProg, 3};
  ASSERT_EQ(DJAVA_MON_OK, b->EnterGrouped(kObj, b1));
  std::atomic<int> a2_status{-1};
  std::promise<void> a1_in, a1_go;
  std::thread t1([&] {
    ASSERT_EQ(DJAVA_MON_OK, a->EnterGrouped(kObj, a1));
    a1_in.set_value();
    a1_go.get_future().wait();
    ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
  });
  auto queued = [&](size_t n) { return EnteringReaches(b.get(), b1, n); };
  ASSERT_TRUE(queued(1));
  std::thread t2([&] { a2_status = a->EnterGrouped(kObj, a2); });
  ASSERT_TRUE(queued(2));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, b1));  // to a1, a2 its successor
  a1_in.get_future().wait();
  ASSERT_EQ(DJAVA_MON_OK, a->Cancel(a2));
  t2.join();
  EXPECT_EQ(DJAVA_MON_CANCELLED, a2_status.load());
  a1_go.set_value();
  t1.join();
  // Free again: another node's enter is granted.
  ASSERT_EQ(DJAVA_MON_OK, b->EnterGrouped(kObj, b1));
  EXPECT_EQ(1, b->Count(kObj, b1));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, b1));
}

TEST_P(MonitorClientTest, NotOwnerIsIllegalMonitorState) {
  auto a = NewNode(&host_);
  LocalThread t{kProg, 1};
  EXPECT_EQ(DJAVA_MON_NOT_OWNER, a->Exit(kObj, t));
  EXPECT_EQ(DJAVA_MON_NOT_OWNER, a->Wait(kObj, t, 0));
  EXPECT_EQ(DJAVA_MON_NOT_OWNER, a->Notify(kObj, t, false));
}

TEST_P(MonitorClientTest, WaitNotifyAcrossNodesRestoresCount) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  std::atomic<bool> ready{false};
  int status = -1;
  std::thread waiter([&] {
    a->Enter(kObj, ta);
    a->Enter(kObj, ta);
    ready = true;
    status = a->Wait(kObj, ta, 0);
    EXPECT_EQ(2, a->Count(kObj, ta));
    a->Exit(kObj, ta);
    a->Exit(kObj, ta);
  });
  while (!ready) std::this_thread::sleep_for(milliseconds(1));
  // The waiter released the monitor fully: b can get it, and notify.
  std::this_thread::sleep_for(milliseconds(20));
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Notify(kObj, tb, true));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  waiter.join();
  EXPECT_EQ(DJAVA_MON_OK, status);
}

TEST_P(MonitorClientTest, TimedWaitReturnsOnTime) {
  auto a = NewNode(&host_);
  LocalThread t{kProg, 1};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t));
  auto start = steady_clock::now();
  EXPECT_EQ(DJAVA_MON_TIMED_OUT, a->Wait(kObj, t, 50));
  auto ms = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start).count();
  EXPECT_GE(ms, 50);
  EXPECT_LT(ms, 2000);
  EXPECT_EQ(1, a->Count(kObj, t));
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, t));
}

TEST_P(MonitorClientTest, InterruptFromAnotherNodeWakesWaiter) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread t{kProg, 1};
  int status = -1;
  std::thread waiter([&] {
    a->Enter(kObj, t);
    status = a->Wait(kObj, t, 0);
    a->Exit(kObj, t);
  });
  std::this_thread::sleep_for(milliseconds(50));
  ASSERT_EQ(DJAVA_MON_OK, b->Interrupt(t));
  waiter.join();
  EXPECT_EQ(DJAVA_MON_INTERRUPTED, status);
}

// The wait the JVM uses: it returns to poll the thread's own state while the
// thread stays in the wait set. A notify that comes while the waiter is
// between two polls (not blocked in the client at all) still ends the wait:
// the window in which the JVM's old sliced waits lost notifications.
TEST_P(MonitorClientTest, PolledWaitKeepsANotifyThatComesBetweenPolls) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  ASSERT_EQ(DJAVA_MON_WAITING, a->Wait(kObj, ta, 0, 5));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitMore(ta, 5));
  // The waiter is "in the JVM" now; b notifies meanwhile.
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Notify(kObj, tb, false));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  int status = DJAVA_MON_WAITING;
  for (int i = 0; i < 400 && status == DJAVA_MON_WAITING; i++) status = a->WaitMore(ta, 5);
  EXPECT_EQ(DJAVA_MON_OK, status);
  EXPECT_EQ(1, a->Count(kObj, ta));
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
  // Nothing is left pending for the thread.
  EXPECT_EQ(DJAVA_MON_BAD_ARGUMENT, a->WaitMore(ta, 0));
}

// The caller's timeout is the service's, however many polls it takes.
TEST_P(MonitorClientTest, PolledTimedWaitTimesOutOnceWithTheMonitorHeld) {
  auto a = NewNode(&host_);
  LocalThread t{kProg, 1};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t));
  auto start = steady_clock::now();
  int polls = 0;
  int status = a->Wait(kObj, t, 60, 5);
  for (; status == DJAVA_MON_WAITING && polls < 1000; polls++) status = a->WaitMore(t, 5);
  auto ms = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start).count();
  EXPECT_EQ(DJAVA_MON_TIMED_OUT, status);
  EXPECT_GE(ms, 60);
  EXPECT_GE(polls, 2);
  EXPECT_EQ(1, a->Count(kObj, t));
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, t));
}

// What the JVM does when a poll finds the thread interrupted (on any node):
// it interrupts its own wait, which then ends INTERRUPTED, monitor held.
TEST_P(MonitorClientTest, PolledWaitEndsWhenTheWaiterInterruptsItself) {
  auto a = NewNode(&host_);
  LocalThread t{kProg, 1};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t));
  ASSERT_EQ(DJAVA_MON_WAITING, a->Wait(kObj, t, 0, 5));
  ASSERT_EQ(DJAVA_MON_OK, a->Interrupt(t));
  int status = DJAVA_MON_WAITING;
  for (int i = 0; i < 400 && status == DJAVA_MON_WAITING; i++) status = a->WaitMore(t, 5);
  EXPECT_EQ(DJAVA_MON_INTERRUPTED, status);
  EXPECT_EQ(1, a->Count(kObj, t));
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, t));
}

// A poke (the JVM's: the thread was interrupted) ends the poll it falls in
// at once, and a poke between two polls the next one: the JVM looks at the
// thread's interrupt status then, not a poll interval later. The wait goes
// on until the JVM decides; the poll here is far longer than the test.
TEST_P(MonitorClientTest, APokeEndsTheCurrentOrNextPollAtOnce) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  constexpr int64_t kLongPoll = 600000;
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  std::promise<int> first;
  std::thread waiter([&] { first.set_value(a->Wait(kObj, ta, 0, kLongPoll)); });
  auto f = first.get_future();
  // Poked while it polls (or, if the poke comes first, before it does).
  std::this_thread::sleep_for(milliseconds(20));
  a->Poke(ta.thread);
  ASSERT_EQ(f.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  waiter.join();
  EXPECT_EQ(DJAVA_MON_WAITING, f.get());
  // Between two polls: the next returns at once, still in the wait set.
  a->Poke(ta.thread);
  EXPECT_EQ(DJAVA_MON_WAITING, a->WaitMore(ta, kLongPoll));
  // A poke of another thread, or of no thread, ends nothing.
  a->Poke(tb.thread);
  a->Poke(99);
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Notify(kObj, tb, false));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  EXPECT_EQ(DJAVA_MON_OK, a->WaitMore(ta, -1)) << "still in the wait set: notified";
  EXPECT_EQ(1, a->Count(kObj, ta));
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
}

// What PrintDistributedStatistics shows of the monitor traffic: each
// request and event counted by its kind.
TEST_P(MonitorClientTest, TrafficIsCountedByKind) {
  auto a = NewNode(&host_);
  LocalThread t{kProg, 1};
  EXPECT_EQ(std::string::npos, a->TrafficByKind().find("enter"));
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, t));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  const std::string text = a->TrafficByKind();
  EXPECT_NE(std::string::npos, text.find("sent enter 1,")) << text;
  EXPECT_NE(std::string::npos, text.find("ping 1")) << text;
  EXPECT_NE(std::string::npos, text.find("received granted 1,")) << text;
  EXPECT_NE(std::string::npos, text.find("pong 1")) << text;
  // Under a lease the exit stays here.
  EXPECT_EQ(!GetParam(), text.find("exit 1") != std::string::npos) << text;
}

TEST_P(MonitorClientTest, PolledWaitCancelledBetweenPolls) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  ASSERT_EQ(DJAVA_MON_WAITING, a->Wait(kObj, ta, 0, 5));
  ASSERT_EQ(DJAVA_MON_OK, a->Cancel(ta));
  EXPECT_EQ(DJAVA_MON_CANCELLED, a->WaitMore(ta, 5));
  EXPECT_EQ(0, a->Count(kObj, ta));
  // The waiter left the wait set: a notify has nobody to wake, and the
  // monitor is free.
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Notify(kObj, tb, true));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
}

TEST_P(MonitorClientTest, CancelEndsABlockedEnter) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  int status = -1;
  std::thread blocked([&] { status = b->Enter(kObj, tb); });
  std::this_thread::sleep_for(milliseconds(30));
  b->Cancel(tb);
  blocked.join();
  EXPECT_EQ(DJAVA_MON_CANCELLED, status);
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
  // The monitor is free for others afterwards.
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
}

TEST_P(MonitorClientTest, NodeDeathWhileHoldingFailsTheProgramNotHangs) {
  auto a = NewNode(&host_, "doomed-node:123"), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  int status = -1;
  std::thread blocked([&] {
    status = b->Enter(kObj, tb);
    EXPECT_NE(std::string::npos, MonitorClient::LastError().find("doomed-node:123"))
        << MonitorClient::LastError();
  });
  std::this_thread::sleep_for(milliseconds(30));
  a.reset();  // node a dies holding the monitor
  blocked.join();
  EXPECT_EQ(DJAVA_MON_FAILED, status);
  EXPECT_EQ(DJAVA_MON_FAILED, b->Enter(kObj, tb));
  // Another program is unaffected.
  LocalThread other{kProg + 1, 1};
  EXPECT_EQ(DJAVA_MON_OK, b->Enter(kObj, other));
  EXPECT_EQ(DJAVA_MON_OK, b->Exit(kObj, other));
}

TEST_P(MonitorClientTest, ServiceGoneEndsBlockedCalls) {
  auto pipe = test::MakePipe();  // a "service" that never answers, then dies
  std::vector<std::unique_ptr<Channel>> shards;
  shards.push_back(std::move(pipe.first));
  MonitorClient c(std::move(shards));
  int status = -1;
  std::thread blocked([&] { status = c.Enter(kObj, LocalThread{kProg, 1}); });
  std::this_thread::sleep_for(milliseconds(20));
  pipe.second->Shutdown();
  blocked.join();
  EXPECT_EQ(DJAVA_MON_IO, status);
}

// djava_monitor_disconnect: a leaving JVM closes the client while other
// threads are blocked in it or still call it; the object outlives the close.
TEST_P(MonitorClientTest, CloseEndsBlockedWaitsAndLaterCallsFailWithoutHanging) {
  auto a = NewNode(&host_);
  LocalThread waiter{kProg, 1}, late{kProg, 2};
  int status = -1;
  std::thread blocked([&] {
    ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, waiter));
    status = a->Wait(kObj, waiter, 0);
  });
  std::this_thread::sleep_for(milliseconds(50));
  a->Close();
  blocked.join();
  EXPECT_EQ(DJAVA_MON_IO, status);
  EXPECT_EQ(DJAVA_MON_IO, a->Enter(kObj + 1, late));
  // Other programs go on (this one failed: its node left holding a monitor).
  auto b = NewNode(&host_);
  LocalThread other{kProg + 1, 1};
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, other));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, other));
}

TEST_P(MonitorClientTest, ProgramEndFreesMonitors) {
  auto a = NewNode(&host_);
  LocalThread t{kProg, 1};
  a->Enter(kObj, t);
  a->Enter(kObj + 1, t);
  EXPECT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(2u, host_.MonitorCount());
  a->FreeProgram(kProg);
  a->Ping();
  EXPECT_EQ(0u, host_.MonitorCount());
}

// ---- keyed wait sets, signals, queries ----------------------------------------

TEST_P(MonitorClientTest, KeyedWaitsAreWokenOnlyByTheirKey) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread t0{kProg, 1}, t5{kProg, 2}, t6{kProg, 3}, tb{kProg, 9};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t0));
  ASSERT_EQ(DJAVA_MON_WAITING, a->Wait(kObj, t0, 0, 0));  // Object.wait's set
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t5));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, t5, 5, 0, 0, 0));
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t6));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, t6, 6, 0, 0, 0));
  // notifyAll of key 0 wakes t0 only.
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->NotifyKeyed(kObj, tb, 0, true));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, WaitToEnd(a.get(), t0, DJAVA_MON_WAITING));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, t0));
  // The monitor is free now: had a keyed waiter been woken, its grant would
  // come before the Pong.
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitMore(t5, 0));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitMore(t6, 0));
  // A notifyAll of key 5 wakes t5, not t6 (nor a key-0 waiter).
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t0));
  ASSERT_EQ(DJAVA_MON_WAITING, a->Wait(kObj, t0, 0, 0));
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->NotifyKeyed(kObj, tb, 5, true));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, WaitToEnd(a.get(), t5, DJAVA_MON_WAITING));
  EXPECT_EQ(1, a->Count(kObj, t5));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, t5));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitMore(t0, 0));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitMore(t6, 0));
  ASSERT_EQ(DJAVA_MON_OK, a->Cancel(t0));
  ASSERT_EQ(DJAVA_MON_OK, a->Cancel(t6));
}

// An acquirer's place in line survives its wake-up: the grant reports it,
// and waiting again there puts it ahead of a thread that waited meanwhile.
TEST_P(MonitorClientTest, AWokenAcquirerWaitsAgainAtItsPlaceInLine) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2}, ts{kProg, 3};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, ta, 2, 101, 0, 0, UINT64_MAX));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());  // the service has the wait
  ASSERT_EQ(DJAVA_MON_OK, b->Signal(kObj, ts, 2, true));  // ta re-enters...
  int entered = b->EnterPolled(kObj, tb, 102, 0, 0);     // ...ahead of tb
  ASSERT_EQ(DJAVA_MON_OK, WaitToEnd(a.get(), ta, DJAVA_MON_WAITING));
  MonitorClient::LinePlace p = MonitorClient::LastPlace();
  EXPECT_EQ(1u, p.place);
  EXPECT_TRUE(p.first);
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, ta, 2, 101, 0, 0, p.place));
  while (entered == DJAVA_MON_WAITING) entered = b->EnterMore(tb, 5);
  ASSERT_EQ(DJAVA_MON_OK, entered);
  ASSERT_EQ(DJAVA_MON_WAITING, b->WaitKeyed(kObj, tb, 2, 102, 0, 0, UINT64_MAX));
  std::vector<KeyedWaiter> waiters;
  ASSERT_EQ(DJAVA_MON_OK, b->Queue(kObj, ts, &waiters));
  ASSERT_EQ(2u, waiters.size());
  EXPECT_EQ(101u, waiters[0].java_thread) << "ta kept its place";
  EXPECT_EQ(102u, waiters[1].java_thread);
  ASSERT_EQ(DJAVA_MON_OK, a->Cancel(ta));
  ASSERT_EQ(DJAVA_MON_OK, b->Cancel(tb));
}

// An acquirer's timed wait in line ends at its deadline without the
// monitor while another thread holds it (a lock's holder keeps the
// synchronizer's monitor for as long as it holds the lock): the waiter
// needs it back only to look at the synchronizer again. The service keeps
// nothing of it, and its next enter is served as any other.
TEST_P(MonitorClientTest, ATimedWaitInLineEndsAtItsDeadlineWhileAnotherOwns) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, ta, 2, 101, 30, 0, DJAVA_MON_NEW_PLACE));
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  EXPECT_EQ(DJAVA_MON_CANCELLED, WaitToEnd(a.get(), ta, DJAVA_MON_WAITING));
  EXPECT_EQ(0, a->Count(kObj, ta));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  std::vector<KeyedWaiter> waiters;
  ASSERT_EQ(DJAVA_MON_OK, b->Queue(kObj, tb, &waiters));
  EXPECT_TRUE(waiters.empty());
  EXPECT_TRUE(host_.WithTable([&](const MonitorTable& t) { return t.OwnerIs(kObj, ThreadRef{tb.program, tb.thread}); }));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  EXPECT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  EXPECT_EQ(1, a->Count(kObj, ta));
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
}

// The same for an acquirer a release woke: queued to re-enter behind the
// holder, it leaves the queue at its deadline, and the holder's exit
// leaves the monitor free.
TEST_P(MonitorClientTest, AWokenAcquirerLeavesTheQueueAtItsDeadline) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, ta, 2, 101, 100, 0, DJAVA_MON_NEW_PLACE));
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->NotifyKeyed(kObj, tb, 2, true));
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());
  EXPECT_EQ(1u, host_.WithTable([](const MonitorTable& t) { return t.EntryQueueLength(kObj); }));
  EXPECT_EQ(DJAVA_MON_CANCELLED, WaitToEnd(a.get(), ta, DJAVA_MON_WAITING));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(0u, host_.WithTable([](const MonitorTable& t) { return t.EntryQueueLength(kObj); }));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());
  EXPECT_FALSE(host_.WithTable([](const MonitorTable& t) { return t.IsOwned(kObj); }));
  EXPECT_EQ(0, a->Count(kObj, ta));
}

// No lease while anyone waits: otherwise the holder's notify, a local no-op
// under a lease, would be lost.
TEST_P(MonitorClientTest, NotifyReachesAWaiterWhenLeasesAreOn) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, ta, 5, 0, 0, 0));
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  EXPECT_FALSE(host_.WithTable([](const MonitorTable& t) { return t.IsLeased(kObj); }));
  ASSERT_EQ(DJAVA_MON_OK, b->NotifyKeyed(kObj, tb, 5, false));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  EXPECT_EQ(DJAVA_MON_OK, WaitToEnd(a.get(), ta, DJAVA_MON_WAITING));
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
}

// The pattern signals exist for: the waiter checks its condition while it
// owns the monitor, then waits; the signaller does not own the monitor. The
// signal waits for the monitor's next free turn -- the wait -- so it is not
// lost in between.
TEST_P(MonitorClientTest, SignalWhileAnotherNodeOwnsIsAppliedWhenTheOwnerWaits) {
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));  // checked: not yet
  ASSERT_EQ(DJAVA_MON_OK, b->Signal(kObj, tb, 5, false));
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());
  EXPECT_EQ(1u, host_.WithTable([](const MonitorTable& t) { return t.EntryQueueLength(kObj); }));
  EXPECT_EQ(DJAVA_MON_OK, WaitToEnd(a.get(), ta, a->WaitKeyed(kObj, ta, 5, 0, 0, 5)));
  EXPECT_EQ(1, a->Count(kObj, ta));
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
}

// The same with the signaller on the owner's node, which may hold the lease:
// the signal goes to the service anyway, which recalls the lease from this
// very node.
TEST_P(MonitorClientTest, SignalFromTheOwnersNodeIsAppliedWhenTheOwnerWaits) {
  auto a = NewNode(&host_);
  LocalThread owner{kProg, 1}, signaller{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, owner));
  ASSERT_EQ(DJAVA_MON_OK, a->Signal(kObj, signaller, 5, false));
  EXPECT_EQ(DJAVA_MON_OK, WaitToEnd(a.get(), owner, a->WaitKeyed(kObj, owner, 5, 0, 0, 5)));
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, owner));
  // And a signal by the owner itself is served after its own exit.
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, owner));
  ASSERT_EQ(DJAVA_MON_OK, a->Signal(kObj, owner, 0, true));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, owner));
  // Under a lease the exit may come before the recall, which the node then
  // answers before it reads the first Pong: the second follows the return.
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(0u, host_.WithTable([](const MonitorTable& t) { return t.EntryQueueLength(kObj); }));
}

// A semaphore as java.util.concurrent builds one on a shared object: the
// permits change outside the monitor (an atomic here), a release signals, an
// acquirer checks under the monitor and waits in its own wait set. No signal
// may be lost between an acquirer's check and its wait: a lost one would
// leave a permit unused and its acquirer waiting until its timeout.
TEST_P(MonitorClientTest, SemaphoreOnSignalsLosesNoWakeUp) {
  constexpr int kAcquirerNodes = 2, kAcquirersPerNode = 2, kPermitsEach = 40;
  constexpr uint64_t kAcquirers = 1;  // the wait set's key
  std::vector<std::unique_ptr<MonitorClient>> nodes;
  for (int n = 0; n < kAcquirerNodes + 1; n++) nodes.push_back(NewNode(&host_));
  std::atomic<int> permits{0}, timed_out{0}, errors{0};
  std::vector<std::thread> ts;
  for (int n = 0; n < kAcquirerNodes; n++)
    for (int i = 0; i < kAcquirersPerNode; i++)
      ts.emplace_back([&, n, i] {
        LocalThread me{kProg, static_cast<uint64_t>(10 + n * 10 + i)};
        for (int k = 0; k < kPermitsEach; k++) {
          if (nodes[n]->Enter(kObj, me) != DJAVA_MON_OK) return void(errors++);
          for (;;) {
            int p = permits.load();
            if (p > 0 && permits.compare_exchange_strong(p, p - 1)) break;
            // A slow check widens the window a signal must not be lost in.
            std::this_thread::sleep_for(std::chrono::microseconds(300));
            int st = nodes[n]->WaitKeyed(kObj, me, kAcquirers, me.thread, 5000);
            if (st == DJAVA_MON_TIMED_OUT) timed_out++;
            if (st != DJAVA_MON_OK && st != DJAVA_MON_TIMED_OUT) return void(errors++);
          }
          if (nodes[n]->Exit(kObj, me) != DJAVA_MON_OK) return void(errors++);
        }
      });
  for (int i = 0; i < 2; i++)
    ts.emplace_back([&, i] {
      LocalThread me{kProg, static_cast<uint64_t>(100 + i)};
      MonitorClient* releaser = nodes[kAcquirerNodes].get();
      for (int k = 0; k < kAcquirerNodes * kAcquirersPerNode * kPermitsEach / 2; k++) {
        permits++;
        if (releaser->Signal(kObj, me, kAcquirers, false) != DJAVA_MON_OK) return void(errors++);
        std::this_thread::sleep_for(std::chrono::microseconds(k % 2 ? 100 : 700));
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(0, errors.load()) << MonitorClient::LastError();
  EXPECT_EQ(0, timed_out.load());
  EXPECT_EQ(0, permits.load());
}

TEST_P(MonitorClientTest, SignalLeavesTheLeaseAndThenCostsNoMessage) {
  const bool leases = GetParam();
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2};
  ASSERT_EQ(DJAVA_MON_OK, a->Signal(kObj, ta, 5, true));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());  // the Granted, if any, came before the Pong
  monitor::NodeId holder = 0;
  EXPECT_EQ(leases, host_.WithTable([&](const MonitorTable& t) {
    return t.IsLeased(kObj, &holder);
  }));
  size_t before = host_.Requests();
  ASSERT_EQ(DJAVA_MON_OK, a->Signal(kObj, ta, 5, true));
  std::vector<KeyedWaiter> waiters{KeyedWaiter{}};
  ASSERT_EQ(DJAVA_MON_OK, a->Queue(kObj, ta, &waiters));
  EXPECT_TRUE(waiters.empty());
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  // Only the ping (without leases: the signal, the query and the ping).
  ASSERT_EQ(before + (leases ? 1 : 3), host_.Requests());
  // Under the lease, enter, notify and exit are local too.
  before = host_.Requests();
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  ASSERT_EQ(DJAVA_MON_OK, a->NotifyKeyed(kObj, ta, 5, true));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(before + (leases ? 1 : 4), host_.Requests());
  // Another node still gets the monitor (recalling the lease).
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
}

TEST_P(MonitorClientTest, QueueListsKeyedWaitersLongestFirstWithTheirThreads) {
  auto a = NewNode(&host_), b = NewNode(&host_), c = NewNode(&host_);
  LocalThread t1{kProg, 1}, t2{kProg, 2}, t3{kProg, 3}, tc{kProg, 4};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t1));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, t1, 5, 501, 0, 0));
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, t2));
  ASSERT_EQ(DJAVA_MON_WAITING, b->Wait(kObj, t2, 0, 0));  // Object.wait: not listed
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, t3));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, t3, 6, 503, 0, 0));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());  // the waits reached the service
  std::vector<KeyedWaiter> w;
  ASSERT_EQ(DJAVA_MON_OK, c->Queue(kObj, tc, &w));  // tc owns nothing
  ASSERT_EQ(2u, w.size());
  EXPECT_EQ(5u, w[0].key);
  EXPECT_EQ(501u, w[0].java_thread);
  EXPECT_EQ(t1, w[0].thread);
  EXPECT_EQ(6u, w[1].key);
  EXPECT_EQ(503u, w[1].java_thread);
  EXPECT_EQ(t3, w[1].thread);
  ASSERT_EQ(DJAVA_MON_OK, c->Queue(kObj + 1, tc, &w));  // a monitor nobody used
  EXPECT_TRUE(w.empty());
  // The C ABI: up to cap entries, and the total.
  djava_monitor_client capi;
  capi.impl = std::move(c);
  uint64_t keys[1] = {0}, threads[1] = {0};
  EXPECT_EQ(2, djava_monitor_queue(&capi, kObj, kProg, tc.thread, keys, threads, 1));
  EXPECT_EQ(5u, keys[0]);
  EXPECT_EQ(501u, threads[0]);
  EXPECT_EQ(2, djava_monitor_queue(&capi, kObj, kProg, tc.thread, nullptr, nullptr, 0));
  EXPECT_EQ(-1, djava_monitor_queue(&capi, kObj, kProg, tc.thread, nullptr, nullptr, 1));
  EXPECT_EQ(-1, djava_monitor_queue(nullptr, kObj, kProg, tc.thread, keys, threads, 1));
  // A signal through the C ABI wakes t3 (key 6) once a's threads are done.
  ASSERT_EQ(DJAVA_MON_OK, djava_monitor_signal(&capi, kObj, kProg, tc.thread, 6, 0, 0));
  EXPECT_EQ(DJAVA_MON_OK, WaitToEnd(a.get(), t3, DJAVA_MON_WAITING));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, t3));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(1, djava_monitor_queue(&capi, kObj, kProg, tc.thread, keys, threads, 1));
  EXPECT_EQ(501u, threads[0]);
  ASSERT_EQ(DJAVA_MON_OK, a->Cancel(t1));
  ASSERT_EQ(DJAVA_MON_OK, b->Cancel(t2));
}

TEST_P(MonitorClientTest, QueueEndsWhenTheServiceGoesOrTheProgramFails) {
  auto pipe = test::MakePipe();  // a "service" that never answers a query
  std::vector<std::unique_ptr<Channel>> shards;
  shards.push_back(std::move(pipe.first));
  MonitorClient c(std::move(shards));
  std::vector<KeyedWaiter> w;
  std::string error;
  auto query = std::async(std::launch::async, [&] {
    int st = c.Queue(kObj, LocalThread{kProg, 1}, &w);
    error = MonitorClient::LastError();
    return st;
  });
  std::this_thread::sleep_for(milliseconds(20));
  monitorpb::MonitorEvent failed;
  failed.mutable_failed()->mutable_thread()->set_program(kProg);  // thread 0: all of it
  failed.mutable_failed()->set_error("program failed for the test");
  ASSERT_TRUE(pipe.second->Send(failed));
  if (query.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "the program's failure did not end its query";
    pipe.second->Shutdown();  // so that the query ends and the test does not hang
  }
  EXPECT_EQ(DJAVA_MON_FAILED, query.get());
  EXPECT_EQ("program failed for the test", error);
  int status = -1;
  std::thread blocked2([&] { status = c.Queue(kObj, LocalThread{kProg + 1, 1}, &w); });
  std::this_thread::sleep_for(milliseconds(20));
  pipe.second->Shutdown();
  blocked2.join();
  EXPECT_EQ(DJAVA_MON_IO, status);
}

// ---- timed, polled and try enters; monitor state ------------------------------

// Continues a polled enter until it ends (DJAVA_MON_WAITING if it does not
// within about two seconds).
int EnterToEnd(MonitorClient* c, LocalThread t, int status) {
  for (int i = 0; i < 400 && status == DJAVA_MON_WAITING; i++) status = c->EnterMore(t, 5);
  return status;
}

size_t EntryQueue(test::InProcMonitorHost* host) {
  return host->WithTable([](const MonitorTable& t) { return t.EntryQueueLength(kObj); });
}

// Waits (up to two seconds) until the service has `n` requests queued to
// enter kObj.
bool QueuedAtService(test::InProcMonitorHost* host, size_t n) {
  for (int i = 0; i < 2000; i++) {
    if (EntryQueue(host) == n) return true;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return false;
}

long MsSince(steady_clock::time_point start) {
  return static_cast<long>(
      std::chrono::duration_cast<milliseconds>(steady_clock::now() - start).count());
}

TEST_P(MonitorClientTest, TimedEnterGivesUpLeavingNothingHeldOrQueued) {
  auto a = NewNode(&host_), b = NewNode(&host_), c = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2}, tc{kProg, 3};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  auto start = steady_clock::now();
  EXPECT_EQ(DJAVA_MON_TIMED_OUT, b->EnterPolled(kObj, tb, 202, 50, -1));
  EXPECT_GE(MsSince(start), 50);
  EXPECT_LT(MsSince(start), 2000);
  EXPECT_EQ(0, b->Count(kObj, tb));
  EXPECT_EQ(DJAVA_MON_BAD_ARGUMENT, b->EnterMore(tb, 0));  // nothing left pending
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());  // its CancelEnter reached the service
  EXPECT_EQ(0u, EntryQueue(&host_));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
  // Nobody is left before c: it gets the monitor at once.
  start = steady_clock::now();
  EXPECT_EQ(DJAVA_MON_OK, c->EnterPolled(kObj, tc, 0, 2000, -1));
  EXPECT_LT(MsSince(start), 1000);
  ASSERT_EQ(DJAVA_MON_OK, c->Exit(kObj, tc));
  // Polled with a deadline: WAITING at each poll, then TIMED_OUT once.
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  start = steady_clock::now();
  int polls = 0;
  int status = b->EnterPolled(kObj, tb, 0, 60, 5);
  for (; status == DJAVA_MON_WAITING && polls < 1000; polls++) status = b->EnterMore(tb, 5);
  EXPECT_EQ(DJAVA_MON_TIMED_OUT, status);
  EXPECT_GE(MsSince(start), 60);
  EXPECT_GE(polls, 2);
  EXPECT_EQ(0, b->Count(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
  EXPECT_EQ(DJAVA_MON_OK, c->EnterPolled(kObj, tc, 0, 2000, -1));
  ASSERT_EQ(DJAVA_MON_OK, c->Exit(kObj, tc));
  EXPECT_EQ(DJAVA_MON_BAD_ARGUMENT, b->EnterPolled(kObj, tb, 0, -1, -1));
}

// The owner releases about when the enter's deadline passes: whether the
// grant or the timeout wins, the monitor is never left owned by the thread
// that gave up (another node then enters without waiting for it).
TEST_P(MonitorClientTest, AGrantRacingTheDeadlineIsHandedBack) {
  auto a = NewNode(&host_), b = NewNode(&host_), c = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2}, tc{kProg, 3};
  int granted = 0, timed_out = 0;
  for (int i = 0; i < 40; i++) {
    ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
    std::thread releaser([&, i] {
      std::this_thread::sleep_for(std::chrono::microseconds(18000 + i * 100));
      EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
    });
    int st = b->EnterPolled(kObj, tb, 0, 20, -1);
    releaser.join();
    if (st == DJAVA_MON_OK) {
      granted++;
      ASSERT_EQ(1, b->Count(kObj, tb));
      ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
    } else {
      ASSERT_EQ(DJAVA_MON_TIMED_OUT, st) << i;
      timed_out++;
      ASSERT_EQ(0, b->Count(kObj, tb));
    }
    ASSERT_EQ(DJAVA_MON_OK, c->EnterPolled(kObj, tc, 0, 2000, -1)) << "round " << i;
    ASSERT_EQ(DJAVA_MON_OK, c->Exit(kObj, tc));
  }
  EXPECT_EQ(40, granted + timed_out);
}

TEST_P(MonitorClientTest, PolledEnterReturnsWaitingUntilGranted) {
  auto a = NewNode(&host_), b = NewNode(&host_), c = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2}, tc{kProg, 3};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  auto start = steady_clock::now();
  ASSERT_EQ(DJAVA_MON_WAITING, b->EnterPolled(kObj, tb, 202, 0, 20));
  EXPECT_GE(MsSince(start), 20);
  ASSERT_EQ(DJAVA_MON_WAITING, b->EnterMore(tb, 5));
  ASSERT_EQ(DJAVA_MON_WAITING, b->EnterMore(tb, 0));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));  // the grant comes between polls
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(DJAVA_MON_OK, EnterToEnd(b.get(), tb, DJAVA_MON_WAITING));
  EXPECT_EQ(1, b->Count(kObj, tb));
  MonitorState st;
  ASSERT_EQ(DJAVA_MON_OK, c->State(kObj, tc, &st));
  EXPECT_TRUE(st.owned);
  EXPECT_EQ(GetParam() ? 0u : 202u, st.owner_java_thread);  // b's lease hides its owner
  EXPECT_EQ(DJAVA_MON_OK, b->EnterPolled(kObj, tb, 202, 0, 0));  // re-entry: at once
  EXPECT_EQ(2, b->Count(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  EXPECT_EQ(DJAVA_MON_BAD_ARGUMENT, b->EnterMore(tb, 0));
  // A wait in progress is no enter to continue.
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
  ASSERT_EQ(DJAVA_MON_WAITING, b->Wait(kObj, tb, 0, 0));
  EXPECT_EQ(DJAVA_MON_BAD_ARGUMENT, b->EnterMore(tb, 0));
  ASSERT_EQ(DJAVA_MON_OK, b->Cancel(tb));
  EXPECT_EQ(DJAVA_MON_CANCELLED, b->WaitMore(tb, 0));
}

TEST_P(MonitorClientTest, CancelEndsAPolledEnter) {
  auto a = NewNode(&host_), b = NewNode(&host_), c = NewNode(&host_);
  LocalThread ta{kProg, 1}, tb{kProg, 2}, tc{kProg, 3};
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta));
  // Between two polls.
  ASSERT_EQ(DJAVA_MON_WAITING, b->EnterPolled(kObj, tb, 0, 0, 5));
  ASSERT_EQ(DJAVA_MON_OK, b->Cancel(tb));
  EXPECT_EQ(DJAVA_MON_CANCELLED, b->EnterMore(tb, 5));
  EXPECT_EQ(DJAVA_MON_BAD_ARGUMENT, b->EnterMore(tb, 5));
  EXPECT_EQ(0, b->Count(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());  // its CancelEnter reached the service
  ASSERT_EQ(0u, EntryQueue(&host_));
  // Inside a blocked timed enter.
  int status = -1;
  std::thread blocked([&] { status = b->EnterPolled(kObj, tb, 0, 5000, -1); });
  EXPECT_TRUE(QueuedAtService(&host_, 1));
  EXPECT_EQ(DJAVA_MON_OK, b->Cancel(tb));
  blocked.join();
  EXPECT_EQ(DJAVA_MON_CANCELLED, status);
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());
  EXPECT_EQ(0u, EntryQueue(&host_));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta));
  EXPECT_EQ(DJAVA_MON_OK, c->EnterPolled(kObj, tc, 0, 2000, -1));
  ASSERT_EQ(DJAVA_MON_OK, c->Exit(kObj, tc));
}

TEST_P(MonitorClientTest, TryEnterIsOkOrBusyNeverQueuesNorRecalls) {
  const bool leases = GetParam();
  auto a = NewNode(&host_), b = NewNode(&host_);
  LocalThread ta1{kProg, 1}, ta2{kProg, 2}, tb{kProg, 3};
  EXPECT_EQ(DJAVA_MON_OK, a->TryEnter(kObj, ta1, 101));  // free at the service
  EXPECT_EQ(DJAVA_MON_OK, a->TryEnter(kObj, ta1, 101));  // re-entry
  EXPECT_EQ(2, a->Count(kObj, ta1));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(leases, host_.WithTable([](const MonitorTable& t) { return t.IsLeased(kObj); }));
  size_t before = host_.Requests();
  // Another thread of the owner's node: busy, decided here.
  EXPECT_EQ(DJAVA_MON_BUSY, a->TryEnter(kObj, ta2, 102));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(before + 1, host_.Requests());
  // Another node: one round trip, busy, nothing queued or held.
  EXPECT_EQ(DJAVA_MON_BUSY, b->TryEnter(kObj, tb, 103));
  EXPECT_EQ(0, b->Count(kObj, tb));
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());
  EXPECT_EQ(0u, EntryQueue(&host_));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta1));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta1));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  if (!leases) {
    EXPECT_EQ(DJAVA_MON_OK, b->TryEnter(kObj, tb, 103));  // free now
    ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
    return;
  }
  // a keeps its lease, idle: another node's try is busy and does not
  // recall it...
  EXPECT_EQ(DJAVA_MON_BUSY, b->TryEnter(kObj, tb, 103));
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());  // a recall would have come before the Pong
  EXPECT_TRUE(host_.WithTable([](const MonitorTable& t) { return t.IsLeased(kObj); }));
  // ...and a's own try under it costs no message.
  before = host_.Requests();
  EXPECT_EQ(DJAVA_MON_OK, a->TryEnter(kObj, ta2, 102));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta2));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(before + 1, host_.Requests());
  // Recalled while a's thread owns: busy for a's other threads, locally.
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, ta1));
  std::thread blocked([&] {
    EXPECT_EQ(DJAVA_MON_OK, b->Enter(kObj, tb));
    EXPECT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  });
  EXPECT_TRUE(QueuedAtService(&host_, 1));
  EXPECT_EQ(DJAVA_MON_OK, a->Ping());  // the Recall came before the Pong
  before = host_.Requests();
  EXPECT_EQ(DJAVA_MON_BUSY, a->TryEnter(kObj, ta2, 102));
  EXPECT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(before + 1, host_.Requests());
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta1));
  blocked.join();
}

TEST_P(MonitorClientTest, StateListsOwnerEnteringInOrderThenKeyedWaiters) {
  auto a = NewNode(&host_), b = NewNode(&host_), c = NewNode(&host_), d = NewNode(&host_);
  LocalThread t1{kProg, 1}, t2{kProg, 2}, t3{kProg, 3}, t4{kProg, 4}, td{kProg, 5};
  ASSERT_EQ(DJAVA_MON_OK, a->EnterPolled(kObj, t4, 104, 0, -1));
  ASSERT_EQ(DJAVA_MON_WAITING, a->WaitKeyed(kObj, t4, 5, 104, 0, 0));
  ASSERT_EQ(DJAVA_MON_OK, a->EnterPolled(kObj, t1, 101, 0, -1));  // no lease: t4 waits
  ASSERT_EQ(DJAVA_MON_WAITING, b->EnterPolled(kObj, t2, 102, 0, 0));
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());
  ASSERT_EQ(DJAVA_MON_WAITING, c->EnterPolled(kObj, t3, 103, 0, 0));
  ASSERT_EQ(DJAVA_MON_OK, c->Ping());
  MonitorState st;
  ASSERT_EQ(DJAVA_MON_OK, d->State(kObj, td, &st));
  EXPECT_TRUE(st.owned);
  EXPECT_EQ(101u, st.owner_java_thread);
  ASSERT_EQ(2u, st.entering.size());
  EXPECT_EQ(DJAVA_MON_ENTERING_KEY, st.entering[0].key);
  EXPECT_EQ(102u, st.entering[0].java_thread);
  EXPECT_EQ(t2, st.entering[0].thread);
  EXPECT_EQ(103u, st.entering[1].java_thread);
  ASSERT_EQ(1u, st.waiters.size());
  EXPECT_EQ(5u, st.waiters[0].key);
  EXPECT_EQ(104u, st.waiters[0].java_thread);
  // The owner's node asks the service too (it holds no lease).
  ASSERT_EQ(DJAVA_MON_OK, a->State(kObj, t1, &st));
  EXPECT_EQ(101u, st.owner_java_thread);
  EXPECT_EQ(2u, st.entering.size());
  // The C ABI: entering first, then the waiters; up to cap, and the total.
  djava_monitor_client capi;
  capi.impl = std::move(d);
  uint64_t keys[3] = {0, 0, 0}, jts[3] = {0, 0, 0}, owner = 0;
  int owned = 0;
  int64_t count = 0;
  ASSERT_EQ(DJAVA_MON_OK,
            djava_monitor_state(&capi, kObj, kProg, td.thread, &owned, &owner, keys, jts, 2, &count));
  EXPECT_EQ(1, owned);
  EXPECT_EQ(101u, owner);
  EXPECT_EQ(3, count);
  EXPECT_EQ(DJAVA_MON_ENTERING_KEY, keys[0]);
  EXPECT_EQ(102u, jts[0]);
  EXPECT_EQ(DJAVA_MON_ENTERING_KEY, keys[1]);
  EXPECT_EQ(103u, jts[1]);
  EXPECT_EQ(0u, keys[2]);  // beyond cap: untouched
  ASSERT_EQ(DJAVA_MON_OK,
            djava_monitor_state(&capi, kObj, kProg, td.thread, &owned, &owner, keys, jts, 3, &count));
  EXPECT_EQ(5u, keys[2]);
  EXPECT_EQ(104u, jts[2]);
  EXPECT_EQ(DJAVA_MON_OK, djava_monitor_state(&capi, kObj, kProg, td.thread, nullptr, nullptr,
                                              nullptr, nullptr, 0, &count));
  EXPECT_EQ(3, count);
  EXPECT_EQ(DJAVA_MON_BAD_ARGUMENT, djava_monitor_state(&capi, kObj, kProg, td.thread, &owned,
                                                        &owner, nullptr, jts, 1, &count));
  EXPECT_EQ(DJAVA_MON_BAD_ARGUMENT, djava_monitor_state(nullptr, kObj, kProg, td.thread, &owned,
                                                        &owner, keys, jts, 1, &count));
  // djava_monitor_queue is unchanged: the keyed waiters only.
  EXPECT_EQ(1, djava_monitor_queue(&capi, kObj, kProg, td.thread, keys, jts, 3));
  EXPECT_EQ(5u, keys[0]);
  // A monitor nobody uses.
  ASSERT_EQ(DJAVA_MON_OK, djava_monitor_state(&capi, kObj + 1, kProg, td.thread, &owned, &owner,
                                              keys, jts, 3, &count));
  EXPECT_EQ(0, owned);
  EXPECT_EQ(0, count);
  // Served in that order.
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, t1));
  EXPECT_EQ(DJAVA_MON_OK, EnterToEnd(b.get(), t2, DJAVA_MON_WAITING));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, t2));
  EXPECT_EQ(DJAVA_MON_OK, EnterToEnd(c.get(), t3, DJAVA_MON_WAITING));
  ASSERT_EQ(DJAVA_MON_OK, c->Exit(kObj, t3));
  ASSERT_EQ(DJAVA_MON_OK, a->Cancel(t4));
  EXPECT_EQ(DJAVA_MON_CANCELLED, a->WaitMore(t4, 0));
}

INSTANTIATE_TEST_SUITE_P(Leases, MonitorClientTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "WithLeases" : "NoLeases";
                         });

}  // namespace
}  // namespace monitor
}  // namespace djava

namespace djava {
namespace monitor {
namespace {

// No leases, so every release would go to the service; wanted notices, so
// a kept-back release hands over when another node waits.
MonitorTable::Options LingerOptions() {
  MonitorTable::Options o;
  o.leases = false;
  o.wanted_notices = true;
  return o;
}

// A thread that exits a monitor and enters it again at once, time after
// time, keeps it a moment after its exit: its enter then costs no message,
// and another node's thread gets it when the moment is over, with what the
// tenure took handed over first.
TEST(MonitorLingerTest, AThreadThatEntersAgainAtOnceKeepsTheMonitorAMoment) {
  test::InProcMonitorHost host(LingerOptions());
  auto a = NewNode(&host), b = NewNode(&host);
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> handed;  // (since, program)
  a->SetMarkSource([] { return uint64_t{42}; });
  a->SetHandOver([&](uint64_t obj, uint64_t since, uint64_t program) {
    std::lock_guard<std::mutex> l(mu);
    EXPECT_EQ(kObj, obj);
    handed.emplace_back(since, program);
    return std::vector<uint64_t>{};
  });
  a->SetLingerFor(std::chrono::milliseconds(300));
  LocalThread a1{kProg, 1}, b1{kProg, 2};
  // Not yet seen entering again: the release goes at once.
  ASSERT_EQ(DJAVA_MON_OK, a->EnterGrouped(kObj, a1));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
  // Seen now; this exit keeps the monitor back, and the enter after it
  // takes it without a message.
  ASSERT_EQ(DJAVA_MON_OK, a->EnterGrouped(kObj, a1));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
  const size_t requests = host.Requests();
  ASSERT_EQ(DJAVA_MON_OK, a->EnterGrouped(kObj, a1));
  EXPECT_EQ(1, a->Count(kObj, a1));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
  EXPECT_EQ(requests, host.Requests()) << "kept back: no enter, no exit sent";
  // Kept back, the monitor is a1's still at the service: b1 waits until
  // the moment is over, and the release hands over first.
  const auto start = steady_clock::now();
  std::promise<int> entered;
  std::thread t([&] { entered.set_value(b->EnterGrouped(kObj, b1)); });
  auto f = entered.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  t.join();
  ASSERT_EQ(DJAVA_MON_OK, f.get());
  EXPECT_GE(steady_clock::now() - start, milliseconds(100));
  {
    std::lock_guard<std::mutex> l(mu);
    ASSERT_EQ(1u, handed.size()) << "wanted by b: handed over";
    EXPECT_EQ(std::make_pair(uint64_t{42}, kProg), handed[0]);
  }
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, b1));
  // A moment that ran out counts against keeping: after an enter that is
  // not at once, the next release goes at once.
  std::this_thread::sleep_for(milliseconds(350));
  ASSERT_EQ(DJAVA_MON_OK, a->EnterGrouped(kObj, a1));
  const size_t before = host.Requests();
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
  for (int i = 0; i < 200 && host.Requests() == before; i++)
    std::this_thread::sleep_for(milliseconds(1));
  EXPECT_EQ(before + 1, host.Requests()) << "the exit went at once";
  EXPECT_EQ(DJAVA_MON_OK, b->TryEnter(kObj, b1, 0));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, b1));
}

// A thread that loops on a synchronized block keeps its release back only
// so often while another node's thread waits: the other gets its turn
// long before the loop ends.
TEST(MonitorLingerTest, ALoopingThreadDoesNotStarveAnotherNode) {
  test::InProcMonitorHost host(LingerOptions());
  auto a = NewNode(&host), b = NewNode(&host);
  a->SetMarkSource([] { return uint64_t{1}; });
  a->SetHandOver([](uint64_t, uint64_t, uint64_t) { return std::vector<uint64_t>{}; });
  a->SetLingerFor(std::chrono::milliseconds(50));  // every enter counts as at once
  LocalThread a1{kProg, 1}, b1{kProg, 2};
  constexpr int kLoops = 2000;
  std::atomic<int> done{0};
  std::atomic<bool> a_holds{false}, b_queued{false};
  std::atomic<int> done_when_b_entered{-1};
  std::thread looper([&] {
    for (int i = 0; i < kLoops; i++) {
      ASSERT_EQ(DJAVA_MON_OK, a->EnterGrouped(kObj, a1));
      done = i + 1;
      if (i == 20) {  // b queues while a holds the monitor: the loop is no race with it
        a_holds = true;
        while (!b_queued) std::this_thread::yield();
      }
      ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
      // Once b is queued, the loop is slow enough to watch (a millisecond
      // a turn), and still much faster than a starving b would allow.
      if (i >= 20 && done_when_b_entered < 0) std::this_thread::sleep_for(milliseconds(1));
    }
  });
  while (!a_holds) std::this_thread::yield();
  ASSERT_EQ(DJAVA_MON_WAITING, b->EnterPolled(kObj, b1, 0, 0, /*poll_ms=*/5, /*grouped=*/true));
  b_queued = true;
  ASSERT_EQ(DJAVA_MON_OK, b->EnterMore(b1, -1));
  done_when_b_entered = done.load();
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, b1));
  looper.join();
  ASSERT_GE(done_when_b_entered.load(), 21);
  EXPECT_LT(done_when_b_entered.load(), kLoops) << "b waited for the whole loop";
}

// The JVM asks ReleaseWanted before each last exit and hands the tenure's
// data over when it says so. A looping thread's exit that its tenure's
// bound does not let linger must say so: its release goes to the waiting
// node at once, and nothing else would hand over (the data would not
// travel with the monitor, and the next holder would miss it).
TEST(MonitorLingerTest, AReleaseItsBoundLetsGoHandsOverWithTheExit) {
  test::InProcMonitorHost host(LingerOptions());
  auto a = NewNode(&host), b = NewNode(&host);
  std::atomic<int> handed_at_end{0};
  a->SetMarkSource([] { return uint64_t{5}; });
  a->SetHandOver([&](uint64_t, uint64_t, uint64_t) {
    handed_at_end++;
    return std::vector<uint64_t>{};
  });
  a->SetLingerFor(std::chrono::milliseconds(50));  // every enter counts as at once
  LocalThread a1{kProg, 1}, b1{kProg, 2};
  std::atomic<bool> a_holds{false}, b_queued{false}, b_entered{false};
  std::atomic<int> handed_at_exit{0};
  std::thread looper([&] {
    for (int i = 0; i < 2000 && !b_entered; i++) {
      ASSERT_EQ(DJAVA_MON_OK, a->EnterGrouped(kObj, a1));
      if (i == 20) {  // b queues while a holds the monitor
        a_holds = true;
        while (!b_queued) std::this_thread::yield();
      }
      uint64_t since = 0;
      if (a->ReleaseWanted(kObj, a1, /*whole=*/false, &since)) handed_at_exit++;
      ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
      if (i >= 20) std::this_thread::sleep_for(milliseconds(1));
    }
  });
  while (!a_holds) std::this_thread::yield();
  ASSERT_EQ(DJAVA_MON_WAITING, b->EnterPolled(kObj, b1, 0, 0, /*poll_ms=*/5, /*grouped=*/true));
  // a hears that b wants the monitor before its loop goes on: b's Pong
  // follows the service's handling of b's Enter, whose Wanted notice then
  // comes before a's Pong. A release that crosses the notice is not one
  // that knew to hand over, and may hand over nothing.
  ASSERT_EQ(DJAVA_MON_OK, b->Ping());
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  b_queued = true;
  ASSERT_EQ(DJAVA_MON_OK, b->EnterMore(b1, -1));
  b_entered = true;
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, b1));
  looper.join();
  EXPECT_GE(handed_at_exit + handed_at_end, 1) << "the release b got handed nothing over";
}

// A shared lock's holder that signals a condition another node's thread
// awaits (ReentrantLock and Condition taking turns) releases the lock to
// that thread when it awaits in turn: the await's release hands its data
// over, and the turn costs the hand-off's round trip alone.
TEST(MonitorLingerTest, ASignalToAnotherNodesAwaitMakesTheAwaitsReleaseWanted) {
  test::InProcMonitorHost host(LingerOptions());
  auto a = NewNode(&host), b = NewNode(&host);
  a->SetMarkSource([] { return uint64_t{3}; });
  LocalThread a1{kProg, 1}, b1{kProg, 2};
  constexpr uint64_t kCondition = 7;
  ASSERT_EQ(DJAVA_MON_OK, b->Enter(kObj, b1));
  int b_status = b->WaitKeyed(kObj, b1, kCondition, 0, /*timeout_ms=*/0, /*poll_ms=*/5);
  ASSERT_EQ(DJAVA_MON_WAITING, b_status);
  ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, a1));
  uint64_t since = 0;
  EXPECT_FALSE(a->ReleaseWanted(kObj, a1, /*whole=*/true, &since)) << "nobody signalled yet";
  ASSERT_EQ(DJAVA_MON_OK, a->NotifyKeyed(kObj, a1, kCondition, /*all=*/true));
  ASSERT_TRUE(a->ReleaseWanted(kObj, a1, /*whole=*/true, &since));
  EXPECT_EQ(3u, since);
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
  ASSERT_EQ(DJAVA_MON_OK, WaitToEnd(b.get(), b1, b_status));
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, b1));
}

// A non-fair lock's (barging) enter may take its own release back as a
// Java monitor's does: the lock lets a thread go ahead of queued ones
// anyway. The release kept back hands over, naming the monitor, when
// another node wants it.
TEST(MonitorLingerTest, ANonFairLocksReleaseIsKeptBackAsAMonitorsIs) {
  test::InProcMonitorHost host(LingerOptions());
  auto a = NewNode(&host), b = NewNode(&host);
  std::atomic<uint64_t> handed_for{0};
  a->SetMarkSource([] { return uint64_t{7}; });
  a->SetHandOver([&](uint64_t obj, uint64_t, uint64_t) {
    handed_for = obj;
    return std::vector<uint64_t>{};
  });
  a->SetLingerFor(std::chrono::milliseconds(300));
  LocalThread a1{kProg, 1}, b1{kProg, 2};
  auto lock = [&](MonitorClient* m, LocalThread t) {
    return m->EnterPolled(kObj, t, 0, 0, -1, /*grouped=*/false, /*barging=*/true);
  };
  ASSERT_EQ(DJAVA_MON_OK, lock(a.get(), a1));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
  ASSERT_EQ(DJAVA_MON_OK, lock(a.get(), a1));  // at once: seen entering again
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));  // kept back
  const size_t requests = host.Requests();
  ASSERT_EQ(DJAVA_MON_OK, lock(a.get(), a1));
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
  EXPECT_EQ(requests, host.Requests()) << "kept back: no enter, no exit sent";
  // b's enter, barging or not, waits for the moment's end at the service.
  ASSERT_EQ(DJAVA_MON_OK, b->EnterPolled(kObj, b1, 0, 5000, -1));
  EXPECT_EQ(kObj, handed_for.load()) << "wanted by b: handed over";
  ASSERT_EQ(DJAVA_MON_OK, b->Exit(kObj, b1));
}

// Only enters that promise no order (a Java monitor's, grouped, and a
// non-fair lock's) are watched: a fair lock's release always goes at once.
TEST(MonitorLingerTest, AFairLocksReleaseIsNeverKeptBack) {
  MonitorTable::Options o;
  o.leases = false;
  test::InProcMonitorHost host(o);
  auto a = NewNode(&host);
  a->SetHandOver([](uint64_t, uint64_t, uint64_t) { return std::vector<uint64_t>{}; });
  a->SetLingerFor(std::chrono::milliseconds(300));
  LocalThread a1{kProg, 1};
  for (int i = 0; i < 4; i++) {
    ASSERT_EQ(DJAVA_MON_OK, a->Enter(kObj, a1));
    const size_t before = host.Requests();
    ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, a1));
    for (int k = 0; k < 200 && host.Requests() == before; k++)
      std::this_thread::sleep_for(milliseconds(1));
    EXPECT_EQ(before + 1, host.Requests()) << "round " << i;
  }
}

TEST(MonitorServiceTest, EmptyRequestClosesOnlyThatConnection) {
  test::InProcMonitorHost host;
  auto good = NewNode(&host);
  std::unique_ptr<Channel> raw = host.Connect();
  ASSERT_TRUE(raw->Send(monitorpb::MonitorRequest()));  // no body
  monitorpb::MonitorEvent ev;
  EXPECT_FALSE(raw->Receive(&ev));
  LocalThread t{kProg, 1};
  EXPECT_EQ(DJAVA_MON_OK, good->Enter(kObj, t));
  EXPECT_EQ(DJAVA_MON_OK, good->Exit(kObj, t));
  EXPECT_EQ(DJAVA_MON_OK, good->Ping());
}

TEST(MonitorServiceTest, MisuseIsReportedNotFatal) {
  test::InProcMonitorHost host;
  auto good = NewNode(&host);
  std::unique_ptr<Channel> raw = host.Connect();
  monitorpb::MonitorRequest req;
  req.set_seq(9);
  req.mutable_exit()->set_object(kObj);  // exit without owning
  ASSERT_TRUE(raw->Send(req));
  monitorpb::MonitorEvent ev;
  ASSERT_TRUE(raw->Receive(&ev));
  ASSERT_TRUE(ev.has_error());
  EXPECT_EQ(9u, ev.error().seq());
  req.Clear();
  req.mutable_ping()->set_nonce(3);
  ASSERT_TRUE(raw->Send(req));  // still served
  ASSERT_TRUE(raw->Receive(&ev));
  EXPECT_EQ(3u, ev.pong().nonce());
}

TEST(MonitorServiceTest, TryEnterNamingNoThreadIsReportedNotFatal) {
  test::InProcMonitorHost host;  // leases on
  std::unique_ptr<Channel> raw = host.Connect();
  monitorpb::MonitorRequest req;
  monitorpb::MonitorEvent ev;
  req.set_seq(31);
  req.mutable_enter()->set_object(kObj);
  req.mutable_enter()->set_try_only(true);
  ASSERT_TRUE(raw->Send(req));
  ASSERT_TRUE(raw->Receive(&ev));
  ASSERT_TRUE(ev.has_error());
  EXPECT_EQ(31u, ev.error().seq());
  EXPECT_EQ(0u, host.MonitorCount());
  // Still served: a try naming its thread is granted, the next one is Busy.
  for (uint64_t thread : {1, 2}) {
    req.Clear();
    req.mutable_enter()->set_object(kObj);
    req.mutable_enter()->mutable_thread()->set_program(kProg);
    req.mutable_enter()->mutable_thread()->set_thread(thread);
    req.mutable_enter()->set_try_only(true);
    ASSERT_TRUE(raw->Send(req));
    ASSERT_TRUE(raw->Receive(&ev));
    if (thread == 1) {
      ASSERT_TRUE(ev.has_granted());
      EXPECT_EQ(1u, ev.granted().thread().thread());
    } else {
      ASSERT_TRUE(ev.has_busy());
      EXPECT_EQ(kObj, ev.busy().object());
      EXPECT_EQ(2u, ev.busy().thread().thread());
    }
  }
  EXPECT_EQ(0u, host.WithTable([](const MonitorTable& t) { return t.EntryQueueLength(kObj); }));
  req.Clear();
  req.mutable_ping()->set_nonce(6);
  ASSERT_TRUE(raw->Send(req));
  ASSERT_TRUE(raw->Receive(&ev));
  EXPECT_EQ(6u, ev.pong().nonce());
}

// The client against a scripted "service": what it sends when an enter times
// out, and what it does with a grant or a Busy that comes late or for nobody.
bool ReceiveSoon(Channel* ch, monitorpb::MonitorRequest* req) {
  auto f = std::async(std::launch::async, [&] { return ch->Receive(req); });
  if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ch->Shutdown();  // ends the Receive: the test fails instead of hanging
    f.get();
    return false;
  }
  return f.get();
}

// A client whose one shard is a pipe the test plays the service on.
struct ScriptedClient {
  std::unique_ptr<Channel> service;
  std::unique_ptr<MonitorClient> client;
  ScriptedClient() {
    auto pipe = test::MakePipe();
    service = std::move(pipe.second);
    std::vector<std::unique_ptr<Channel>> shards;
    shards.push_back(std::move(pipe.first));
    client = std::make_unique<MonitorClient>(std::move(shards));
  }
};

TEST(MonitorClientScriptedTest, AGrantAfterTheDeadlineIsHandedBackAndBusyEndsOnlyItsTry) {
  ScriptedClient scripted;
  Channel* svc = scripted.service.get();
  MonitorClient& c = *scripted.client;
  LocalThread t{kProg, 1};
  EXPECT_EQ(DJAVA_MON_TIMED_OUT, c.EnterPolled(kObj, t, 301, 30, -1));
  monitorpb::MonitorRequest req;
  ASSERT_TRUE(ReceiveSoon(svc, &req));
  ASSERT_TRUE(req.has_enter());
  EXPECT_EQ(301u, req.enter().java_thread());
  EXPECT_FALSE(req.enter().try_only());
  ASSERT_TRUE(ReceiveSoon(svc, &req));
  ASSERT_TRUE(req.has_cancel_enter());
  EXPECT_EQ(1u, req.cancel_enter().thread().thread());
  // The service had granted it before it read the CancelEnter.
  monitorpb::MonitorEvent g;
  g.mutable_granted()->set_object(kObj);
  g.mutable_granted()->mutable_thread()->set_program(kProg);
  g.mutable_granted()->mutable_thread()->set_thread(1);
  g.mutable_granted()->set_reason(monitorpb::ACQUIRED);
  ASSERT_TRUE(svc->Send(g));
  ASSERT_TRUE(ReceiveSoon(svc, &req));
  ASSERT_TRUE(req.has_exit());
  EXPECT_EQ(1u, req.exit().thread().thread());
  EXPECT_EQ(0, c.Count(kObj, t));
  // A try: a Busy naming nobody (or another thread) does not end it.
  int status = -1;
  // (No fatal assertion while `trying` runs: it is joined first.)
  std::thread trying([&] { status = c.TryEnter(kObj, t, 301); });
  EXPECT_TRUE(ReceiveSoon(svc, &req));
  EXPECT_TRUE(req.has_enter());
  EXPECT_TRUE(req.enter().try_only());
  monitorpb::MonitorEvent busy;
  busy.mutable_busy()->set_object(kObj);
  EXPECT_TRUE(svc->Send(busy));
  busy.mutable_busy()->mutable_thread()->set_program(kProg);
  busy.mutable_busy()->mutable_thread()->set_thread(2);
  EXPECT_TRUE(svc->Send(busy));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(-1, status);
  busy.mutable_busy()->mutable_thread()->set_thread(1);
  svc->Send(busy);  // (a closed pipe ends the try with IO)
  trying.join();
  EXPECT_EQ(DJAVA_MON_BUSY, status);
  EXPECT_EQ(0, c.Count(kObj, t));
  // The service goes: a query blocked on it ends, and the client knows it
  // is closed (no leave attempted at destruction).
  std::vector<KeyedWaiter> w;
  auto query = std::async(std::launch::async, [&] { return c.Queue(kObj, t, &w); });
  ASSERT_TRUE(ReceiveSoon(svc, &req));
  EXPECT_TRUE(req.has_query());
  svc->Shutdown();
  EXPECT_EQ(DJAVA_MON_IO, query.get());
}

// A timed wait in line is timed here: the service gets no timeout, and
// the deadline sends CancelEnter. The wait's grant, sent before the
// service read that, answers the thread's next enter: held, whatever
// woke the wait.
TEST(MonitorClientScriptedTest, AWaitInLineGivesUpHereAndItsLateGrantAnswersTheNextEnter) {
  ScriptedClient scripted;
  Channel* svc = scripted.service.get();
  MonitorClient& c = *scripted.client;
  LocalThread t{kProg, 1};
  monitorpb::MonitorEvent g;
  g.mutable_granted()->set_object(kObj);
  g.mutable_granted()->mutable_thread()->set_program(kProg);
  g.mutable_granted()->mutable_thread()->set_thread(1);
  g.mutable_granted()->set_reason(monitorpb::ACQUIRED);
  monitorpb::MonitorRequest req;
  auto entered = std::async(std::launch::async, [&] { return c.EnterPolled(kObj, t, 301, 0, -1); });
  ASSERT_TRUE(ReceiveSoon(svc, &req));
  ASSERT_TRUE(req.has_enter());
  ASSERT_TRUE(svc->Send(g));
  ASSERT_EQ(DJAVA_MON_OK, entered.get());
  EXPECT_EQ(DJAVA_MON_CANCELLED,
            WaitToEnd(&c, t, c.WaitKeyed(kObj, t, 2, 301, 30, 5, DJAVA_MON_NEW_PLACE)));
  EXPECT_EQ(0, c.Count(kObj, t));
  ASSERT_TRUE(ReceiveSoon(svc, &req));
  ASSERT_TRUE(req.has_wait());
  EXPECT_EQ(0u, req.wait().timeout_ms());
  ASSERT_TRUE(ReceiveSoon(svc, &req));
  ASSERT_TRUE(req.has_cancel_enter());
  entered = std::async(std::launch::async, [&] { return c.EnterPolled(kObj, t, 301, 0, -1); });
  ASSERT_TRUE(ReceiveSoon(svc, &req));
  ASSERT_TRUE(req.has_enter());
  g.mutable_granted()->set_reason(monitorpb::TIMED_OUT);
  ASSERT_TRUE(svc->Send(g));
  EXPECT_EQ(DJAVA_MON_OK, entered.get());
  EXPECT_EQ(1, c.Count(kObj, t));
  svc->Shutdown();
}

// Under the node's own lease, unrecalled, the state is known here: no message.
TEST(MonitorStateTest, UnderTheNodesLeaseTheStateIsLocalUnlessRecalled) {
  test::InProcMonitorHost host;  // leases on
  auto a = NewNode(&host), b = NewNode(&host);
  LocalThread ta1{kProg, 1}, ta2{kProg, 2}, ta3{kProg, 3}, tb{kProg, 4};
  ASSERT_EQ(DJAVA_MON_OK, a->EnterPolled(kObj, ta1, 201, 0, -1));
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  ASSERT_TRUE(host.WithTable([](const MonitorTable& t) { return t.IsLeased(kObj); }));
  size_t before = host.Requests();
  MonitorState st;
  ASSERT_EQ(DJAVA_MON_OK, a->State(kObj, ta2, &st));
  EXPECT_TRUE(st.owned);
  EXPECT_EQ(201u, st.owner_java_thread);
  EXPECT_TRUE(st.entering.empty());
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta1));
  ASSERT_EQ(DJAVA_MON_OK, a->State(kObj, ta2, &st));
  EXPECT_FALSE(st.owned);
  EXPECT_EQ(0u, st.owner_java_thread);
  ASSERT_EQ(DJAVA_MON_OK, a->Ping());
  EXPECT_EQ(before + 1, host.Requests());  // only the Ping
  // Another node sees the lease: owned, by a thread it cannot know.
  ASSERT_EQ(DJAVA_MON_OK, b->State(kObj, tb, &st));
  EXPECT_TRUE(st.owned);
  EXPECT_EQ(0u, st.owner_java_thread);
  // A local thread queued behind the local owner (its Enter recalls the
  // lease): the service is asked, whether or not the Recall is here yet.
  ASSERT_EQ(DJAVA_MON_OK, a->EnterPolled(kObj, ta1, 201, 0, -1));
  before = host.Requests();
  int status = -1;
  std::thread local([&] { status = a->EnterPolled(kObj, ta3, 203, 0, -1); });
  for (int i = 0; i < 2000 && host.Requests() == before; i++)
    std::this_thread::sleep_for(milliseconds(1));
  EXPECT_EQ(DJAVA_MON_OK, a->State(kObj, ta2, &st));
  EXPECT_TRUE(st.owned);
  EXPECT_EQ(201u, st.owner_java_thread);  // the lease holder knows its owner
  EXPECT_EQ(1u, st.entering.size());
  if (!st.entering.empty()) {
    EXPECT_EQ(203u, st.entering[0].java_thread);
  }
  // Recalled, with another node queued too (threads are joined below even
  // if a check fails: no fatal assertion until then).
  std::thread remote([&] {
    EXPECT_EQ(DJAVA_MON_OK, b->EnterPolled(kObj, tb, 204, 0, -1));
    EXPECT_EQ(DJAVA_MON_OK, b->Exit(kObj, tb));
  });
  EXPECT_TRUE(QueuedAtService(&host, 2));
  EXPECT_EQ(DJAVA_MON_OK, a->State(kObj, ta2, &st));
  EXPECT_EQ(201u, st.owner_java_thread);
  EXPECT_EQ(2u, st.entering.size());
  if (st.entering.size() == 2) {
    EXPECT_EQ(203u, st.entering[0].java_thread);
    EXPECT_EQ(204u, st.entering[1].java_thread);
  }
  EXPECT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta1));
  local.join();
  EXPECT_EQ(DJAVA_MON_OK, status);
  ASSERT_EQ(DJAVA_MON_OK, a->Exit(kObj, ta3));
  remote.join();
}

TEST(MonitorServiceTest, SignalOrQueryNamingNoThreadIsReportedNotFatal) {
  test::InProcMonitorHost host;
  std::unique_ptr<Channel> raw = host.Connect();
  monitorpb::MonitorRequest req;
  monitorpb::MonitorEvent ev;
  req.set_seq(21);
  req.mutable_signal()->set_object(kObj);
  ASSERT_TRUE(raw->Send(req));
  ASSERT_TRUE(raw->Receive(&ev));
  ASSERT_TRUE(ev.has_error());
  EXPECT_EQ(21u, ev.error().seq());
  req.Clear();
  req.set_seq(22);
  req.mutable_query()->set_object(kObj);
  req.mutable_query()->set_nonce(4);
  ASSERT_TRUE(raw->Send(req));
  ASSERT_TRUE(raw->Receive(&ev));
  ASSERT_TRUE(ev.has_error());
  EXPECT_EQ(22u, ev.error().seq());
  EXPECT_EQ(0u, host.MonitorCount());
  // Still served: a well-formed query is answered with its nonce.
  req.Clear();
  req.mutable_query()->set_object(kObj);
  req.mutable_query()->mutable_thread()->set_program(kProg);
  req.mutable_query()->set_nonce(5);
  ASSERT_TRUE(raw->Send(req));
  ASSERT_TRUE(raw->Receive(&ev));
  ASSERT_TRUE(ev.has_queue());
  EXPECT_EQ(5u, ev.queue().nonce());
  EXPECT_EQ(0, ev.queue().waiters_size());
}

}  // namespace
}  // namespace monitor
}  // namespace djava

namespace djava {
namespace monitor {
namespace {

// A node whose threads re-acquire a leased monitor in a tight loop must not
// starve a thread of another node: the recall stops local grants and the
// service queue is FIFO.
TEST(MonitorStarvationTest, RemoteThreadGetsInDespiteLocalHammering) {
  test::InProcMonitorHost host;  // leases on
  auto busy = NewNode(&host), lone = NewNode(&host);
  std::atomic<bool> stop{false};
  std::vector<std::thread> hammer;
  std::atomic<long> local_rounds{0};
  for (int i = 0; i < 4; i++)
    hammer.emplace_back([&, i] {
      LocalThread t{kProg, static_cast<uint64_t>(100 + i)};
      while (!stop) {
        ASSERT_EQ(DJAVA_MON_OK, busy->Enter(kObj, t));
        local_rounds++;
        ASSERT_EQ(DJAVA_MON_OK, busy->Exit(kObj, t));
      }
    });
  LocalThread me{kProg, 1};
  double worst_ms = 0;
  for (int k = 0; k < 20; k++) {
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(DJAVA_MON_OK, lone->Enter(kObj, me));
    worst_ms = std::max(worst_ms, std::chrono::duration<double, std::milli>(
                                      std::chrono::steady_clock::now() - t0)
                                      .count());
    ASSERT_EQ(DJAVA_MON_OK, lone->Exit(kObj, me));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  stop = true;
  for (auto& t : hammer) t.join();
  EXPECT_LT(worst_ms, 2000.0);  // a generous bound: starvation would be unbounded
  EXPECT_GT(local_rounds.load(), 20);
}

}  // namespace
}  // namespace monitor
}  // namespace djava
