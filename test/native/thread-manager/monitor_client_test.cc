// The real MonitorClient against the real MonitorService, joined in one
// process by memory channels: Java monitor semantics end to end, several
// "nodes" (clients) and threads each.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "inproc.h"
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
