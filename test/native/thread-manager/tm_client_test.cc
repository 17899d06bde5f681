// The real TmClient against the real TmService, joined in one process by
// memory channels: registration, placement, lifecycle events, join, and
// server failure (disconnect and missed heartbeats).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "inproc.h"
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
