// The wire library: frames, the secret file, HMAC, and the handshake between
// real sockets (socketpair and loopback TCP), including every way a peer can
// get it wrong.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "wire.pb.h"
#include "wire/connection.h"
#include "wire/frame.h"
#include "wire/handshake.h"
#include "wire/hmac.h"
#include "wire/secret.h"

namespace djava {
namespace wire {
namespace {

const std::string kSecret = "0123456789abcdef-cluster-secret";

std::string Hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

TEST(Frame, RoundTripFedOneByteAtATime) {
  std::string stream;
  AppendFrame("hello", &stream);
  AppendFrame("", &stream);
  AppendFrame(std::string(70000, 'x'), &stream);
  FrameDecoder d(1 << 20);
  std::vector<std::string> frames;
  std::string f;
  for (char c : stream) {
    d.Feed(&c, 1);
    while (d.Next(&f) == FrameDecoder::Result::kFrame) frames.push_back(f);
  }
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0], "hello");
  EXPECT_EQ(frames[1], "");
  EXPECT_EQ(frames[2], std::string(70000, 'x'));
  EXPECT_EQ(d.buffered(), 0u);
}

TEST(Frame, OversizedLengthIsRejectedBeforeBuffering) {
  FrameDecoder d(1024);
  const char huge[4] = {'\x7f', '\xff', '\xff', '\xff'};
  d.Feed(huge, 4);
  std::string f;
  uint32_t declared = 0;
  EXPECT_EQ(d.Next(&f, &declared), FrameDecoder::Result::kTooLarge);
  EXPECT_EQ(declared, 0x7fffffffu);
}

TEST(Frame, PartialHeaderAndBodyNeedMore) {
  std::string stream;
  AppendFrame("abc", &stream);
  FrameDecoder d(1024);
  std::string f;
  d.Feed(stream.data(), 2);
  EXPECT_EQ(d.Next(&f), FrameDecoder::Result::kNeedMore);
  d.Feed(stream.data() + 2, 3);
  EXPECT_EQ(d.Next(&f), FrameDecoder::Result::kNeedMore);
  d.Feed(stream.data() + 5, stream.size() - 5);
  EXPECT_EQ(d.Next(&f), FrameDecoder::Result::kFrame);
  EXPECT_EQ(f, "abc");
}

TEST(Frame, HasFrameSaysWhetherNextReturnsWithoutMoreBytes) {
  std::string stream;
  AppendFrame("first", &stream);
  AppendFrame("second", &stream);
  FrameDecoder d(1024);
  EXPECT_FALSE(d.HasFrame());
  d.Feed(stream.data(), 3);  // part of the first header
  EXPECT_FALSE(d.HasFrame());
  d.Feed(stream.data() + 3, 9 + 4);  // the first frame and the second's header
  EXPECT_TRUE(d.HasFrame());
  std::string f;
  ASSERT_EQ(d.Next(&f), FrameDecoder::Result::kFrame);
  EXPECT_EQ(f, "first");
  EXPECT_FALSE(d.HasFrame());  // the second's body is not here yet
  d.Feed(stream.data() + 16, stream.size() - 16);
  EXPECT_TRUE(d.HasFrame());
  ASSERT_EQ(d.Next(&f), FrameDecoder::Result::kFrame);
  EXPECT_EQ(f, "second");
  EXPECT_FALSE(d.HasFrame());
  // An oversized length is "returns without more bytes" too: Next says kTooLarge.
  FrameDecoder small(4);
  small.Feed(stream.data(), 4);
  EXPECT_TRUE(small.HasFrame());
}

TEST(Hmac, Rfc4231TestCase2) {
  EXPECT_EQ(Hex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_TRUE(ConstantTimeEqual("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "ab"));
  EXPECT_NE(RandomBytes(32), RandomBytes(32));
}

class SecretFile : public ::testing::Test {
 protected:
  void Write(const std::string& content, mode_t mode) {
    std::ofstream(path_) << content;
    chmod(path_.c_str(), mode);
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_ = ::testing::TempDir() + "djava-secret-" + std::to_string(getpid());
};

TEST_F(SecretFile, OwnerOnlyIsAcceptedAndTrimmed) {
  Write(kSecret + "\n", 0600);
  std::string secret, error;
  ASSERT_TRUE(LoadSecret(path_, &secret, &error)) << error;
  EXPECT_EQ(secret, kSecret);
}

TEST_F(SecretFile, ReadableByOthersIsRefusedWithTheFix) {
  Write(kSecret, 0644);
  std::string secret, error;
  EXPECT_FALSE(LoadSecret(path_, &secret, &error));
  EXPECT_NE(error.find("mode 0644"), std::string::npos) << error;
  EXPECT_NE(error.find("chmod 600"), std::string::npos) << error;
}

TEST_F(SecretFile, MissingOrShortIsRefused) {
  std::string secret, error;
  EXPECT_FALSE(LoadSecret(path_ + "-missing", &secret, &error));
  EXPECT_NE(error.find("cannot read secret file"), std::string::npos) << error;
  Write("short", 0600);
  EXPECT_FALSE(LoadSecret(path_, &secret, &error));
  EXPECT_NE(error.find("at least 16"), std::string::npos) << error;
}

// A connected pair of sockets: [0] the server's end, [1] the client's.
struct Pair {
  Pair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    server = std::make_unique<Connection>(fds[0]);
    client = std::make_unique<Connection>(fds[1]);
  }
  std::unique_ptr<Connection> server, client;
};

struct ServerResult {
  bool ok;
  std::string service, error;
};

std::future<ServerResult> ServeHandshake(Connection* c, const std::string& secret) {
  return std::async(std::launch::async, [c, secret] {
    ServerResult r;
    r.ok = ServerHandshake(c, secret, &r.service, &r.error);
    return r;
  });
}

TEST(Handshake, SameSecretAuthenticatesBothWaysAndNamesTheService) {
  Pair p;
  auto server = ServeHandshake(p.server.get(), kSecret);
  std::string error;
  ASSERT_TRUE(ClientHandshake(p.client.get(), kSecret, "monitor", &error)) << error;
  ServerResult r = server.get();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.service, "monitor");
  // After the handshake the connection carries messages, of any size. The
  // peer reads while the message is sent: on UCX (the default transport) a
  // large one leaves only as the receiver takes it, there being no kernel
  // buffer to hold it.
  auto received = std::async(std::launch::async, [&p] {
    wirepb::ClientHello got;
    return p.server->Receive(&got) ? got.service().size() : 0;
  });
  wirepb::ClientHello big;
  big.set_service(std::string(100000, 's'));
  ASSERT_TRUE(p.client->Send(big));
  EXPECT_EQ(received.get(), 100000u);
}

TEST(Handshake, WrongSecretIsRefusedOnBothSides) {
  Pair p;
  auto server = ServeHandshake(p.server.get(), kSecret);
  std::string error;
  EXPECT_FALSE(ClientHandshake(p.client.get(), "another-secret-of-16+bytes", "sos", &error));
  EXPECT_NE(error.find("refused"), std::string::npos) << error;
  ServerResult r = server.get();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("authentication failed"), std::string::npos) << r.error;
}

TEST(Handshake, ClientRejectsAServerThatCannotProveTheSecret) {
  Pair p;
  auto impostor = std::async(std::launch::async, [&] {
    wirepb::ServerHello hello;
    hello.set_protocol_version(kProtocolVersion);
    hello.set_nonce(RandomBytes(kNonceSize));
    wirepb::ClientHello theirs;
    p.server->Send(hello);
    p.server->Receive(&theirs);
    wirepb::ServerVerdict yes;
    yes.set_accepted(true);
    yes.set_proof(std::string(32, 'z'));
    p.server->Send(yes);
  });
  std::string error;
  EXPECT_FALSE(ClientHandshake(p.client.get(), kSecret, "sos", &error));
  EXPECT_NE(error.find("could not prove"), std::string::npos) << error;
  impostor.get();
}

TEST(Handshake, OtherProtocolVersionIsRefusedWithReason) {
  Pair p;
  auto server = ServeHandshake(p.server.get(), kSecret);
  wirepb::ServerHello hello;
  ASSERT_TRUE(p.client->Receive(&hello));
  wirepb::ClientHello old;
  old.set_protocol_version(99);
  old.set_nonce(RandomBytes(kNonceSize));
  old.set_proof(ClientProof(kSecret, hello.nonce(), old.nonce(), ""));
  ASSERT_TRUE(p.client->Send(old));
  wirepb::ServerVerdict verdict;
  ASSERT_TRUE(p.client->Receive(&verdict));
  EXPECT_FALSE(verdict.accepted());
  EXPECT_NE(verdict.reason().find("version 99"), std::string::npos) << verdict.reason();
  EXPECT_FALSE(server.get().ok);
}

// Raw bytes instead of a proper ClientHello: the server ends the handshake
// with a reason naming what was wrong.
std::string ServerErrorAfterRawBytes(const std::string& bytes, bool close_after) {
  Pair p;
  auto server = ServeHandshake(p.server.get(), kSecret);
  wirepb::ServerHello hello;
  EXPECT_TRUE(p.client->Receive(&hello));
  EXPECT_EQ(send(p.client->fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
  if (close_after) p.client->Shutdown();
  ServerResult r = server.get();
  EXPECT_FALSE(r.ok);
  return r.error;
}

TEST(Handshake, HugeLengthPrefixEndsTheConnection) {
  EXPECT_NE(ServerErrorAfterRawBytes(std::string("\x7f\xff\xff\xff", 4), false).find("larger than"),
            std::string::npos);
}

TEST(Handshake, GarbageIsAMalformedFrame) {
  std::string frame;
  AppendFrame("\xff\xff\xff\xff garbage", &frame);
  EXPECT_NE(ServerErrorAfterRawBytes(frame, false).find("malformed"), std::string::npos);
}

TEST(Handshake, TruncatedFrameIsNamed) {
  std::string frame;
  AppendFrame(std::string(100, 'a'), &frame);
  EXPECT_NE(ServerErrorAfterRawBytes(frame.substr(0, 50), true).find("truncated"),
            std::string::npos);
}

TEST(Handshake, SilentClientEndsWithClosedConnection) {
  EXPECT_NE(ServerErrorAfterRawBytes("", true).find("connection closed"), std::string::npos);
}

TEST(Tcp, LoopbackListenConnectAndHandshake) {
  std::string error;
  int listener = ListenTcp("127.0.0.1:0", &error);
  ASSERT_GE(listener, 0) << error;
  const int port = LocalPort(listener);
  ASSERT_GT(port, 0);
  // The server keeps its end until the client's handshake is over: on UCX
  // (the default) the client attaches the server's worker as it finishes.
  auto server = std::async(std::launch::async, [listener] {
    auto c = std::make_unique<Connection>(accept(listener, nullptr, nullptr));
    ServerResult r;
    r.ok = ServerHandshake(c.get(), kSecret, &r.service, &r.error);
    return std::make_pair(r, std::move(c));
  });
  int fd = ConnectTcp("127.0.0.1:" + std::to_string(port), &error);
  ASSERT_GE(fd, 0) << error;
  Connection client(fd);
  EXPECT_TRUE(ClientHandshake(&client, kSecret, "tm", &error)) << error;
  EXPECT_EQ(server.get().first.service, "tm");
  close(listener);
  EXPECT_LT(ConnectTcp("127.0.0.1:" + std::to_string(port), &error), 0);
  EXPECT_NE(error.find("cannot connect"), std::string::npos) << error;
  EXPECT_LT(ConnectTcp("no-port-here", &error), 0);
  EXPECT_NE(error.find("not host:port"), std::string::npos) << error;
}

}  // namespace
}  // namespace wire
}  // namespace djava
