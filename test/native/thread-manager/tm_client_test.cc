// The real TmClient against the real TmService, joined in one process by
// memory channels: registration, placement, lifecycle events, join, and
// server failure (disconnect and missed heartbeats); the relays to the
// launcher (resources, console, exit, statistics).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "inproc.h"
#include "tm_capi_internal.h"
#include "tm_client.h"

namespace djava {
namespace tm {
namespace {

class TmClientTest : public ::testing::Test {
 protected:
  static TmService::Options Opts() {
    TmService::Options o;
    o.sos_servers = {"127.0.0.1:7001", "127.0.0.1:7002"};
    o.heartbeat_interval_ms = 20;
    o.registry.liveness_timeout_ms = 300;
    o.registry.statistics_timeout_ms = 300;
    return o;
  }
  TmClientTest() : host_(Opts()) {}
  std::unique_ptr<TmClient> Client() { return std::make_unique<TmClient>(host_.Connect()); }
  // Next event of `kind`, skipping others; fails the test after 5 s.
  static djava_tm_event Expect(TmClient* c, int kind) {
    djava_tm_event ev;
    for (int i = 0; i < 100; i++) {
      if (c->NextEvent(&ev, 5000) != 1) break;
      if (ev.kind == kind) return ev;
      djava_tm_buffer_free(&ev.data);
    }
    ADD_FAILURE() << "no event of kind " << kind;
    return ev;
  }
  test::InProcTmHost host_;
};

TEST_F(TmClientTest, ThreadsSpreadRunAndEnd) {
  auto s1 = Client(), s2 = Client(), launcher = Client();
  uint64_t id1 = 0, id2 = 0;
  ASSERT_EQ("", s1->RegisterServer("s1", 4, &id1));
  ASSERT_EQ("", s2->RegisterServer("s2", 4, &id2));
  EXPECT_NE(id1, id2);
  EXPECT_EQ(2u, s1->SosServers().size());
  ASSERT_EQ("", launcher->RegisterProgram(9, "node:1", "/cp"));
  EXPECT_EQ("127.0.0.1:7001", launcher->SosServers()[0]);
  for (uint64_t t = 1; t <= 4; t++) ASSERT_EQ("", launcher->Submit(9, t, false));
  int on1 = 0, on2 = 0;
  std::vector<djava_tm_event> got1, got2;
  for (int i = 0; i < 2; i++) got1.push_back(Expect(s1.get(), DJAVA_TM_EV_ASSIGN));
  for (int i = 0; i < 2; i++) got2.push_back(Expect(s2.get(), DJAVA_TM_EV_ASSIGN));
  on1 = got1.size();
  on2 = got2.size();
  EXPECT_EQ(2, on1);
  EXPECT_EQ(2, on2);
  EXPECT_STREQ("/cp", got1[0].classpath);
  // One thread ends normally, one by an exception.
  auto& first = got1[0];
  ASSERT_EQ("", s1->ThreadEnded(9, first.thread, false, ""));
  EXPECT_EQ(DJAVA_TM_ENDED, launcher->WaitThread(9, first.thread, 5000));
  auto& second = got2[0];
  ASSERT_EQ("", s2->ThreadEnded(9, second.thread, true, "java.lang.Error: x"));
  EXPECT_EQ(DJAVA_TM_ENDED_BY_EXCEPTION, launcher->WaitThread(9, second.thread, 5000));
  // join() from another node (a server) works too.
  auto other = Client();
  EXPECT_EQ(0, other->WaitThread(9, got1[1].thread, 50));  // still running: times out
  s1->ThreadEnded(9, got1[1].thread, false, "");
  EXPECT_EQ(DJAVA_TM_ENDED, other->WaitThread(9, got1[1].thread, 5000));
  s2->ThreadEnded(9, got2[1].thread, false, "");
  EXPECT_EQ(DJAVA_TM_ENDED, launcher->WaitThread(9, got2[1].thread, 5000));
  // The launcher's last state event says no non-daemon thread is left.
  djava_tm_event ev, last{};
  std::vector<uint32_t> live_at_end;
  while (launcher->NextEvent(&ev, 100) == 1) {
    if (ev.kind != DJAVA_TM_EV_STATE) continue;
    last = ev;
    if (ev.state >= DJAVA_TM_ENDED) live_at_end.push_back(ev.live_non_daemon);
  }
  EXPECT_EQ(DJAVA_TM_ENDED, last.state);
  // (join's Watch answers repeat the current state: drop repeats.)
  live_at_end.erase(std::unique(live_at_end.begin(), live_at_end.end()), live_at_end.end());
  EXPECT_EQ((std::vector<uint32_t>{3, 2, 1, 0}), live_at_end);
}

// The launcher learns its program's processor count at registration and
// every server placed a thread of it gets the same count with the thread.
TEST_F(TmClientTest, EveryNodeOfAProgramLearnsItsProcessors) {
  auto s1 = Client(), s2 = Client(), launcher = Client(), sized = Client();
  ASSERT_EQ("", s1->RegisterServer("s1", 3, nullptr));
  ASSERT_EQ("", s2->RegisterServer("s2", 2, nullptr));
  uint32_t processors = 0;
  ASSERT_EQ("", launcher->RegisterProgram(9, "node:1", "/cp", 0, 1, &processors));
  EXPECT_EQ(5u, processors);
  uint32_t overridden = 0;
  ASSERT_EQ("", sized->RegisterProgram(10, "node:2", "/cp", 16, 1, &overridden));
  EXPECT_EQ(16u, overridden);
  ASSERT_EQ("", launcher->Submit(9, 1, false));
  ASSERT_EQ("", launcher->Submit(9, 2, false));
  ASSERT_EQ("", sized->Submit(10, 3, false));
  std::map<uint64_t, uint32_t> by_program;  // each program's count, from every assignment
  std::set<TmClient*> servers_used;
  for (int i = 0; i < 3; i++) {
    djava_tm_event ev;
    TmClient* server = nullptr;
    for (int tries = 0; tries < 500 && server == nullptr; tries++) {
      for (TmClient* s : {s1.get(), s2.get()}) {
        if (server == nullptr && s->NextEvent(&ev, 10) == 1 && ev.kind == DJAVA_TM_EV_ASSIGN)
          server = s;
      }
    }
    ASSERT_NE(nullptr, server) << "assignment " << i << " never arrived";
    servers_used.insert(server);
    auto seen = by_program.emplace(ev.program, ev.processors);
    EXPECT_EQ(seen.first->second, ev.processors) << "program " << ev.program;
  }
  EXPECT_EQ(2u, servers_used.size());
  EXPECT_EQ((std::map<uint64_t, uint32_t>{{9, 5}, {10, 16}}), by_program);
}

// A thread's inheritable thread-locals (a shared snapshot's id) reach the
// server that runs it, whether the thread waited in the queue or not.
TEST_F(TmClientTest, InheritedLocalsTravelWithTheThread) {
  auto launcher = Client();
  ASSERT_EQ("", launcher->RegisterProgram(9, "node:1", "/cp"));
  ASSERT_EQ("", launcher->Submit(9, 1, false, 0x7700000001ULL));  // queued: no server yet
  auto server = Client();
  ASSERT_EQ("", server->RegisterServer("s1", 4, nullptr));
  ASSERT_EQ("", launcher->Submit(9, 2, false));
  std::map<uint64_t, uint64_t> inherited;  // thread -> what its assignment carried
  for (int i = 0; i < 2; i++) {
    auto ev = Expect(server.get(), DJAVA_TM_EV_ASSIGN);
    inherited[ev.thread] = ev.inherited_locals;
  }
  EXPECT_EQ((std::map<uint64_t, uint64_t>{{1, 0x7700000001ULL}, {2, 0}}), inherited);
}

// Thread.getState of a thread another node runs: the question reaches the
// node running it (a server, or the launcher for its own threads), whose
// answer comes back to the asker; a thread that runs nowhere is answered -1
// by the manager at once.
TEST_F(TmClientTest, ThreadStateQueriesGoWhereTheThreadRuns) {
  auto launcher = Client(), server = Client(), asker = Client();
  ASSERT_EQ("", server->RegisterServer("s1", 4, nullptr));
  ASSERT_EQ("", launcher->RegisterProgram(9, "node:1", "/cp"));
  ASSERT_EQ("", launcher->Submit(9, 1, false));
  Expect(server.get(), DJAVA_TM_EV_ASSIGN);
  // The node running the thread answers what it knows.
  std::thread answering([&] {
    for (TmClient* node : {server.get(), launcher.get()}) {
      auto q = Expect(node, DJAVA_TM_EV_STATE_QUERY);
      int32_t status = q.thread == 1 ? 401 : q.thread == 77 ? 5 : -7;
      EXPECT_EQ("", node->AnswerThreadState(q.request_id, q.reply_to, status));
    }
  });
  int32_t status = 0;
  ASSERT_EQ("", asker->QueryThreadState(9, 1, 5000, &status));
  EXPECT_EQ(401, status);  // the server's answer for thread 1
  ASSERT_EQ("", asker->QueryThreadState(9, 77, 5000, &status));
  EXPECT_EQ(5, status);    // never placed: the launcher runs it (main)
  answering.join();
  ASSERT_EQ("", asker->QueryThreadState(12345, 1, 5000, &status));
  EXPECT_EQ(-1, status);   // an unknown program: nobody runs it
}

// Thread.getStackTrace of a thread another node runs: the question says the
// stack is wanted, and the running node's frames (any bytes) come back with
// its state; a thread that runs nowhere has none.
TEST_F(TmClientTest, StackTraceQueriesBringTheRunningNodesFrames) {
  auto launcher = Client(), server = Client(), asker = Client();
  ASSERT_EQ("", server->RegisterServer("s1", 4, nullptr));
  ASSERT_EQ("", launcher->RegisterProgram(9, "node:1", "/cp"));
  ASSERT_EQ("", launcher->Submit(9, 1, false));
  Expect(server.get(), DJAVA_TM_EV_ASSIGN);
  const std::string frames("2;frames\0with a NUL", 19);
  std::thread answering([&] {
    auto q = Expect(server.get(), DJAVA_TM_EV_STATE_QUERY);
    EXPECT_EQ(1, q.status);  // the stack is wanted
    EXPECT_EQ("", server->AnswerThreadState(q.request_id, q.reply_to, 401, frames));
    q = Expect(server.get(), DJAVA_TM_EV_STATE_QUERY);
    EXPECT_EQ(0, q.status);  // the state alone
    EXPECT_EQ("", server->AnswerThreadState(q.request_id, q.reply_to, 401));
  });
  int32_t status = 0;
  std::string stack;
  ASSERT_EQ("", asker->QueryThreadState(9, 1, 5000, &status, &stack));
  EXPECT_EQ(401, status);
  EXPECT_EQ(frames, stack);
  ASSERT_EQ("", asker->QueryThreadState(9, 1, 5000, &status));
  EXPECT_EQ(401, status);
  answering.join();
  stack = "stale";
  ASSERT_EQ("", asker->QueryThreadState(12345, 1, 5000, &status, &stack));
  EXPECT_EQ(-1, status);
  EXPECT_EQ("", stack);
}

TEST_F(TmClientTest, RejectedRequestsAreReportedNotFatal) {
  auto launcher = Client();
  ASSERT_EQ("", launcher->RegisterProgram(9, "n", "cp"));
  EXPECT_NE("", launcher->RegisterProgram(9, "n", "cp"));  // duplicate id
  launcher->Submit(12345, 1, false);                        // unknown program
  auto ev = Expect(launcher.get(), DJAVA_TM_EV_ERROR);  // the duplicate, as an event too
  EXPECT_NE(nullptr, std::strstr(ev.detail, "already registered")) << ev.detail;
  ev = Expect(launcher.get(), DJAVA_TM_EV_ERROR);
  EXPECT_NE(nullptr, std::strstr(ev.detail, "unknown program")) << ev.detail;
  ASSERT_EQ("", launcher->Submit(9, 1, false));  // connection still usable
  EXPECT_EQ(DJAVA_TM_QUEUED, Expect(launcher.get(), DJAVA_TM_EV_STATE).state);
}

TEST_F(TmClientTest, ServerDisconnectFailsProgramNamingServer) {
  auto s1 = Client(), launcher = Client();
  ASSERT_EQ("", s1->RegisterServer("doomed-server", 2, nullptr));
  ASSERT_EQ("", launcher->RegisterProgram(9, "n", "cp"));
  launcher->Submit(9, 1, false);
  Expect(s1.get(), DJAVA_TM_EV_ASSIGN);
  s1.reset();  // the server process dies
  auto ev = Expect(launcher.get(), DJAVA_TM_EV_PROGRAM_FAILED);
  EXPECT_NE(nullptr, std::strstr(ev.detail, "doomed-server")) << ev.detail;
  EXPECT_EQ(DJAVA_TM_FAILED, launcher->WaitThread(9, 1, 5000));
}

TEST_F(TmClientTest, MissedHeartbeatsFailProgramAndDropServer) {
  auto s1 = Client(), s2 = Client(), launcher = Client();
  ASSERT_EQ("", s1->RegisterServer("hung-server", 1, nullptr));
  ASSERT_EQ("", launcher->RegisterProgram(9, "n", "cp"));
  launcher->Submit(9, 1, false);
  Expect(s1.get(), DJAVA_TM_EV_ASSIGN);
  s1->PauseHeartbeats(true);
  auto ev = Expect(launcher.get(), DJAVA_TM_EV_PROGRAM_FAILED);
  EXPECT_NE(nullptr, std::strstr(ev.detail, "hung-server")) << ev.detail;
  EXPECT_NE(nullptr, std::strstr(ev.detail, "liveness")) << ev.detail;
  // The manager closed the hung server's connection.
  EXPECT_EQ(DJAVA_TM_EV_DISCONNECTED, Expect(s1.get(), DJAVA_TM_EV_DISCONNECTED).kind);
}

TEST_F(TmClientTest, LauncherDisconnectEndsProgramEverywhere) {
  auto s1 = Client(), launcher = Client();
  ASSERT_EQ("", s1->RegisterServer("s1", 1, nullptr));
  ASSERT_EQ("", launcher->RegisterProgram(9, "n", "cp"));
  launcher->Submit(9, 1, false);
  launcher->Submit(9, 2, false);  // queued: capacity 1
  Expect(s1.get(), DJAVA_TM_EV_ASSIGN);
  launcher.reset();  // the launcher is killed
  auto ev = Expect(s1.get(), DJAVA_TM_EV_DROP_PROGRAM);
  EXPECT_EQ(9u, ev.program);
  for (int i = 0; i < 200 && host_.freed().empty(); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(std::vector<ProgramId>{9}, host_.freed());
  // The queued thread never ran; the server is free for the next program.
  auto l2 = Client();
  ASSERT_EQ("", l2->RegisterProgram(10, "n", "cp"));
  l2->Submit(10, 1, false);
  EXPECT_EQ(10u, Expect(s1.get(), DJAVA_TM_EV_ASSIGN).program);
}

}  // namespace
}  // namespace tm
}  // namespace djava

namespace djava {
namespace tm {
namespace {

TEST_F(TmClientTest, EmptyMessageClosesOnlyThatConnection) {
  auto good = Client();
  ASSERT_EQ("", good->RegisterProgram(5, "n", "cp"));
  std::unique_ptr<Channel> raw = host_.Connect();
  ASSERT_TRUE(raw->Send(tmpb::TmClientMessage()));  // no body
  tmpb::TmServerMessage m;
  EXPECT_FALSE(raw->Receive(&m));  // closed by the manager
  ASSERT_EQ("", good->Submit(5, 1, false));
  djava_tm_event ev;
  ASSERT_EQ(1, good->NextEvent(&ev, 5000));
  EXPECT_EQ(DJAVA_TM_EV_STATE, ev.kind);
}

}  // namespace
}  // namespace tm
}  // namespace djava

// ---- relays: resources, console, exit ---------------------------------------

namespace djava {
namespace tm {
namespace {

using Clock = std::chrono::steady_clock;

std::string Str(const djava_tm_buffer& b) {
  return std::string(reinterpret_cast<const char*>(b.data), b.len);
}

// What the test launcher serves: binary content derived from the name.
std::string ContentOf(const std::string& name) {
  std::string s = "\xca\xfe\xba\xbe";
  s.push_back('\0');
  s += name;
  for (size_t i = 0; i < name.size() * 37 % 5000; i++) s.push_back(static_cast<char>(i * 7));
  return s;
}

// A launcher that answers resource requests on its own thread: names under
// "missing/" are not found, "broken/" cannot be read, "hold/" are never
// answered; the rest is ContentOf(name). It collects up to `batch`
// requests (or what came within 50 ms) and answers them in reverse order,
// so that many are outstanding at once and answers overtake each other.
class ServingLauncher {
 public:
  ServingLauncher(std::unique_ptr<TmClient> c, ProgramId program, size_t batch = 1)
      : c_(std::move(c)), batch_(batch) {
    EXPECT_EQ("", c_->RegisterProgram(program, "launcher", "/cp"));
    thread_ = std::thread([this] { Loop(); });
  }
  ~ServingLauncher() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  TmClient* client() { return c_.get(); }
  std::unique_ptr<TmClient> Release() {
    Stop();
    return std::move(c_);
  }
  int requests() const { return requests_; }
  int held() const { return held_; }

 private:
  void Loop() {
    std::vector<std::pair<uint64_t, std::string>> pending;
    while (!stop_) {
      djava_tm_event ev;
      int r = c_->NextEvent(&ev, pending.empty() ? 20 : 50);
      if (r < 0) return;
      if (r == 1 && ev.kind == DJAVA_TM_EV_RESOURCE_REQUEST) {
        requests_++;
        std::string name = Str(ev.data);
        EXPECT_STREQ(name.c_str(), ev.detail);
        if (name.rfind("hold/", 0) == 0) {
          held_++;
        } else {
          pending.emplace_back(ev.request_id, name);
        }
      }
      if (r == 1) djava_tm_buffer_free(&ev.data);
      if (pending.empty() || (r == 1 && pending.size() < batch_)) continue;
      for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
        const std::string& name = it->second;
        if (name.rfind("missing/", 0) == 0) {
          EXPECT_EQ("", c_->AnswerResource(it->first, false, nullptr, 0, ""));
        } else if (name.rfind("broken/", 0) == 0) {
          EXPECT_EQ("", c_->AnswerResource(it->first, false, nullptr, 0, "disk on fire"));
        } else {
          std::string content = ContentOf(name);
          EXPECT_EQ("", c_->AnswerResource(it->first, true, content.data(), content.size(), ""));
        }
      }
      pending.clear();
    }
  }

  std::unique_ptr<TmClient> c_;
  size_t batch_;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::atomic<int> held_{0};
  std::thread thread_;
};

TEST_F(TmClientTest, ResourcesFetchedFromLauncherManyAtOnce) {
  ServingLauncher launcher(Client(), 9, /*batch=*/8);
  auto s1 = Client(), s2 = Client();
  ASSERT_EQ("", s1->RegisterServer("s1", 4, nullptr));
  ASSERT_EQ("", s2->RegisterServer("s2", 4, nullptr));
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; t++) {
    TmClient* c = t % 2 ? s1.get() : s2.get();
    threads.emplace_back([c, t, &good] {
      for (int i = 0; i < 25; i++) {
        std::string name = "pkg" + std::to_string(t) + "/C" + std::to_string(i) + ".class";
        std::string data, error;
        int r = c->FetchResource(9, name, 10000, &data, &error);
        EXPECT_EQ(DJAVA_TM_FETCH_FOUND, r) << name << ": " << error;
        EXPECT_EQ(ContentOf(name), data) << name;
        good += r == DJAVA_TM_FETCH_FOUND && data == ContentOf(name);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(200, good.load());
  EXPECT_EQ(200, launcher.requests());
  // Not found and unreadable are told apart.
  std::string data, error;
  EXPECT_EQ(DJAVA_TM_FETCH_NOT_FOUND, s1->FetchResource(9, "missing/X.class", 5000, &data, &error));
  EXPECT_NE(std::string::npos, error.find("missing/X.class")) << error;
  EXPECT_EQ(DJAVA_TM_FETCH_ERROR, s1->FetchResource(9, "broken/Y.class", 5000, &data, &error));
  EXPECT_NE(std::string::npos, error.find("broken/Y.class")) << error;
  EXPECT_NE(std::string::npos, error.find("disk on fire")) << error;
}

TEST_F(TmClientTest, FetchForUnknownProgramIsAnErrorNotAHang) {
  auto s1 = Client();
  std::string data, error;
  auto t0 = Clock::now();
  EXPECT_EQ(DJAVA_TM_FETCH_ERROR, s1->FetchResource(4242, "pkg/Foo.class", 10000, &data, &error));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_NE(std::string::npos, error.find("pkg/Foo.class")) << error;
  EXPECT_NE(std::string::npos, error.find("no such program")) << error;
}

TEST_F(TmClientTest, LauncherDisconnectAnswersOutstandingFetchWithError) {
  auto launcher = std::make_unique<ServingLauncher>(Client(), 9);
  auto s1 = Client();
  int result = 0;
  std::string error;
  std::thread fetcher([&] {
    std::string data;
    result = s1->FetchResource(9, "hold/pkg/Foo.class", 10000, &data, &error);
  });
  for (int i = 0; i < 500 && launcher->held() == 0; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(1, launcher->held());  // the request reached the launcher, which holds it
  auto t0 = Clock::now();
  launcher.reset();  // the launcher dies with the fetch outstanding
  fetcher.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(DJAVA_TM_FETCH_ERROR, result);
  EXPECT_NE(std::string::npos, error.find("hold/pkg/Foo.class")) << error;
  EXPECT_NE(std::string::npos, error.find("launcher disconnected")) << error;
}

TEST_F(TmClientTest, FetchTimesOutAndLateAnswerIsHarmless) {
  auto launcher = Client(), s1 = Client();
  ASSERT_EQ("", launcher->RegisterProgram(9, "l", "cp"));
  std::string data, error;
  EXPECT_EQ(DJAVA_TM_FETCH_TIMEOUT, s1->FetchResource(9, "slow/A.class", 100, &data, &error));
  EXPECT_NE(std::string::npos, error.find("slow/A.class")) << error;
  auto ev = Expect(launcher.get(), DJAVA_TM_EV_RESOURCE_REQUEST);
  EXPECT_EQ("slow/A.class", Str(ev.data));
  djava_tm_buffer_free(&ev.data);
  EXPECT_EQ("", launcher->AnswerResource(ev.request_id, true, "late", 4, ""));
  // The next fetch gets its own answer, not the late one.
  std::thread answer([&] {
    auto e = Expect(launcher.get(), DJAVA_TM_EV_RESOURCE_REQUEST);
    djava_tm_buffer_free(&e.data);
    launcher->AnswerResource(e.request_id, true, "fresh", 5, "");
  });
  EXPECT_EQ(DJAVA_TM_FETCH_FOUND, s1->FetchResource(9, "slow/B.class", 5000, &data, &error));
  EXPECT_EQ("fresh", data);
  answer.join();
}

TEST_F(TmClientTest, OversizedAnswerIsAnErrorNamingTheResource) {
  auto launcher = Client(), s1 = Client();
  ASSERT_EQ("", launcher->RegisterProgram(9, "l", "cp"));
  std::string data, error;
  int result = 0;
  std::thread fetcher([&] { result = s1->FetchResource(9, "big/Huge.bin", 20000, &data, &error); });
  auto ev = Expect(launcher.get(), DJAVA_TM_EV_RESOURCE_REQUEST);
  djava_tm_buffer_free(&ev.data);
  // Larger than a frame may carry: the client answers with an error instead
  // (sending it would cost the launcher its connection).
  std::string huge(DJAVA_TM_MAX_RESOURCE_BYTES + 1, 'h');
  std::string why = launcher->AnswerResource(ev.request_id, true, huge.data(), huge.size(), "");
  EXPECT_NE(std::string::npos, why.find("big/Huge.bin")) << why;
  fetcher.join();
  EXPECT_EQ(DJAVA_TM_FETCH_ERROR, result);
  EXPECT_NE(std::string::npos, error.find("big/Huge.bin")) << error;
  EXPECT_NE(std::string::npos, error.find(std::to_string(huge.size()) + " bytes")) << error;
  // The launcher's connection is fine: the largest allowed size travels.
  std::thread fetch2([&] { result = s1->FetchResource(9, "big/Max.bin", 20000, &data, &error); });
  ev = Expect(launcher.get(), DJAVA_TM_EV_RESOURCE_REQUEST);
  djava_tm_buffer_free(&ev.data);
  huge.pop_back();
  EXPECT_EQ("", launcher->AnswerResource(ev.request_id, true, huge.data(), huge.size(), ""));
  fetch2.join();
  EXPECT_EQ(DJAVA_TM_FETCH_FOUND, result) << error;
  EXPECT_EQ(huge.size(), data.size());
  EXPECT_TRUE(data == huge);
}

TEST(TmRelayLimits, ManagerRefusesAnswerAboveItsLimit) {
  TmService::Options o;
  o.registry.max_resource_bytes = 1000;
  test::InProcTmHost host(o);
  TmClient launcher(host.Connect()), s1(host.Connect());
  ASSERT_EQ("", launcher.RegisterProgram(9, "l", "cp"));
  std::string data, error;
  int result = 0;
  std::thread fetcher([&] { result = s1.FetchResource(9, "pkg/Big.class", 10000, &data, &error); });
  djava_tm_event ev;
  ASSERT_EQ(1, launcher.NextEvent(&ev, 5000));
  ASSERT_EQ(DJAVA_TM_EV_RESOURCE_REQUEST, ev.kind);
  djava_tm_buffer_free(&ev.data);
  std::string big(1001, 'b');
  EXPECT_EQ("", launcher.AnswerResource(ev.request_id, true, big.data(), big.size(), ""));
  fetcher.join();
  EXPECT_EQ(DJAVA_TM_FETCH_ERROR, result);
  EXPECT_NE(std::string::npos, error.find("pkg/Big.class")) << error;
  EXPECT_NE(std::string::npos, error.find("1001 bytes")) << error;
}

TEST_F(TmClientTest, CAbiFetchAnswerAndBufferOwnership) {
  auto* launcher = new djava_tm_client;
  launcher->impl = Client();
  auto* server = new djava_tm_client;
  server->impl = Client();
  ASSERT_EQ(0, djava_tm_register_program(launcher, 9, "l", "cp"));
  std::thread serve([launcher] {
    for (int answered = 0; answered < 2;) {
      djava_tm_event ev;
      if (djava_tm_next_event(launcher, &ev, 5000) != 1) return;
      if (ev.kind == DJAVA_TM_EV_RESOURCE_REQUEST) {
        std::string name(reinterpret_cast<char*>(ev.data.data));  // NUL-terminated
        if (name == "pkg/Foo.class") {
          static const unsigned char bytes[] = {0xca, 0xfe, 0, 0xba, 0xbe};
          EXPECT_EQ(0, djava_tm_answer_resource(launcher, ev.request_id, 1, bytes, 5, nullptr));
        } else {
          EXPECT_EQ(0, djava_tm_answer_resource(launcher, ev.request_id, 0, nullptr, 0, nullptr));
        }
        answered++;
      }
      djava_tm_buffer_free(&ev.data);
      EXPECT_EQ(nullptr, ev.data.data);
    }
  });
  djava_tm_buffer b{reinterpret_cast<uint8_t*>(1), 99};  // garbage in: reset on entry
  ASSERT_EQ(DJAVA_TM_FETCH_FOUND, djava_tm_fetch_resource(server, 9, "pkg/Foo.class", 5000, &b));
  ASSERT_EQ(5u, b.len);
  EXPECT_EQ(0, std::memcmp(b.data, "\xca\xfe\0\xba\xbe", 5));
  EXPECT_EQ(0, b.data[5]);  // terminated
  djava_tm_buffer_free(&b);
  EXPECT_EQ(nullptr, b.data);
  EXPECT_EQ(0u, b.len);
  djava_tm_buffer_free(&b);  // twice: harmless
  djava_tm_buffer_free(nullptr);
  EXPECT_EQ(DJAVA_TM_FETCH_NOT_FOUND, djava_tm_fetch_resource(server, 9, "No.class", 5000, &b));
  EXPECT_EQ(nullptr, b.data);
  EXPECT_NE(nullptr, std::strstr(djava_tm_last_error(), "No.class")) << djava_tm_last_error();
  serve.join();
  EXPECT_EQ(DJAVA_TM_FETCH_ERROR, djava_tm_fetch_resource(nullptr, 9, "x", 10, &b));
  EXPECT_EQ(-1, djava_tm_console(server, 9, 1, 7, "x", 1));  // bad stream
  djava_tm_close(server);
  djava_tm_close(launcher);
}

TEST_F(TmClientTest, StatisticsGatheredFromTheServersThatRanTheProgram) {
  auto* launcher = new djava_tm_client;
  launcher->impl = Client();
  auto s1 = Client(), s2 = Client(), s3 = Client();
  ASSERT_EQ("", s1->RegisterServer("s1", 1, nullptr));
  ASSERT_EQ("", s2->RegisterServer("s2", 1, nullptr));
  ASSERT_EQ(0, djava_tm_register_program(launcher, 9, "l", "cp"));
  ASSERT_EQ(0, djava_tm_submit(launcher, 9, 1, 0, 0));
  ASSERT_EQ(0, djava_tm_submit(launcher, 9, 2, 0, 0));
  Expect(s1.get(), DJAVA_TM_EV_ASSIGN);
  Expect(s2.get(), DJAVA_TM_EV_ASSIGN);
  ASSERT_EQ("", s3->RegisterServer("s3", 1, nullptr));  // ran nothing of program 9
  // Each server answers `answers` requests with a text naming it.
  auto serve = [](TmClient* c, const char* name, int answers) {
    return std::thread([c, name, answers] {
      for (int i = 0; i < answers; i++) {
        djava_tm_event ev = Expect(c, DJAVA_TM_EV_STATISTICS_REQUEST);
        EXPECT_EQ(9u, ev.program);
        std::string text = std::string("djava statistics of ") + name + ", program 9\n  row\n";
        EXPECT_EQ("", c->AnswerStatistics(ev.request_id, text.data(), text.size()));
      }
    });
  };
  std::thread a1 = serve(s1.get(), "s1", 2), a2 = serve(s2.get(), "s2", 1);
  djava_tm_buffer b{nullptr, 0};
  ASSERT_EQ(0, djava_tm_gather_statistics(launcher, 9, 5000, &b)) << djava_tm_last_error();
  EXPECT_EQ("djava statistics of s1, program 9\n  row\n"
            "djava statistics of s2, program 9\n  row\n",
            Str(b));
  djava_tm_buffer_free(&b);
  a2.join();
  // s2 no longer answers: the manager answers without it when its limit passes.
  auto t0 = Clock::now();
  ASSERT_EQ(0, djava_tm_gather_statistics(launcher, 9, 5000, &b)) << djava_tm_last_error();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));
  EXPECT_EQ("djava statistics of s1, program 9\n  row\n"
            "djava statistics of thread server 's2': none (no answer within 300 ms)\n",
            Str(b));
  djava_tm_buffer_free(&b);
  a1.join();
  djava_tm_event late = Expect(s2.get(), DJAVA_TM_EV_STATISTICS_REQUEST);
  EXPECT_EQ("", s2->AnswerStatistics(late.request_id, "late", 4));  // harmless
  // Only the launcher may ask; another program's statistics are refused.
  EXPECT_EQ(-1, djava_tm_gather_statistics(launcher, 4242, 5000, &b));
  EXPECT_NE(nullptr, std::strstr(djava_tm_last_error(), "no such program")) << djava_tm_last_error();
  EXPECT_EQ(nullptr, b.data);
  std::string text;
  EXPECT_NE(std::string::npos, s3->GatherStatistics(9, 5000, &text).find("not its launcher"));
  djava_tm_close(launcher);
}

TEST_F(TmClientTest, ConsoleOrderOfThousandMessagesIsPreserved) {
  auto launcher = Client(), s1 = Client();
  ASSERT_EQ("", launcher->RegisterProgram(9, "l", "cp"));
  ASSERT_EQ("", s1->RegisterServer("s1", 1, nullptr));
  // Output for an unknown program is dropped without harming the sender.
  ASSERT_EQ("", s1->Console(4242, 1, 1, "lost\n", 5));
  for (int i = 0; i < 1000; i++) {
    std::string line = "line " + std::to_string(i) + "\n";
    ASSERT_EQ("", s1->Console(9, 100 + i % 3, i % 5 == 0 ? 2 : 1, line.data(), line.size()));
  }
  // A write larger than one piece arrives whole, in order, after them.
  std::string big(2 * TmClient::kConsoleChunk + 123, '\0');
  for (size_t i = 0; i < big.size(); i++) big[i] = static_cast<char>('a' + i % 26);
  ASSERT_EQ("", s1->Console(9, 7, 1, big.data(), big.size()));
  int next = 0;
  std::string tail;
  auto deadline = Clock::now() + std::chrono::seconds(20);
  while ((next < 1000 || tail.size() < big.size()) && Clock::now() < deadline) {
    djava_tm_event ev;
    if (launcher->NextEvent(&ev, 1000) != 1) continue;
    if (ev.kind == DJAVA_TM_EV_CONSOLE) {
      EXPECT_EQ(9u, ev.program);
      if (next < 1000) {
        EXPECT_EQ("line " + std::to_string(next) + "\n", Str(ev.data));
        EXPECT_EQ(100u + next % 3, ev.thread);
        EXPECT_EQ(next % 5 == 0 ? 2 : 1, ev.stream);
        next++;
      } else {
        EXPECT_EQ(7u, ev.thread);
        EXPECT_LE(ev.data.len, TmClient::kConsoleChunk);
        tail += Str(ev.data);
      }
    }
    djava_tm_buffer_free(&ev.data);
  }
  EXPECT_EQ(1000, next);
  EXPECT_TRUE(tail == big) << tail.size() << " of " << big.size() << " bytes";
  // The sender's connection is still usable.
  ASSERT_EQ("", s1->Submit(9, 1, false));
  EXPECT_EQ(9u, Expect(s1.get(), DJAVA_TM_EV_ASSIGN).program);
}

TEST_F(TmClientTest, OnlyTheFirstExitReachesTheLauncher) {
  auto launcher = Client(), s1 = Client(), other = Client();
  ASSERT_EQ("", launcher->RegisterProgram(9, "l", "cp"));
  ASSERT_EQ("", s1->RegisterServer("s1", 1, nullptr));
  launcher->Submit(9, 1, false);
  Expect(s1.get(), DJAVA_TM_EV_ASSIGN);
  ASSERT_EQ("", s1->ProgramExit(9, 3, "thread 1 on s1"));
  auto ev = Expect(launcher.get(), DJAVA_TM_EV_EXIT);
  EXPECT_EQ(9u, ev.program);
  EXPECT_EQ(3, ev.status);
  EXPECT_STREQ("thread 1 on s1", ev.detail);
  // Later exits, from anywhere, are ignored.
  ASSERT_EQ("", other->ProgramExit(9, 4, "elsewhere"));
  ASSERT_EQ("", s1->ProgramExit(9, 5, "again"));
  ASSERT_EQ("", s1->Submit(9, 2, false));  // a marker after them on s1's connection
  djava_tm_event e;
  int exits = 0, marker = 0;
  while (launcher->NextEvent(&e, 300) == 1) {
    exits += e.kind == DJAVA_TM_EV_EXIT;
    marker += e.kind == DJAVA_TM_EV_STATE && e.thread == 2;
    djava_tm_buffer_free(&e.data);
  }
  EXPECT_EQ(0, exits);
  EXPECT_GE(marker, 1);
  // The launcher ends the program as usual: the server drops it.
  ASSERT_EQ("", launcher->ProgramEnd(9, "System.exit(3)"));
  EXPECT_EQ(9u, Expect(s1.get(), DJAVA_TM_EV_DROP_PROGRAM).program);
}

TEST_F(TmClientTest, ConcurrentExitsOnlyOneWins) {
  auto launcher = Client();
  ASSERT_EQ("", launcher->RegisterProgram(9, "l", "cp"));
  std::vector<std::unique_ptr<TmClient>> nodes;
  for (int i = 0; i < 4; i++) nodes.push_back(Client());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; i++)
    threads.emplace_back([&, i] { nodes[i]->ProgramExit(9, 10 + i, "node " + std::to_string(i)); });
  for (auto& t : threads) t.join();
  int exits = 0, status = -1;
  djava_tm_event e;
  while (launcher->NextEvent(&e, 500) == 1) {
    if (e.kind == DJAVA_TM_EV_EXIT) {
      exits++;
      status = e.status;
      EXPECT_EQ("node " + std::to_string(status - 10), std::string(e.detail));
    }
    djava_tm_buffer_free(&e.data);
  }
  EXPECT_EQ(1, exits);
  EXPECT_TRUE(status >= 10 && status < 14) << status;
}

}  // namespace
}  // namespace tm
}  // namespace djava
