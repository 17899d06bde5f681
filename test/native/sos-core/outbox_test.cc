// Outbox: posts held for SendHeld leave in one write, in order with other
// posts, and never wait past kMaxHeld.
#include "outbox.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "wire/channel.h"

namespace djava {
namespace sos {
namespace {

class OutboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    channel_ = wire::NewTcpChannel(fds_[0]);
  }
  void TearDown() override {
    close(fds_[0]);
    close(fds_[1]);
  }
  // Whether the peer has bytes to read within ms.
  bool Readable(int ms) {
    pollfd p{fds_[1], POLLIN, 0};
    return poll(&p, 1, ms) == 1;
  }
  // Reads exactly n bytes from the peer.
  std::string ReadExactly(size_t n) {
    std::string got;
    char buf[65536];
    while (got.size() < n) {
      ssize_t r = read(fds_[1], buf, std::min(sizeof buf, n - got.size()));
      if (r <= 0) break;
      got.append(buf, static_cast<size_t>(r));
    }
    return got;
  }
  int fds_[2];
  std::unique_ptr<wire::Channel> channel_;
};

TEST_F(OutboxTest, HeldPostsWaitForSendHeldAndKeepTheirOrder) {
  Outbox out(channel_.get(), 1 << 20, nullptr);
  out.Post("one|", true);
  out.Post("two|", true);
  EXPECT_FALSE(Readable(50)) << "held bytes left before SendHeld";
  out.SendHeld();
  EXPECT_EQ(ReadExactly(8), "one|two|");
  EXPECT_EQ(out.bytes_sent(), 8u);
}

TEST_F(OutboxTest, AnotherPostLandsBehindHeldOnesAndSendsThem) {
  Outbox out(channel_.get(), 1 << 20, nullptr);
  out.Post("held|", true);
  out.Post("now|");  // another thread's post, not held
  EXPECT_EQ(ReadExactly(9), "held|now|");
  out.SendHeld();  // nothing left: sends nothing more
  EXPECT_FALSE(Readable(50));
}

TEST_F(OutboxTest, HoldingStopsAtTheLimit) {
  Outbox out(channel_.get(), 64 << 20, nullptr);
  const std::string big(Outbox::kMaxHeld / 2 + 1, 'x');
  out.Post(big, true);
  EXPECT_FALSE(Readable(50));
  out.Post(big, true);  // past kMaxHeld together: no longer held
  EXPECT_EQ(ReadExactly(2 * big.size()), big + big);
}

}  // namespace
}  // namespace sos
}  // namespace djava
