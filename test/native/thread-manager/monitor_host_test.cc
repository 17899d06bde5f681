// MonitorHost over loopback TCP: the real MonitorClient (through the C++
// class and the wire adapter) against the real MonitorService hosted on a
// wire::ServiceHost, as sos-server runs it. Exact counter across nodes, the
// timer thread ending timed waits, and a node that never reads not stalling
// the others.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "monitor.pb.h"
#include "monitor_client.h"
#include "monitor_host.h"
#include "wire/connection.h"
#include "wire/handshake.h"
#include "wire/service_host.h"
#include "wire_adapter.h"

namespace djava {
namespace monitor {
namespace {

const std::string kSecret = "monitor-host-test-secret-0123456789";

class MonitorHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/monitor-host-test-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, kSecret.data(), kSecret.size()), static_cast<ssize_t>(kSecret.size()));
    close(fd);
    chmod(path, 0600);
    secret_file_ = path;
    auto quiet = [](const std::string&) {};
    monitors_ = std::make_unique<MonitorHost>(quiet);
    host_ = std::make_unique<wire::ServiceHost>(kSecret, quiet);
    monitors_->Register(host_.get());
    std::string error;
    ASSERT_TRUE(host_->Listen("127.0.0.1:0", &error)) << error;
    runner_ = std::thread([this] { host_->Run(); });
  }
  void TearDown() override {
    host_->Stop();
    runner_.join();
    host_.reset();      // joins the connection threads
    monitors_.reset();  // then the timer
    unlink(secret_file_.c_str());
  }

  std::string Address() const { return "127.0.0.1:" + std::to_string(host_->port()); }

  // sos_node: the node's directory number for data moved with a lock.
  std::unique_ptr<MonitorClient> Node(const std::string& name, uint64_t sos_node = 0) {
    std::string error;
    std::vector<std::unique_ptr<Channel>> shards;
    shards.push_back(wire_adapter::Connect(Address(), secret_file_, "monitor", &error));
    EXPECT_TRUE(shards[0]) << error;
    if (!shards[0]) return nullptr;
    return std::make_unique<MonitorClient>(std::move(shards), name, sos_node);
  }

  // Waits (bounded) until a thread is queued to enter obj, as its owner t of
  // `owner` sees it: how many are queued then (0: none came).
  static size_t QueuedBehind(MonitorClient* owner, uint64_t obj, LocalThread t) {
    MonitorState state;
    for (int i = 0; i < 1000; i++) {
      if (owner->State(obj, t, &state) != DJAVA_MON_OK) return 0;
      if (!state.entering.empty()) return state.entering.size();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return 0;
  }

  std::string secret_file_;
  std::unique_ptr<MonitorHost> monitors_;
  std::unique_ptr<wire::ServiceHost> host_;
  std::thread runner_;
};

TEST_F(MonitorHostTest, CounterUnderOneLockIsExactAcrossNodes) {
  constexpr uint64_t kObj = 77, kProgram = 5;
  constexpr int kNodes = 3, kThreads = 2, kIters = 150;
  std::vector<std::unique_ptr<MonitorClient>> nodes;
  for (int n = 0; n < kNodes; n++) {
    nodes.push_back(Node("node" + std::to_string(n)));
    ASSERT_TRUE(nodes.back());
  }
  long counter = 0;  // ordered only by the distributed monitor
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int n = 0; n < kNodes; n++) {
    for (int t = 0; t < kThreads; t++) {
      threads.emplace_back([&, n, t] {
        LocalThread me{kProgram, static_cast<uint64_t>(100 * n + t + 1)};
        for (int i = 0; i < kIters; i++) {
          if (nodes[n]->Enter(kObj, me) != DJAVA_MON_OK) {
            failures++;
            return;
          }
          long v = counter;
          if (i % 16 == 0) std::this_thread::yield();
          counter = v + 1;
          nodes[n]->Exit(kObj, me);
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0) << MonitorClient::LastError();
  EXPECT_EQ(counter, kNodes * kThreads * kIters);
  EXPECT_NE(monitors_->Stats().find("3 connected"), std::string::npos) << monitors_->Stats();
}

TEST_F(MonitorHostTest, TimerEndsATimedWait) {
  auto node = Node("waiter");
  ASSERT_TRUE(node);
  LocalThread me{9, 1};
  ASSERT_EQ(node->Enter(1, me), DJAVA_MON_OK);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(node->Wait(1, me, 200), DJAVA_MON_TIMED_OUT);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(200));
  EXPECT_LT(elapsed, std::chrono::milliseconds(2000));
  EXPECT_EQ(node->Count(1, me), 1);
  EXPECT_EQ(node->Exit(1, me), DJAVA_MON_OK);
}

// --trace-monitors: the file says, in the order the service saw them, who
// asked for the monitor and whom it was granted to, so that a stalled run
// can be followed message by message.
TEST_F(MonitorHostTest, TheTraceListsRequestsAndEventsInOrder) {
  char path[] = "/tmp/monitor-host-trace-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string error;
  ASSERT_TRUE(monitors_->TraceTo(path, &error)) << error;
  auto one = Node("one"), two = Node("two");
  ASSERT_TRUE(one && two);
  LocalThread t1{9, 1}, t2{9, 2};
  ASSERT_EQ(one->Enter(3, t1), DJAVA_MON_OK);
  std::thread second([&] { EXPECT_EQ(two->Enter(3, t2), DJAVA_MON_OK); });
  ASSERT_EQ(QueuedBehind(one.get(), 3, t1), 1u);
  EXPECT_EQ(one->Exit(3, t1), DJAVA_MON_OK);
  second.join();
  EXPECT_EQ(two->Exit(3, t2), DJAVA_MON_OK);
  one.reset();
  two.reset();

  std::string trace;
  {
    std::FILE* f = std::fopen(path, "r");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) trace.append(buf, n);
    std::fclose(f);
  }
  unlink(path);
  // One line a message: time, node, direction, the message. Nodes are
  // numbered as they connect: one is node 1, two is node 2.
  std::vector<std::string> lines;
  for (size_t from = 0, to; from < trace.size(); from = to + 1) {
    to = trace.find('\n', from);
    if (to == std::string::npos) to = trace.size();
    lines.push_back(trace.substr(from, to - from));
  }
  auto first = [&](const std::string& who, const std::string& what) {
    for (size_t i = 0; i < lines.size(); i++)
      if (lines[i].find(who) != std::string::npos && lines[i].find(what) != std::string::npos)
        return static_cast<int>(i);
    return -1;
  };
  const int first_enter = first("node 1 <- ", "enter { object: 3");
  const int first_grant = first("node 1 -> ", "granted { object: 3");
  const int second_enter = first("node 2 <- ", "enter { object: 3");
  // The first node's release: its exit, or the lease it held returned.
  const int released = std::max(first("node 1 <- ", "exit { object: 3"),
                                first("node 1 <- ", "return_lease { object: 3"));
  const int second_grant = first("node 2 -> ", "granted { object: 3");
  EXPECT_GE(first_enter, 0) << trace;
  EXPECT_LT(first_enter, first_grant) << trace;
  EXPECT_LT(first_grant, second_enter) << trace;
  EXPECT_LT(second_enter, released) << trace;
  EXPECT_LT(released, second_grant) << trace;
}

TEST_F(MonitorHostTest, ATraceFileThatCannotBeOpenedIsRefused) {
  std::string error;
  EXPECT_FALSE(monitors_->TraceTo("/nonexistent-dir/trace", &error));
  EXPECT_NE(error.find("/nonexistent-dir/trace"), std::string::npos) << error;
}

// A mover whose data never leaves (the releasing node cannot produce the
// object's bytes): it keeps every grant's `sent` and never calls it.
class StuckMover : public MonitorService::DataMover {
 public:
  uint64_t Mark(uint64_t) override { return 0; }
  bool Move(ObjectId, uint64_t, uint64_t, uint64_t, ProgramId, std::function<void()> sent,
            const std::vector<uint64_t>&) override {
    std::lock_guard<std::mutex> l(mu);
    held.push_back(std::move(sent));
    return true;
  }
  std::mutex mu;
  std::vector<std::function<void()>> held;
};

TEST_F(MonitorHostTest, AGrantWaitsForItsObjectsDataOnlySoLong) {
  StuckMover mover;
  monitors_->SetDataMover(&mover);
  auto one = Node("one", 11), two = Node("two", 12);
  ASSERT_TRUE(one && two);
  LocalThread t1{9, 1}, t2{9, 2};
  ASSERT_EQ(one->Enter(5, t1), DJAVA_MON_OK);
  std::promise<int> entered;
  std::thread waiter([&] { entered.set_value(two->Enter(5, t2)); });
  ASSERT_EQ(QueuedBehind(one.get(), 5, t1), 1u) << "two's thread never queued";
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(one->Exit(5, t1), DJAVA_MON_OK);
  auto f = entered.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "the grant waited for data that never came";
  const auto waited = std::chrono::steady_clock::now() - start;
  waiter.join();
  EXPECT_EQ(f.get(), DJAVA_MON_OK);
  EXPECT_GE(waited, std::chrono::milliseconds(90)) << "it waited for the data first";
  {
    std::lock_guard<std::mutex> l(mover.mu);
    ASSERT_EQ(mover.held.size(), 1u);
    mover.held[0]();  // the data leaves at last: no second grant
  }
  EXPECT_EQ(two->Exit(5, t2), DJAVA_MON_OK);
  EXPECT_EQ(two->Count(5, t2), 0);
  EXPECT_NE(monitors_->Stats().find("1 of them sent before it"), std::string::npos)
      << monitors_->Stats();
}

// A mover with nothing to move.
class IdleMover : public MonitorService::DataMover {
 public:
  uint64_t Mark(uint64_t) override { return 0; }
  bool Move(ObjectId, uint64_t, uint64_t, uint64_t, ProgramId, std::function<void()>,
            const std::vector<uint64_t>&) override {
    moves++;
    return false;
  }
  std::atomic<int> moves{0};
};

TEST_F(MonitorHostTest, AGrantWithNothingToMoveIsSentOnceAtOnce) {
  IdleMover mover;
  monitors_->SetDataMover(&mover);
  auto one = Node("one", 11), two = Node("two", 12);
  ASSERT_TRUE(one && two);
  LocalThread t1{9, 1}, t2{9, 2};
  ASSERT_EQ(one->Enter(5, t1), DJAVA_MON_OK);
  std::promise<int> entered;
  std::thread waiter([&] { entered.set_value(two->Enter(5, t2)); });
  ASSERT_EQ(QueuedBehind(one.get(), 5, t1), 1u) << "two's thread never queued";
  ASSERT_EQ(one->Exit(5, t1), DJAVA_MON_OK);
  auto f = entered.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  waiter.join();
  EXPECT_EQ(f.get(), DJAVA_MON_OK);
  EXPECT_EQ(mover.moves.load(), 1);
  // Past the deadline of a held grant: the timer sends nothing again.
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_NE(monitors_->Stats().find("0 of them sent before it"), std::string::npos)
      << monitors_->Stats();
  EXPECT_EQ(two->Exit(5, t2), DJAVA_MON_OK);
  ASSERT_EQ(one->Enter(5, t1), DJAVA_MON_OK) << "the monitor is free, owned by nobody";
  EXPECT_EQ(one->Exit(5, t1), DJAVA_MON_OK);
}

TEST_F(MonitorHostTest, NodeThatNeverReadsDoesNotStallOthers) {
  // A raw "monitor" connection with a tiny receive buffer floods pings and
  // never reads a pong: the host must queue (or give up on) its pongs, not
  // block the service on it.
  std::string error;
  int raw_fd = wire::ConnectTcp(Address(), &error);
  ASSERT_GE(raw_fd, 0) << error;
  int small = 4096;
  setsockopt(raw_fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  wire::Connection raw(raw_fd);
  ASSERT_TRUE(wire::ClientHandshake(&raw, kSecret, "monitor", &error)) << error;
  std::string batch;
  for (int i = 0; i < 20000; i++) {
    monitorpb::MonitorRequest req;
    req.mutable_ping()->set_nonce(i + 1);
    wire::AppendFrame(req.SerializeAsString(), &batch);
  }
  // ~1M pongs (~8 MB): far more than the socket buffers hold. A host that
  // sent them with a blocking send under its lock would stop serving here.
  constexpr int kRounds = 50;
  std::atomic<int> rounds_sent{0};
  auto flood = std::async(std::launch::async, [&] {
    for (int round = 0; round < kRounds; round++) {
      size_t off = 0;
      while (off < batch.size()) {
        ssize_t n = send(raw_fd, batch.data() + off, batch.size() - off, MSG_NOSIGNAL);
        if (n <= 0) return false;  // shut down below, or closed by the host
        off += static_cast<size_t>(n);
      }
      rounds_sent++;
    }
    return true;
  });
  // While the flood runs (or is stuck), another node is served promptly.
  auto good = Node("good");
  ASSERT_TRUE(good);
  for (int i = 0; i < 20; i++) {
    auto answer = std::async(std::launch::async, [&] { return good->Ping(); });
    ASSERT_EQ(answer.wait_for(std::chrono::seconds(5)), std::future_status::ready)
        << "a ping stalled behind the node that does not read";
    EXPECT_EQ(answer.get(), DJAVA_MON_OK);
  }
  // Give the flood time to go on; then end it whatever its state, so that
  // the test never waits on a blocked send (the future joins the thread).
  for (int i = 0; i < 300 && flood.wait_for(std::chrono::milliseconds(100)) !=
                                 std::future_status::ready; i++) {
  }
  raw.Shutdown();
  flood.wait();
  EXPECT_GT(rounds_sent.load(), 0) << "the host never read the flooding node";
}

}  // namespace
}  // namespace monitor
}  // namespace djava
