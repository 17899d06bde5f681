// Unit tests of the thread manager's registry: placement, queueing,
// lifecycle, failures. Deterministic: time is passed in.
#include "registry.h"

#include <gtest/gtest.h>

#include <map>

namespace djava {
namespace tm {
namespace {

class RegistryTest : public ::testing::Test {
 protected:
  std::vector<Action> Take() {
    std::vector<Action> r;
    r.swap(out_);
    return r;
  }
  // Server each Assign action went to, by thread id.
  static std::map<uint64_t, ServerId> Assigned(const std::vector<Action>& acts) {
    std::map<uint64_t, ServerId> r;
    for (const Action& a : acts)
      if (a.kind == Action::kAssign) r[a.thread.thread] = a.server;
    return r;
  }
  static int Count(const std::vector<Action>& acts, Action::Kind k) {
    int n = 0;
    for (const Action& a : acts) n += a.kind == k;
    return n;
  }
  ThreadState State(ProgramId p, uint64_t t) {
    ThreadState s;
    EXPECT_TRUE(reg_.Lookup(ThreadKey{p, t}, &s, nullptr));
    return s;
  }

  ThreadRegistry reg_;
  std::vector<Action> out_;
};

TEST_F(RegistryTest, FourThreadsOnTwoServersLandTwoAndTwo) {
  ASSERT_EQ("", reg_.RegisterServer(1, "s1", 4, 0, &out_));
  ASSERT_EQ("", reg_.RegisterServer(2, "s2", 4, 0, &out_));
  ASSERT_EQ("", reg_.RegisterProgram(100, 7, "node", "cp"));
  for (uint64_t t = 1; t <= 4; t++) ASSERT_EQ("", reg_.Submit(100, t, false, &out_));
  auto a = Assigned(Take());
  ASSERT_EQ(4u, a.size());
  EXPECT_EQ(2, reg_.Running(1));
  EXPECT_EQ(2, reg_.Running(2));
  // FIFO among equals: alternate, first server first.
  EXPECT_EQ(1u, a[1]);
  EXPECT_EQ(2u, a[2]);
  EXPECT_EQ(1u, a[3]);
  EXPECT_EQ(2u, a[4]);
}

TEST_F(RegistryTest, LeastLoadedFirst) {
  reg_.RegisterServer(1, "s1", 8, 0, &out_);
  reg_.RegisterProgram(100, 7, "node", "cp");
  for (uint64_t t = 1; t <= 3; t++) reg_.Submit(100, t, false, &out_);
  reg_.RegisterServer(2, "s2", 8, 0, &out_);
  Take();
  // s2 is empty: the next three go there until it catches up.
  for (uint64_t t = 4; t <= 6; t++) reg_.Submit(100, t, false, &out_);
  auto a = Assigned(Take());
  EXPECT_EQ(2u, a[4]);
  EXPECT_EQ(2u, a[5]);
  EXPECT_EQ(2u, a[6]);
}

TEST_F(RegistryTest, QueuesWithoutCapacityAndDrainsFifo) {
  reg_.RegisterProgram(100, 7, "node", "cp");
  ASSERT_EQ("", reg_.Submit(100, 1, false, &out_));
  ASSERT_EQ("", reg_.Submit(100, 2, false, &out_));
  EXPECT_EQ(2u, reg_.QueueLength());
  EXPECT_EQ(ThreadState::kQueued, State(100, 1));
  // Launcher heard "queued" twice.
  auto acts = Take();
  EXPECT_EQ(2, Count(acts, Action::kStateChanged));
  reg_.RegisterServer(1, "s1", 1, 0, &out_);
  auto a = Assigned(Take());
  ASSERT_EQ(1u, a.size());
  EXPECT_EQ(1u, a.begin()->first);  // FIFO: first submitted runs first
  EXPECT_EQ(1u, reg_.QueueLength());
  ASSERT_EQ("", reg_.ThreadEnded(1, 100, 1, false, "", &out_));
  a = Assigned(Take());
  ASSERT_EQ(1u, a.size());
  EXPECT_EQ(2u, a.begin()->first);
  EXPECT_EQ(ThreadState::kEnded, State(100, 1));
  EXPECT_EQ(ThreadState::kRunning, State(100, 2));
}

TEST_F(RegistryTest, SeveralProgramsShareServers) {
  reg_.RegisterServer(1, "s1", 2, 0, &out_);
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.RegisterProgram(200, 8, "b", "cp");
  reg_.Submit(100, 1, false, &out_);
  reg_.Submit(200, 1, false, &out_);
  reg_.Submit(100, 2, false, &out_);
  EXPECT_EQ(2, reg_.Running(1));
  EXPECT_EQ(1u, reg_.QueueLength());
  out_.clear();
  // Program 200 ends: its slot serves program 100's queued thread, and the
  // server is told to drop program 200.
  reg_.ProgramEnded(200, "exit", &out_);
  auto acts = Take();
  EXPECT_EQ(1, Count(acts, Action::kDropProgram));
  EXPECT_EQ(1, Count(acts, Action::kFreeProgram));
  auto a = Assigned(acts);
  ASSERT_EQ(1u, a.size());
  EXPECT_EQ(ThreadState::kRunning, State(100, 2));
  EXPECT_FALSE(reg_.HasProgram(200));
}

TEST_F(RegistryTest, StateChangesReachLauncherAndWatchers) {
  reg_.RegisterServer(1, "s1", 1, 0, &out_);
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.Submit(100, 1, false, &out_);
  out_.clear();
  ASSERT_EQ("", reg_.Watch(9, 100, 1, &out_));  // told the current state at once
  auto acts = Take();
  ASSERT_EQ(1u, acts.size());
  EXPECT_EQ(9u, acts[0].conn);
  EXPECT_EQ(ThreadState::kRunning, acts[0].state);
  reg_.ThreadEnded(1, 100, 1, true, "java.lang.RuntimeException: boom", &out_);
  acts = Take();
  std::set<ConnId> told;
  for (const Action& a : acts) {
    ASSERT_EQ(Action::kStateChanged, a.kind);
    EXPECT_EQ(ThreadState::kEndedByException, a.state);
    EXPECT_EQ("java.lang.RuntimeException: boom", a.detail);
    told.insert(a.conn);
  }
  EXPECT_EQ((std::set<ConnId>{7, 9}), told);
  reg_.ConnGone(9);
  EXPECT_NE("", reg_.Watch(9, 100, 42, &out_));  // unknown thread
}

TEST_F(RegistryTest, LiveNonDaemonCountsForLauncherExit) {
  reg_.RegisterServer(1, "s1", 4, 0, &out_);
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.Submit(100, 1, false, &out_);
  reg_.Submit(100, 2, true, &out_);  // daemon
  EXPECT_EQ(1, reg_.LiveNonDaemon(100));
  reg_.ThreadEnded(1, 100, 1, false, "", &out_);
  EXPECT_EQ(0, reg_.LiveNonDaemon(100));
}

TEST_F(RegistryTest, RejectsMisuse) {
  EXPECT_NE("", reg_.RegisterServer(1, "s1", 0, 0, &out_));
  reg_.RegisterServer(1, "s1", 1, 0, &out_);
  EXPECT_NE("", reg_.RegisterServer(1, "again", 1, 0, &out_));
  EXPECT_NE("", reg_.Submit(5, 1, false, &out_));  // unknown program
  reg_.RegisterProgram(100, 7, "a", "cp");
  EXPECT_NE("", reg_.RegisterProgram(100, 8, "b", "cp"));
  reg_.Submit(100, 1, false, &out_);
  EXPECT_NE("", reg_.Submit(100, 1, false, &out_));  // started twice
  EXPECT_NE("", reg_.ThreadEnded(2, 100, 1, false, "", &out_));  // unknown server
  reg_.RegisterServer(2, "s2", 1, 0, &out_);
  EXPECT_NE("", reg_.ThreadEnded(2, 100, 1, false, "", &out_));  // not its thread
  EXPECT_NE("", reg_.Heartbeat(3, 0));
}

TEST_F(RegistryTest, ServerDisconnectFailsItsProgramsNamingTheServer) {
  reg_.RegisterServer(1, "alpha", 2, 0, &out_);
  reg_.RegisterServer(2, "beta", 2, 0, &out_);
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.RegisterProgram(200, 8, "b", "cp");
  reg_.Submit(100, 1, false, &out_);  // -> alpha
  reg_.Submit(200, 1, false, &out_);  // -> beta
  out_.clear();
  reg_.ServerGone(1, "disconnected", &out_);
  auto acts = Take();
  int failed_msgs = 0;
  for (const Action& a : acts) {
    if (a.kind == Action::kProgramFailed) {
      failed_msgs++;
      EXPECT_EQ(100u, a.thread.program);
      EXPECT_EQ(7u, a.conn);
      EXPECT_NE(std::string::npos, a.detail.find("alpha")) << a.detail;
      EXPECT_NE(std::string::npos, a.detail.find("disconnected")) << a.detail;
    }
  }
  EXPECT_EQ(1, failed_msgs);
  EXPECT_EQ(ThreadState::kFailed, State(100, 1));
  EXPECT_EQ(ThreadState::kRunning, State(200, 1));
  EXPECT_FALSE(reg_.HasServer(1));
  // A failed program submits nothing more.
  EXPECT_NE("", reg_.Submit(100, 2, false, &out_));
  // Its end frees everything and tells the surviving servers it used (none).
  reg_.ProgramEnded(100, "failed", &out_);
  acts = Take();
  EXPECT_EQ(0, Count(acts, Action::kDropProgram));
  EXPECT_EQ(1, Count(acts, Action::kFreeProgram));
}

TEST_F(RegistryTest, MissedLivenessDeadlineIsServerDeath) {
  ThreadRegistry::Options o;
  o.liveness_timeout_ms = 1000;
  ThreadRegistry reg(o);
  reg.RegisterServer(1, "slow", 1, 0, &out_);
  reg.RegisterServer(2, "live", 1, 0, &out_);
  reg.RegisterProgram(100, 7, "a", "cp");
  reg.Submit(100, 1, false, &out_);  // -> slow
  EXPECT_EQ(1000, reg.NextDeadline());
  reg.Heartbeat(2, 900);
  reg.Tick(999, &out_);
  EXPECT_TRUE(reg.HasServer(1));
  out_.clear();
  reg.Tick(1000, &out_);
  EXPECT_FALSE(reg.HasServer(1));
  EXPECT_TRUE(reg.HasServer(2));
  bool failed = false;
  for (const Action& a : out_)
    if (a.kind == Action::kProgramFailed) {
      failed = true;
      EXPECT_NE(std::string::npos, a.detail.find("slow"));
      EXPECT_NE(std::string::npos, a.detail.find("liveness"));
    }
  EXPECT_TRUE(failed);
}

TEST_F(RegistryTest, ProgramEndDropsQueuedAndTellsEveryServerItUsed) {
  reg_.RegisterServer(1, "s1", 1, 0, &out_);
  reg_.RegisterServer(2, "s2", 1, 0, &out_);
  reg_.RegisterProgram(100, 7, "a", "cp");
  for (uint64_t t = 1; t <= 3; t++) reg_.Submit(100, t, false, &out_);
  reg_.ThreadEnded(1, 100, 1, false, "", &out_);  // thread 3 now runs on s1
  EXPECT_EQ(0u, reg_.QueueLength());
  reg_.Submit(100, 4, false, &out_);
  EXPECT_EQ(1u, reg_.QueueLength());
  out_.clear();
  reg_.ProgramEnded(100, "System.exit", &out_);
  auto acts = Take();
  std::set<ServerId> dropped;
  for (const Action& a : acts)
    if (a.kind == Action::kDropProgram) dropped.insert(a.server);
  EXPECT_EQ((std::set<ServerId>{1, 2}), dropped);
  EXPECT_EQ(0u, reg_.QueueLength());
  EXPECT_EQ(0, reg_.Running(1));
  EXPECT_EQ(0, reg_.Running(2));
  EXPECT_EQ(0, Count(acts, Action::kAssign));
  // A late end report from a server is harmless.
  EXPECT_EQ("", reg_.ThreadEnded(1, 100, 3, false, "", &out_));
  EXPECT_TRUE(reg_.ProgramsOf(7).empty());
}

TEST_F(RegistryTest, ServerServesManyProgramsOverItsLife) {
  reg_.RegisterServer(1, "s1", 1, 0, &out_);
  for (ProgramId p = 1; p <= 5; p++) {
    reg_.RegisterProgram(p, p, "n", "cp");
    reg_.Submit(p, 1, false, &out_);
    EXPECT_EQ(ThreadState::kRunning, State(p, 1));
    reg_.ThreadEnded(1, p, 1, false, "", &out_);
    reg_.ProgramEnded(p, "done", &out_);
  }
  EXPECT_EQ(0, reg_.Running(1));
}

}  // namespace
}  // namespace tm
}  // namespace djava
