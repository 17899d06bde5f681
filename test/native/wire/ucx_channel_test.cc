// Connections that the handshake moves to UCX (shared memory between the
// two ends here): what they carry, how they end, and that the move happens
// only between parties that proved the cluster secret.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>

#include "wire.pb.h"
#include "wire/connection.h"
#include "wire/frame.h"
#include "wire/handshake.h"
#include "wire/hmac.h"
#include "wire/ucx_channel.h"

namespace djava {
namespace wire {
namespace {

const std::string kSecret = "0123456789abcdef-cluster-secret";

class Ucx : public ::testing::Test {
 protected:
  void SetUp() override {
    SetProcessTransport(Transport::kUcx);
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    server_ = std::make_unique<Connection>(fds[0]);
    client_ = std::make_unique<Connection>(fds[1]);
  }
  void TearDown() override { SetProcessTransport(kDefaultTransport); }

  // The server's handshake on a thread of its own, as in another process:
  // "" when it accepted, else its error.
  std::future<std::string> ServeHandshake() {
    return std::async(std::launch::async, [this] {
      std::string service, error;
      bool ok = ServerHandshake(server_.get(), kSecret, &service, &error);
      return ok ? std::string() : error;
    });
  }

  // The client's hello, proved for proved_address, carrying sent_address.
  wirepb::ClientHello HelloFor(const wirepb::ServerHello& hello, const std::string& proved_address,
                               const std::string& sent_address) {
    wirepb::ClientHello theirs;
    theirs.set_protocol_version(kProtocolVersion);
    theirs.set_nonce(RandomBytes(kNonceSize));
    theirs.set_service("sos");
    theirs.set_proof(ClientProof(kSecret, hello.nonce(), theirs.nonce(), "sos", proved_address));
    theirs.set_ucx_address(sent_address);
    return theirs;
  }

  // Both handshakes, each on its own thread as between two processes.
  void Handshake() {
    auto server = ServeHandshake();
    std::string error;
    ASSERT_TRUE(ClientHandshake(client_.get(), kSecret, "sos", &error)) << error;
    ASSERT_EQ(server.get(), "");
    ASSERT_STREQ(client_->transport(), "ucx");
    ASSERT_STREQ(server_->transport(), "ucx");
  }

  // What the server's Receive says after the client wrote raw bytes on
  // the UCX channel.
  std::string ServerErrorAfterRawBytes(const std::string& bytes) {
    Handshake();
    auto server = std::async(std::launch::async, [this] {
      wirepb::ClientHello got;
      return server_->Receive(&got);
    });
    std::string error;
    EXPECT_EQ(client_->channel()->TryWrite(bytes.data(), bytes.size(), &error),
              static_cast<ssize_t>(bytes.size()))
        << error;
    client_->channel()->Flush(-1);
    EXPECT_FALSE(server.get());
    return server_->error();
  }

  std::unique_ptr<Connection> server_, client_;
};

TEST_F(Ucx, BothSidesMoveAndCarryMessagesOfAnySizeInOrder) {
  Handshake();
  // Small ones both ways, in order, and a few large enough for UCX's
  // rendezvous protocol.
  auto reader = std::async(std::launch::async, [this] {
    wirepb::ClientHello m;
    for (int i = 0; i < 2000; i++) {
      if (!server_->Receive(&m) || m.service() != std::to_string(i)) return i;
    }
    for (size_t size : {100u << 10, 4u << 20}) {
      if (!server_->Receive(&m) || m.service() != std::string(size, 'b')) return -1;
    }
    m.set_service("done");
    return server_->Send(m) ? 2000 : -2;
  });
  wirepb::ClientHello m;
  for (int i = 0; i < 2000; i++) {
    m.set_service(std::to_string(i));
    ASSERT_TRUE(client_->Send(m)) << client_->error();
  }
  for (size_t size : {100u << 10, 4u << 20}) {
    m.set_service(std::string(size, 'b'));
    ASSERT_TRUE(client_->Send(m)) << client_->error();
  }
  EXPECT_EQ(reader.get(), 2000);
  ASSERT_TRUE(client_->Receive(&m)) << client_->error();
  EXPECT_EQ(m.service(), "done");
}

TEST_F(Ucx, AWrongSecretNeverGetsAnEndpoint) {
  const uint64_t before = UcxEndpointsOpened();
  auto server = std::async(std::launch::async, [this] {
    std::string service, error;
    return ServerHandshake(server_.get(), kSecret, &service, &error);
  });
  std::string error;
  EXPECT_FALSE(ClientHandshake(client_.get(), "another-secret-of-16+bytes", "sos", &error));
  EXPECT_FALSE(server.get());
  EXPECT_EQ(UcxEndpointsOpened(), before);
  EXPECT_STREQ(server_->transport(), "tcp");
}

TEST_F(Ucx, TheProofBindsTheAddressItCameWith) {
  // A hello proved for one worker address but carrying another (an address
  // swapped on the way) fails authentication and opens nothing.
  const uint64_t before = UcxEndpointsOpened();
  auto server = ServeHandshake();
  wirepb::ServerHello hello;
  ASSERT_TRUE(client_->Receive(&hello));
  std::string why;
  std::unique_ptr<UcxWorker> mine = UcxWorker::Create(&why);
  std::unique_ptr<UcxWorker> other = UcxWorker::Create(&why);
  ASSERT_NE(other, nullptr) << why;
  ASSERT_TRUE(client_->Send(HelloFor(hello, mine->address(), other->address())));
  wirepb::ServerVerdict verdict;
  ASSERT_TRUE(client_->Receive(&verdict));
  EXPECT_FALSE(verdict.accepted());
  EXPECT_NE(server.get().find("authentication failed"), std::string::npos);
  EXPECT_EQ(UcxEndpointsOpened(), before);
}

TEST_F(Ucx, AServerForUcxOnlyRefusesAClientOfferingTcp) {
  auto server = ServeHandshake();
  wirepb::ServerHello hello;
  ASSERT_TRUE(client_->Receive(&hello));
  ASSERT_TRUE(client_->Send(HelloFor(hello, "", "")));
  wirepb::ServerVerdict verdict;
  ASSERT_TRUE(client_->Receive(&verdict));
  EXPECT_FALSE(verdict.accepted());
  EXPECT_NE(verdict.reason().find("ucx connections only"), std::string::npos) << verdict.reason();
  EXPECT_NE(server.get().find("ucx connections only"), std::string::npos);
}

TEST_F(Ucx, AClientForUcxOnlyRefusesAServerOfferingTcp) {
  auto server = std::async(std::launch::async, [this] {
    wirepb::ServerHello hello;
    hello.set_protocol_version(kProtocolVersion);
    hello.set_nonce(RandomBytes(kNonceSize));
    server_->Send(hello);
    wirepb::ClientHello theirs;
    server_->Receive(&theirs);
    wirepb::ServerVerdict verdict;  // accepted, proved, without an address
    verdict.set_accepted(true);
    verdict.set_proof(ServerProof(kSecret, hello.nonce(), theirs.nonce()));
    server_->Send(verdict);
  });
  std::string error;
  EXPECT_FALSE(ClientHandshake(client_.get(), kSecret, "sos", &error));
  EXPECT_NE(error.find("offers only tcp"), std::string::npos) << error;
  server.get();
}

TEST(UcxReach, NotAcrossNetworkNamespacesOfOneHost) {
  std::string why;
  EXPECT_TRUE(UcxCanReach("boot-1 net:[1]", "boot-1 net:[1]", &why));
  EXPECT_TRUE(UcxCanReach("boot-1 net:[1]", "boot-2 net:[7]", &why)) << "another host: RDMA";
  EXPECT_FALSE(UcxCanReach("boot-1 net:[1]", "boot-1 net:[2]", &why));
  EXPECT_NE(why.find("another network namespace"), std::string::npos) << why;
  EXPECT_FALSE(UcxCanReach("boot-1 net:[1]", "", &why));
  const std::string& here = UcxHostIdentity();
  EXPECT_NE(here.find(" net:["), std::string::npos) << here;
  EXPECT_TRUE(UcxCanReach(here, here, &why));
}

TEST_F(Ucx, GarbageAfterTheMoveIsAMalformedFrame) {
  std::string frame;
  AppendFrame("\xff\xff\xff\xff garbage", &frame);
  EXPECT_NE(ServerErrorAfterRawBytes(frame).find("malformed"), std::string::npos);
}

TEST_F(Ucx, TheFrameLimitHoldsAfterTheMove) {
  EXPECT_NE(ServerErrorAfterRawBytes(std::string("\x7f\xff\xff\xff", 4)).find("larger than"),
            std::string::npos);
}

TEST_F(Ucx, BytesOnTheSocketAfterTheMoveEndTheConnection) {
  Handshake();
  ASSERT_EQ(send(client_->fd(), "x", 1, MSG_NOSIGNAL), 1);
  wirepb::ClientHello got;
  EXPECT_FALSE(server_->Receive(&got));
  EXPECT_NE(server_->error().find("unexpected bytes"), std::string::npos) << server_->error();
}

TEST_F(Ucx, APeerThatGoesEndsTheStreamAfterItsLastMessage) {
  Handshake();
  auto server = std::async(std::launch::async, [this] {
    wirepb::ClientHello got;
    if (!server_->Receive(&got)) return "no last words: " + server_->error();
    if (server_->Receive(&got)) return "a message after the last one: " + got.service();
    return got.service() + "; " + server_->error();
  });
  wirepb::ClientHello m;
  m.set_service("last words");
  ASSERT_TRUE(client_->Send(m));
  client_.reset();  // the process of the peer ends: its socket closes
  EXPECT_EQ(server.get(), "last words; connection closed");
}

TEST_F(Ucx, ShutdownEndsAReceiveInProgressOnBothSides) {
  Handshake();
  auto blocked = std::async(std::launch::async, [this] {
    wirepb::ClientHello got;
    return server_->Receive(&got);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let it sleep
  server_->Shutdown();
  EXPECT_FALSE(blocked.get());
  wirepb::ClientHello got;
  EXPECT_FALSE(client_->Receive(&got));  // the peer learns it from the socket
}

}  // namespace
}  // namespace wire
}  // namespace djava
