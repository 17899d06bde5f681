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

// A program sees the cluster's processors, fixed when it registers: the
// servers' capacities added up, an override, or the launcher's own count
// while no server is registered.
TEST_F(RegistryTest, ProgramProcessorsAreFixedAtRegistration) {
  ASSERT_EQ("", reg_.RegisterProgram(99, 7, "node", "cp", 0, 6));
  EXPECT_EQ(6u, reg_.ProgramProcessors(99));  // no server yet: the launcher's
  ASSERT_EQ("", reg_.RegisterServer(1, "s1", 3, 0, &out_));
  ASSERT_EQ("", reg_.RegisterServer(2, "s2", 5, 0, &out_));
  ASSERT_EQ("", reg_.RegisterProgram(100, 7, "node", "cp", 0, 2));
  ASSERT_EQ("", reg_.RegisterProgram(101, 7, "node", "cp", 12, 2));
  EXPECT_EQ(8u, reg_.ProgramProcessors(100));
  EXPECT_EQ(12u, reg_.ProgramProcessors(101));
  // A server joining or leaving later changes no registered program's count.
  ASSERT_EQ("", reg_.RegisterServer(3, "s3", 4, 0, &out_));
  reg_.ServerGone(1, "gone", &out_);
  EXPECT_EQ(8u, reg_.ProgramProcessors(100));
  EXPECT_EQ(6u, reg_.ProgramProcessors(99));
  ASSERT_EQ("", reg_.RegisterProgram(102, 7, "node", "cp", 0, 2));
  EXPECT_EQ(9u, reg_.ProgramProcessors(102));
  EXPECT_EQ(0u, reg_.ProgramProcessors(555));
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

TEST_F(RegistryTest, QueuesOnlyWithoutServersAndDrainsFifo) {
  reg_.RegisterProgram(100, 7, "node", "cp");
  ASSERT_EQ("", reg_.Submit(100, 1, false, &out_));
  ASSERT_EQ("", reg_.Submit(100, 2, false, &out_));
  EXPECT_EQ(2u, reg_.QueueLength());
  EXPECT_EQ(ThreadState::kQueued, State(100, 1));
  // Launcher heard "queued" twice.
  auto acts = Take();
  EXPECT_EQ(2, Count(acts, Action::kStateChanged));
  // The first server takes both, in order, though its capacity is 1.
  reg_.RegisterServer(1, "s1", 1, 0, &out_);
  acts = Take();
  std::vector<uint64_t> order;
  for (const auto& a : acts)
    if (a.kind == Action::kAssign) order.push_back(a.thread.thread);
  EXPECT_EQ((std::vector<uint64_t>{1, 2}), order);
  EXPECT_EQ(0u, reg_.QueueLength());
  EXPECT_EQ(ThreadState::kRunning, State(100, 1));
  EXPECT_EQ(ThreadState::kRunning, State(100, 2));
}

// Java starts every thread at once: four threads that meet at a barrier on
// two servers of one CPU each must all run, not wait for a free slot.
TEST_F(RegistryTest, FullServersRunMoreThreadsRatherThanQueueThem) {
  reg_.RegisterServer(1, "s1", 1, 0, &out_);
  reg_.RegisterServer(2, "s2", 3, 0, &out_);
  reg_.RegisterProgram(100, 7, "node", "cp");
  for (uint64_t t = 1; t <= 8; t++) ASSERT_EQ("", reg_.Submit(100, t, false, &out_));
  EXPECT_EQ(0u, reg_.QueueLength());
  // Spare capacity first (1 + 3), then by load for capacity: 8 threads on
  // capacities 1 and 3 land 2 and 6.
  EXPECT_EQ(2, reg_.Running(1));
  EXPECT_EQ(6, reg_.Running(2));
}

TEST_F(RegistryTest, SeveralProgramsShareServers) {
  reg_.RegisterServer(1, "s1", 2, 0, &out_);
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.RegisterProgram(200, 8, "b", "cp");
  reg_.Submit(100, 1, false, &out_);
  reg_.Submit(200, 1, false, &out_);
  reg_.Submit(100, 2, false, &out_);
  EXPECT_EQ(3, reg_.Running(1));  // over its capacity of 2: nothing waits
  EXPECT_EQ(0u, reg_.QueueLength());
  out_.clear();
  // Program 200 ends: the server is told to drop it; program 100 goes on.
  reg_.ProgramEnded(200, "exit", &out_);
  auto acts = Take();
  EXPECT_EQ(1, Count(acts, Action::kDropProgram));
  EXPECT_EQ(1, Count(acts, Action::kFreeProgram));
  EXPECT_EQ(2, reg_.Running(1));
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
  // Its end frees everything and tells every surviving server (beta ran
  // none of its threads, and may hold its objects all the same).
  reg_.ProgramEnded(100, "failed", &out_);
  acts = Take();
  EXPECT_EQ(1, Count(acts, Action::kDropProgram));
  for (const Action& a : acts)
    if (a.kind == Action::kDropProgram) EXPECT_EQ(2u, a.server);
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

TEST_F(RegistryTest, ProgramEndTellsEveryServer) {
  // s3 ran none of its threads, but may hold its objects all the same.
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.RegisterServer(1, "s1", 1, 0, &out_);
  reg_.RegisterServer(2, "s2", 1, 0, &out_);
  for (uint64_t t = 1; t <= 3; t++) reg_.Submit(100, t, false, &out_);
  reg_.ThreadEnded(1, 100, 1, false, "", &out_);
  reg_.RegisterServer(3, "s3", 1, 0, &out_);  // nothing queued for it now
  EXPECT_EQ(0, reg_.Running(3));
  out_.clear();
  reg_.ProgramEnded(100, "System.exit", &out_);
  auto acts = Take();
  std::set<ServerId> dropped;
  for (const Action& a : acts)
    if (a.kind == Action::kDropProgram) dropped.insert(a.server);
  EXPECT_EQ((std::set<ServerId>{1, 2, 3}), dropped);
  EXPECT_EQ(0, reg_.Running(1));
  EXPECT_EQ(0, reg_.Running(2));
  EXPECT_EQ(0, reg_.Running(3));
  EXPECT_EQ(0, Count(acts, Action::kAssign));
  // A late end report from a server is harmless.
  EXPECT_EQ("", reg_.ThreadEnded(1, 100, 3, false, "", &out_));
  EXPECT_TRUE(reg_.ProgramsOf(7).empty());
}

TEST_F(RegistryTest, ProgramEndDropsItsQueuedThreads) {
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.Submit(100, 1, false, &out_);
  reg_.Submit(100, 2, false, &out_);
  EXPECT_EQ(2u, reg_.QueueLength());
  reg_.ProgramEnded(100, "System.exit", &out_);
  EXPECT_EQ(0u, reg_.QueueLength());
  out_.clear();
  reg_.RegisterServer(1, "s1", 1, 0, &out_);
  EXPECT_EQ(0, Count(Take(), Action::kAssign));
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

// ---- relays: resources, console, exit ---------------------------------------

// The one action of `acts` (fails the test if there is not exactly one).
static Action Only(const std::vector<Action>& acts, Action::Kind k) {
  int n = 0;
  Action r{k};
  for (const Action& a : acts)
    if (a.kind == k) {
      r = a;
      n++;
    }
  EXPECT_EQ(1, n) << "actions of kind " << k;
  return r;
}

TEST_F(RegistryTest, FetchGoesToLauncherAndAnswerBackToRequester) {
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.FetchResource(20, 5, 100, "pkg/Foo.class", &out_);
  Action req = Only(Take(), Action::kResourceRequest);
  EXPECT_EQ(7u, req.conn);
  EXPECT_EQ(100u, req.thread.program);
  EXPECT_EQ("pkg/Foo.class", req.detail);
  EXPECT_EQ(1u, reg_.PendingFetches());
  std::string bytes("\xca\xfe\xba\xbe\0\x01", 6);
  ASSERT_EQ("", reg_.ResourceReply(7, req.request, true, bytes, "", &out_));
  Action data = Only(Take(), Action::kResourceData);
  EXPECT_EQ(20u, data.conn);
  EXPECT_EQ(5u, data.request);  // the requester's own id
  EXPECT_TRUE(data.found);
  EXPECT_EQ(bytes, data.bytes);
  EXPECT_EQ(0u, reg_.PendingFetches());
  // Answered once: a repeated answer is ignored.
  EXPECT_EQ("", reg_.ResourceReply(7, req.request, true, bytes, "", &out_));
  EXPECT_TRUE(Take().empty());
}

TEST_F(RegistryTest, RequesterIdsMayCollideAcrossRequesters) {
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.FetchResource(20, 1, 100, "A.class", &out_);
  reg_.FetchResource(21, 1, 100, "B.class", &out_);
  auto acts = Take();
  ASSERT_EQ(2u, acts.size());
  EXPECT_NE(acts[0].request, acts[1].request);
  // Answer in the other order: each goes to its own requester.
  reg_.ResourceReply(7, acts[1].request, true, "b", "", &out_);
  reg_.ResourceReply(7, acts[0].request, true, "a", "", &out_);
  auto back = Take();
  ASSERT_EQ(2u, back.size());
  EXPECT_EQ(21u, back[0].conn);
  EXPECT_EQ("b", back[0].bytes);
  EXPECT_EQ(20u, back[1].conn);
  EXPECT_EQ("a", back[1].bytes);
}

TEST_F(RegistryTest, NotFoundAndUnreadableAreDistinguished) {
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.FetchResource(20, 1, 100, "Missing.class", &out_);
  reg_.FetchResource(20, 2, 100, "Broken.class", &out_);
  auto reqs = Take();
  reg_.ResourceReply(7, reqs[0].request, false, "", "", &out_);
  reg_.ResourceReply(7, reqs[1].request, false, "", "zip file is corrupt", &out_);
  auto acts = Take();
  ASSERT_EQ(2u, acts.size());
  EXPECT_FALSE(acts[0].found);
  EXPECT_EQ("", acts[0].detail);  // plain "not found"
  EXPECT_FALSE(acts[1].found);
  EXPECT_NE(std::string::npos, acts[1].detail.find("Broken.class")) << acts[1].detail;
  EXPECT_NE(std::string::npos, acts[1].detail.find("zip file is corrupt")) << acts[1].detail;
}

TEST_F(RegistryTest, FetchForUnknownOrEndedProgramIsAnsweredWithError) {
  reg_.FetchResource(20, 3, 555, "pkg/Foo.class", &out_);
  Action a = Only(Take(), Action::kResourceData);
  EXPECT_EQ(20u, a.conn);
  EXPECT_EQ(3u, a.request);
  EXPECT_FALSE(a.found);
  EXPECT_NE(std::string::npos, a.detail.find("pkg/Foo.class")) << a.detail;
  EXPECT_NE(std::string::npos, a.detail.find("no such program")) << a.detail;
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.ProgramEnded(100, "done", &out_);
  out_.clear();
  reg_.FetchResource(20, 4, 100, "pkg/Foo.class", &out_);
  a = Only(Take(), Action::kResourceData);
  EXPECT_FALSE(a.found);
  EXPECT_FALSE(a.detail.empty());
  // Bad names never reach the launcher.
  reg_.RegisterProgram(101, 7, "a", "cp");
  reg_.FetchResource(20, 5, 101, "", &out_);
  reg_.FetchResource(20, 6, 101, std::string(ThreadRegistry::kMaxResourceName + 1, 'x'), &out_);
  auto acts = Take();
  ASSERT_EQ(2u, acts.size());
  for (const Action& e : acts) {
    EXPECT_EQ(Action::kResourceData, e.kind);
    EXPECT_FALSE(e.detail.empty());
  }
  EXPECT_EQ(0u, reg_.PendingFetches());
}

TEST_F(RegistryTest, LauncherGoneAnswersOutstandingFetchesWithError) {
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.RegisterProgram(200, 8, "b", "cp");
  reg_.FetchResource(20, 1, 100, "pkg/A.class", &out_);
  reg_.FetchResource(21, 2, 100, "pkg/B.class", &out_);
  reg_.FetchResource(20, 3, 200, "pkg/C.class", &out_);  // another program: unaffected
  Take();
  reg_.ProgramEnded(100, "launcher disconnected", &out_);
  std::map<ConnId, Action> answers;
  for (const Action& a : Take())
    if (a.kind == Action::kResourceData) answers.emplace(a.conn, a);
  ASSERT_EQ(2u, answers.size());
  EXPECT_EQ(1u, answers.at(20).request);
  EXPECT_EQ(2u, answers.at(21).request);
  for (auto& e : answers) {
    EXPECT_FALSE(e.second.found);
    EXPECT_NE(std::string::npos, e.second.detail.find("launcher disconnected"))
        << e.second.detail;
  }
  EXPECT_NE(std::string::npos, answers.at(21).detail.find("pkg/B.class"));
  EXPECT_EQ(1u, reg_.PendingFetches());
}

TEST_F(RegistryTest, OversizedReplyBecomesErrorNamingTheResource) {
  ThreadRegistry::Options o;
  o.max_resource_bytes = 100;
  ThreadRegistry reg(o);
  reg.RegisterProgram(100, 7, "a", "cp");
  reg.FetchResource(20, 1, 100, "big/Huge.class", &out_);
  reg.FetchResource(20, 2, 100, "big/Fits.class", &out_);
  auto reqs = Take();
  ASSERT_EQ("", reg.ResourceReply(7, reqs[0].request, true, std::string(101, 'x'), "", &out_));
  ASSERT_EQ("", reg.ResourceReply(7, reqs[1].request, true, std::string(100, 'x'), "", &out_));
  auto acts = Take();
  ASSERT_EQ(2u, acts.size());
  EXPECT_FALSE(acts[0].found);
  EXPECT_TRUE(acts[0].bytes.empty());
  EXPECT_NE(std::string::npos, acts[0].detail.find("big/Huge.class")) << acts[0].detail;
  EXPECT_NE(std::string::npos, acts[0].detail.find("101 bytes")) << acts[0].detail;
  EXPECT_TRUE(acts[1].found);
  EXPECT_EQ(100u, acts[1].bytes.size());
  // The default is the wire frame limit less room for the other fields.
  EXPECT_EQ((16u << 20) - (64u << 10), ThreadRegistry::Options().max_resource_bytes);
}

TEST_F(RegistryTest, OnlyTheLauncherAnswersAndRequesterGoneDropsFetch) {
  reg_.RegisterProgram(100, 7, "a", "cp");
  reg_.FetchResource(20, 1, 100, "A.class", &out_);
  Action req = Only(Take(), Action::kResourceRequest);
  EXPECT_NE("", reg_.ResourceReply(20, req.request, true, "x", "", &out_));  // not the launcher
  EXPECT_NE("", reg_.ResourceReply(7, 9999, true, "x", "", &out_));          // never issued
  EXPECT_TRUE(Take().empty());
  EXPECT_EQ(1u, reg_.PendingFetches());
  reg_.ConnGone(20);  // the requester left: nobody to answer
  EXPECT_EQ(0u, reg_.PendingFetches());
  EXPECT_EQ("", reg_.ResourceReply(7, req.request, true, "x", "", &out_));  // late: ignored
  EXPECT_TRUE(Take().empty());
}

TEST_F(RegistryTest, ConsoleGoesToLauncherUnknownProgramDropped) {
  reg_.RegisterProgram(100, 7, "a", "cp");
  ASSERT_EQ("", reg_.Console(100, 42, 2, "oops\n", &out_));
  Action a = Only(Take(), Action::kConsole);
  EXPECT_EQ(7u, a.conn);
  EXPECT_EQ(100u, a.thread.program);
  EXPECT_EQ(42u, a.thread.thread);
  EXPECT_EQ(2u, a.stream);
  EXPECT_EQ("oops\n", a.bytes);
  EXPECT_NE("", reg_.Console(555, 1, 1, "lost", &out_));
  EXPECT_NE("", reg_.Console(100, 1, 5, "bad stream", &out_));
  EXPECT_NE("", reg_.Console(100, 1, 0, "bad stream", &out_));
  ASSERT_EQ("", reg_.Console(100, 42, 3, "raw\n", &out_));
  EXPECT_EQ(3u, Only(Take(), Action::kConsole).stream);
  EXPECT_TRUE(Take().empty());
}

// An unpark goes to the node running the thread: its server, or the
// launcher for a thread the manager never placed (main); nothing for one
// queued or ended (unpark has no effect there in Java).
TEST_F(RegistryTest, UnparkGoesWhereTheThreadRuns) {
  reg_.RegisterProgram(100, 7, "a", "cp");
  ASSERT_EQ("", reg_.Submit(100, 1, false, &out_));  // queued: no server yet
  Take();
  ASSERT_EQ("", reg_.Unpark(100, 1, false, &out_));
  EXPECT_TRUE(Take().empty());
  reg_.RegisterServer(3, "s3", 4, 0, &out_);  // runs thread 1
  Take();
  ASSERT_EQ("", reg_.Unpark(100, 1, false, &out_));
  Action a = Only(Take(), Action::kUnpark);
  EXPECT_EQ(3u, a.server);
  EXPECT_EQ(100u, a.thread.program);
  EXPECT_EQ(1u, a.thread.thread);
  ASSERT_EQ("", reg_.Unpark(100, 99, true, &out_));  // main, say
  a = Only(Take(), Action::kUnpark);
  EXPECT_EQ(0u, a.server);
  EXPECT_EQ(7u, a.conn);
  EXPECT_EQ(99u, a.thread.thread);
  EXPECT_EQ(1, a.status) << "an interrupt stays one";
  ASSERT_EQ("", reg_.ThreadEnded(3, 100, 1, false, "", &out_));
  Take();
  ASSERT_EQ("", reg_.Unpark(100, 1, false, &out_));
  EXPECT_TRUE(Take().empty());
  EXPECT_NE("", reg_.Unpark(555, 1, false, &out_));  // unknown program: dropped, said why
  EXPECT_TRUE(Take().empty());
}

TEST_F(RegistryTest, OnlyTheFirstExitCounts) {
  reg_.RegisterProgram(100, 7, "a", "cp");
  ASSERT_EQ("", reg_.Exit(100, 3, "thread 5 on server s1", &out_));
  Action a = Only(Take(), Action::kExit);
  EXPECT_EQ(7u, a.conn);
  EXPECT_EQ(100u, a.thread.program);
  EXPECT_EQ(3, a.status);
  EXPECT_EQ("thread 5 on server s1", a.detail);
  std::string why = reg_.Exit(100, 4, "thread 6", &out_);
  EXPECT_NE(std::string::npos, why.find("already exiting with status 3")) << why;
  EXPECT_TRUE(Take().empty());
  EXPECT_NE("", reg_.Exit(555, 1, "x", &out_));  // unknown program
  EXPECT_TRUE(Take().empty());
  // The program still ends the usual way (its launcher's ProgramEnd).
  reg_.ProgramEnded(100, "System.exit(3)", &out_);
  EXPECT_EQ(1, Count(Take(), Action::kFreeProgram));
}

// ---- statistics gather -----------------------------------------------------

// A program with threads on s1 and s2 (capacity 1 each) of three servers.
static void TwoServersRanProgram100(ThreadRegistry* reg, std::vector<Action>* out) {
  reg->RegisterServer(1, "s1", 1, 0, out);
  reg->RegisterServer(2, "s2", 1, 0, out);
  reg->RegisterProgram(100, 7, "a", "cp");
  reg->Submit(100, 1, false, out);
  reg->Submit(100, 2, false, out);
  reg->ThreadEnded(1, 100, 1, false, "", out);
  reg->RegisterServer(3, "s3", 1, 0, out);  // ran nothing of program 100
  out->clear();
}

static std::map<ServerId, uint64_t> StatisticsRequests(const std::vector<Action>& acts) {
  std::map<ServerId, uint64_t> r;
  for (const Action& a : acts)
    if (a.kind == Action::kStatisticsRequest) r[a.server] = a.request;
  return r;
}

TEST_F(RegistryTest, StatisticsGatherAsksTheServersThatRanThreadsAndAnswersOnce) {
  TwoServersRanProgram100(&reg_, &out_);
  reg_.GatherStatistics(7, 41, 100, 1000, &out_);
  auto asked = StatisticsRequests(Take());
  ASSERT_EQ(2u, asked.size());  // s1 (its thread ended) and s2, not s3
  ASSERT_TRUE(asked.count(1) && asked.count(2));
  EXPECT_EQ(1u, reg_.PendingGathers());
  ASSERT_EQ("", reg_.StatisticsReply(2, asked[2], "stats of s2\n", &out_));
  EXPECT_TRUE(Take().empty());  // still waiting for s1
  ASSERT_EQ("", reg_.StatisticsReply(1, asked[1], "stats of s1\n", &out_));
  Action data = Only(Take(), Action::kStatisticsData);
  EXPECT_EQ(7u, data.conn);
  EXPECT_EQ(41u, data.request);  // the launcher's own id
  EXPECT_EQ("", data.detail);
  ASSERT_EQ(2u, data.statistics.size());
  EXPECT_EQ("s1", data.statistics[0].server);  // ordered by name
  EXPECT_EQ("stats of s1\n", data.statistics[0].text);
  EXPECT_EQ("s2", data.statistics[1].server);
  EXPECT_EQ("", data.statistics[1].error);
  EXPECT_EQ(0u, reg_.PendingGathers());
  // Answered once: a repeated reply is ignored, one never asked for is an error.
  EXPECT_EQ("", reg_.StatisticsReply(1, asked[1], "again", &out_));
  EXPECT_NE("", reg_.StatisticsReply(1, 9999, "never asked", &out_));
  EXPECT_TRUE(Take().empty());
}

TEST_F(RegistryTest, StatisticsGatherRefusesOthersAndAnswersAtOnceWithoutServers) {
  TwoServersRanProgram100(&reg_, &out_);
  reg_.GatherStatistics(20, 1, 100, 0, &out_);  // not the launcher
  Action a = Only(Take(), Action::kStatisticsData);
  EXPECT_EQ(20u, a.conn);
  EXPECT_NE(std::string::npos, a.detail.find("not its launcher")) << a.detail;
  reg_.GatherStatistics(7, 2, 555, 0, &out_);  // no such program
  a = Only(Take(), Action::kStatisticsData);
  EXPECT_NE(std::string::npos, a.detail.find("no such program")) << a.detail;
  reg_.RegisterProgram(200, 8, "b", "cp");  // ran no thread anywhere
  reg_.GatherStatistics(8, 3, 200, 0, &out_);
  a = Only(Take(), Action::kStatisticsData);
  EXPECT_EQ("", a.detail);
  EXPECT_TRUE(a.statistics.empty());
  EXPECT_EQ(0u, reg_.PendingGathers());
}

TEST_F(RegistryTest, StatisticsGatherNamesServersThatLeftOrDidNotAnswerInTime) {
  TwoServersRanProgram100(&reg_, &out_);
  for (ServerId s = 1; s <= 3; s++) reg_.Heartbeat(s, 1000);
  reg_.GatherStatistics(7, 5, 100, 1000, &out_);
  auto asked = StatisticsRequests(Take());
  EXPECT_EQ(1000 + ThreadRegistry::Options().statistics_timeout_ms, reg_.NextDeadline());
  reg_.ServerGone(2, "disconnected", &out_);
  for (const Action& a : Take()) EXPECT_NE(Action::kStatisticsData, a.kind);
  reg_.Tick(1000 + 2999, &out_);  // not yet
  for (const Action& a : Take()) EXPECT_NE(Action::kStatisticsData, a.kind);
  reg_.Heartbeat(1, 4000);
  reg_.Heartbeat(3, 4000);
  reg_.Tick(1000 + 3000, &out_);
  Action data = Only(Take(), Action::kStatisticsData);
  ASSERT_EQ(2u, data.statistics.size());
  EXPECT_EQ("s1", data.statistics[0].server);
  EXPECT_NE(std::string::npos, data.statistics[0].error.find("no answer within 3000 ms"))
      << data.statistics[0].error;
  EXPECT_EQ("s2", data.statistics[1].server);
  EXPECT_NE(std::string::npos, data.statistics[1].error.find("disconnected"))
      << data.statistics[1].error;
  EXPECT_EQ("", reg_.StatisticsReply(1, asked[1], "late", &out_));  // ignored
  EXPECT_TRUE(Take().empty());
}

TEST_F(RegistryTest, StatisticsGatherEndsWithItsProgramOrItsLauncher) {
  TwoServersRanProgram100(&reg_, &out_);
  reg_.GatherStatistics(7, 5, 100, 0, &out_);
  auto asked = StatisticsRequests(Take());
  std::string huge(ThreadRegistry::kMaxStatisticsText + 1000, 'x');
  reg_.StatisticsReply(1, asked[1], huge, &out_);
  reg_.ProgramEnded(100, "System.exit", &out_);
  Action data = Only(Take(), Action::kStatisticsData);
  ASSERT_EQ(2u, data.statistics.size());
  EXPECT_LT(data.statistics[0].text.size(), huge.size());
  EXPECT_NE(std::string::npos, data.statistics[0].text.find("cut at")) << "said it was cut";
  EXPECT_NE(std::string::npos, data.statistics[1].error.find("System.exit"));
  // A launcher that leaves drops its gather: nobody to answer.
  reg_.RegisterProgram(300, 9, "c", "cp");
  reg_.Submit(300, 1, false, &out_);
  Take();
  reg_.GatherStatistics(9, 6, 300, 0, &out_);
  EXPECT_EQ(1u, StatisticsRequests(Take()).size());
  reg_.ConnGone(9);
  EXPECT_EQ(0u, reg_.PendingGathers());
}

}  // namespace
}  // namespace tm
}  // namespace djava
