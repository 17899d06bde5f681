// ServiceHost over real loopback sockets: dispatch by service name, refusal
// of unknown services and wrong secrets before any handler runs, isolation of
// one client's handshake from a silent one, Stop() ending blocked handlers
// (after its hooks ran), and the reaping of finished connection threads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "wire.pb.h"
#include "wire/connection.h"
#include "wire/handshake.h"
#include "wire/service_host.h"

namespace djava {
namespace wire {
namespace {

const std::string kSecret = "0123456789abcdef-cluster-secret";

// A host on 127.0.0.1:<any> running in its own thread, with two services that
// answer every message with "<service>:<payload>".
class HostFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    host_ = std::make_unique<ServiceHost>(kSecret, [this](const std::string& line) {
      std::lock_guard<std::mutex> l(mu_);
      log_ += line + "\n";
    });
    for (const char* name : {"alpha", "beta"}) {
      std::string service = name;
      host_->AddService(service, [this, service](std::unique_ptr<Connection> c,
                                                 const std::string& peer) {
        handled_++;
        EXPECT_NE(peer.find("127.0.0.1:"), std::string::npos) << peer;
        wirepb::ServerHello m;
        while (c->Receive(&m)) {
          m.set_nonce(service + ":" + m.nonce());
          if (!c->Send(m)) break;
        }
      });
    }
    AddExtraServices();
    std::string error;
    ASSERT_TRUE(host_->Listen("127.0.0.1:0", &error)) << error;
    ASSERT_GT(host_->port(), 0);
    runner_ = std::thread([this] {
      host_->Run();
      run_returned_ = true;
    });
  }
  void TearDown() override {
    if (host_) host_->Stop();
    if (runner_.joinable()) runner_.join();
    host_.reset();
  }
  virtual void AddExtraServices() {}

  std::string Address() const { return "127.0.0.1:" + std::to_string(host_->port()); }

  // A connection that completed the handshake for `service`, or null with *error.
  std::unique_ptr<Connection> Dial(const std::string& service, const std::string& secret,
                                   std::string* error) {
    int fd = ConnectTcp(Address(), error);
    if (fd < 0) return nullptr;
    auto c = std::make_unique<Connection>(fd);
    if (!ClientHandshake(c.get(), secret, service, error)) return nullptr;
    return c;
  }

  static std::string Echo(Connection* c, const std::string& payload) {
    wirepb::ServerHello m;
    m.set_nonce(payload);
    if (!c->Send(m) || !c->Receive(&m)) return "<" + c->error() + ">";
    return m.nonce();
  }

  std::string log() {
    std::lock_guard<std::mutex> l(mu_);
    return log_;
  }

  std::unique_ptr<ServiceHost> host_;
  std::thread runner_;
  std::atomic<bool> run_returned_{false};
  std::atomic<int> handled_{0};
  std::mutex mu_;
  std::string log_;
};

TEST_F(HostFixture, TwoServicesEachGetTheirOwnConnections) {
  std::string error;
  auto a = Dial("alpha", kSecret, &error);
  ASSERT_TRUE(a) << error;
  auto b = Dial("beta", kSecret, &error);
  ASSERT_TRUE(b) << error;
  EXPECT_EQ(Echo(a.get(), "one"), "alpha:one");
  EXPECT_EQ(Echo(b.get(), "two"), "beta:two");
  EXPECT_EQ(Echo(a.get(), "three"), "alpha:three");
  EXPECT_EQ(handled_, 2);
}

TEST_F(HostFixture, UnknownServiceIsRefusedWithTheReason) {
  std::string error;
  EXPECT_FALSE(Dial("gamma", kSecret, &error));
  EXPECT_NE(error.find("refused"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown service 'gamma'"), std::string::npos) << error;
  EXPECT_EQ(handled_, 0);
  // The host goes on serving.
  auto a = Dial("alpha", kSecret, &error);
  ASSERT_TRUE(a) << error;
  EXPECT_EQ(Echo(a.get(), "x"), "alpha:x");
}

TEST_F(HostFixture, WrongSecretNeverReachesAHandler) {
  std::string error;
  EXPECT_FALSE(Dial("alpha", "another-secret-of-16+bytes", &error));
  EXPECT_NE(error.find("authentication failed"), std::string::npos) << error;
  // An unauthenticated client learns nothing about which services exist.
  EXPECT_FALSE(Dial("gamma", "another-secret-of-16+bytes", &error));
  EXPECT_EQ(error.find("unknown service"), std::string::npos) << error;
  EXPECT_EQ(handled_, 0);
}

TEST_F(HostFixture, SilentClientDoesNotHoldUpAnotherHandshake) {
  std::string error;
  // Connects and never speaks: its handshake waits up to 10 s in its thread.
  int silent = ConnectTcp(Address(), &error);
  ASSERT_GE(silent, 0) << error;
  auto start = std::chrono::steady_clock::now();
  auto a = Dial("alpha", kSecret, &error);
  ASSERT_TRUE(a) << error;
  EXPECT_EQ(Echo(a.get(), "hi"), "alpha:hi");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  close(silent);
}

TEST_F(HostFixture, FinishedConnectionThreadsAreReaped) {
  std::string error;
  for (int i = 0; i < 40; i++) {
    auto a = Dial(i % 2 ? "alpha" : "beta", kSecret, &error);
    ASSERT_TRUE(a) << error;
    ASSERT_EQ(Echo(a.get(), "x").substr(1), (i % 2 ? "lpha:x" : "eta:x"));
  }
  // Closed clients end their handlers; each accept joins the finished ones.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  size_t held = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto probe = Dial("alpha", kSecret, &error);
    ASSERT_TRUE(probe) << error;
    held = host_->threads();
    if (held <= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_LE(held, 3u);
}

// A service whose handler blocks in Receive until its connection ends.
class BlockingHostFixture : public HostFixture {
 protected:
  void AddExtraServices() override {
    host_->AddService("block", [this](std::unique_ptr<Connection> c, const std::string&) {
      {
        std::lock_guard<std::mutex> l(block_mu_);
        blocked_++;
      }
      block_cv_.notify_all();
      wirepb::ServerHello m;
      while (c->Receive(&m)) {
      }
      released_++;
    });
    host_->OnStop([this] {
      stop_hooks_++;
      released_at_stop_ = released_.load();
    });
  }
  std::mutex block_mu_;
  std::condition_variable block_cv_;
  int blocked_ = 0;
  std::atomic<int> released_{0};
  std::atomic<int> stop_hooks_{0};
  std::atomic<int> released_at_stop_{-1};
};

TEST_F(BlockingHostFixture, StopEndsBlockedHandlersAndRun) {
  std::string error;
  auto c1 = Dial("block", kSecret, &error);
  ASSERT_TRUE(c1) << error;
  auto c2 = Dial("block", kSecret, &error);
  ASSERT_TRUE(c2) << error;
  int silent = ConnectTcp(Address(), &error);  // stuck in its handshake
  ASSERT_GE(silent, 0) << error;
  {
    std::unique_lock<std::mutex> l(block_mu_);
    ASSERT_TRUE(block_cv_.wait_for(l, std::chrono::seconds(5), [&] { return blocked_ == 2; }));
  }
  auto start = std::chrono::steady_clock::now();
  host_->Stop();
  host_->Stop();
  // The stop hook ran once, before any connection was shut down.
  EXPECT_EQ(stop_hooks_, 1);
  EXPECT_EQ(released_at_stop_, 0);
  runner_.join();
  EXPECT_TRUE(run_returned_);
  // The destructor joins every connection thread: it returns only once the
  // blocked handlers and the silent handshake have ended.
  host_.reset();
  EXPECT_EQ(released_, 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  // The clients see their connections end.
  wirepb::ServerHello m;
  EXPECT_FALSE(c1->Receive(&m));
  close(silent);
}

TEST(ServiceHost, StopBeforeRunReturnsAtOnce) {
  ServiceHost host(kSecret, nullptr);
  std::string error;
  ASSERT_TRUE(host.Listen("127.0.0.1:0", &error)) << error;
  host.Stop();
  host.Run();  // returns: stopping
  EXPECT_EQ(host.threads(), 0u);
}

TEST(ServiceHost, ListenOnABadAddressFails) {
  ServiceHost host(kSecret, nullptr);
  std::string error;
  EXPECT_FALSE(host.Listen("no-port-here", &error));
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace wire
}  // namespace djava
