#include "wire/handshake.h"

#include "wire.pb.h"
#include "wire/hmac.h"
#include "wire/traffic.h"
#include "wire/ucx_channel.h"

namespace djava {
namespace wire {

namespace {

// What a proof adds for a UCX address: nothing without one, so a TCP-only
// handshake proves exactly what it always did.
std::string UcxBinding(const std::string& ucx_address, const std::string& ucx_host) {
  if (ucx_address.empty()) return "";
  return std::string("\0ucx\0", 5) + ucx_address + '\0' + ucx_host;
}

}  // namespace

std::string ClientProof(const std::string& secret, const std::string& server_nonce,
                        const std::string& client_nonce, const std::string& service,
                        const std::string& ucx_address, const std::string& ucx_host) {
  return HmacSha256(secret, std::string("djava client", 12) + '\0' + server_nonce + client_nonce +
                                service + UcxBinding(ucx_address, ucx_host));
}

std::string ServerProof(const std::string& secret, const std::string& server_nonce,
                        const std::string& client_nonce, const std::string& ucx_address,
                        const std::string& ucx_host) {
  return HmacSha256(secret, std::string("djava server", 12) + '\0' + client_nonce + server_nonce +
                                UcxBinding(ucx_address, ucx_host));
}

namespace {

// Applies the handshake's frame limit and timeout, restoring the frame limit
// after (the timeout is lifted: services wait as long as they like).
class HandshakeLimits {
 public:
  explicit HandshakeLimits(Connection* c) : c_(c), max_(c->max_frame_size()) {
    c_->set_max_frame_size(kHandshakeMaxFrame);
    c_->SetReceiveTimeout(kHandshakeTimeoutMs);
  }
  ~HandshakeLimits() {
    c_->set_max_frame_size(max_);
    c_->SetReceiveTimeout(0);
  }

 private:
  Connection* c_;
  uint32_t max_;
};

}  // namespace

bool ClientHandshake(Connection* c, const std::string& secret, const std::string& service,
                     std::string* error) {
  HandshakeLimits limits(c);
  wirepb::ServerHello hello;
  if (!c->Receive(&hello)) {
    *error = "handshake: no server hello (" + c->error() + ")";
    return false;
  }
  if (hello.protocol_version() != kProtocolVersion || hello.nonce().size() != kNonceSize) {
    *error = "handshake: server speaks protocol version " +
             std::to_string(hello.protocol_version()) + ", this client " +
             std::to_string(kProtocolVersion);
    return false;
  }
  const std::string nonce = RandomBytes(kNonceSize);
  if (nonce.empty()) {
    *error = "handshake: no random bytes for a nonce";
    return false;
  }
  Transport transport;
  if (!ProcessTransport(&transport, error)) return false;
  std::unique_ptr<UcxWorker> ucx;
  if (transport != Transport::kTcp) {
    std::string why;
    ucx = UcxWorker::Create(&why);
    if (ucx == nullptr && transport == Transport::kUcx) {
      *error = "handshake: transport ucx asked for, but " + why;
      return false;
    }
  }
  const std::string my_address = ucx != nullptr ? ucx->address() : "";
  const std::string my_host = ucx != nullptr ? UcxHostIdentity() : "";
  wirepb::ClientHello mine;
  mine.set_protocol_version(kProtocolVersion);
  mine.set_nonce(nonce);
  mine.set_service(service);
  mine.set_proof(ClientProof(secret, hello.nonce(), nonce, service, my_address, my_host));
  mine.set_ucx_address(my_address);
  mine.set_ucx_host(my_host);
  wirepb::ServerVerdict verdict;
  if (!c->Send(mine) || !c->Receive(&verdict)) {
    *error = "handshake: server closed the connection (" + c->error() + ")";
    return false;
  }
  if (!verdict.accepted()) {
    *error = "handshake: server refused the connection: " + verdict.reason();
    return false;
  }
  if (!ConstantTimeEqual(verdict.proof(),
                         ServerProof(secret, hello.nonce(), nonce, verdict.ucx_address(),
                                     verdict.ucx_host()))) {
    *error = "handshake: the server could not prove it knows the cluster secret";
    return false;
  }
  if (verdict.ucx_address().empty()) {
    if (transport == Transport::kUcx) {
      *error = "handshake: transport ucx asked for, but the server offers only tcp";
      return false;
    }
    CountConnection(false);
    return true;
  }
  if (ucx == nullptr) {
    *error = "handshake: the server answered with UCX, which this client did not offer";
    return false;
  }
  std::string why;
  if (!UcxCanReach(UcxHostIdentity(), verdict.ucx_host(), &why)) {
    *error = "handshake: the server answered with UCX, but " + why;
    return false;
  }
  std::unique_ptr<Channel> channel =
      UcxWorker::Connect(std::move(ucx), verdict.ucx_address(), c->fd(), error);
  if (channel == nullptr) {
    *error = "handshake: " + *error;
    return false;
  }
  c->UseChannel(std::move(channel));
  CountConnection(true);
  return true;
}

namespace {

// The server's side of the choice, for a client that proved the secret:
// UCX when the client offered it and this process allows it (*ucx is the
// channel to use once the verdict is sent, and the verdict carries this
// side's address), else TCP. False with *error when the two cannot agree.
bool ChooseChannel(Connection* c, const std::string& client_address,
                   const std::string& client_host, wirepb::ServerVerdict* verdict,
                   std::unique_ptr<Channel>* ucx, std::string* error) {
  Transport transport;
  if (!ProcessTransport(&transport, error)) return false;
  if (client_address.empty() || transport == Transport::kTcp) {
    if (transport == Transport::kUcx) {
      *error = "this server takes ucx connections only, and the client offered tcp";
      return false;
    }
    return true;
  }
  std::string why;
  std::unique_ptr<UcxWorker> worker;
  if (UcxCanReach(UcxHostIdentity(), client_host, &why)) worker = UcxWorker::Create(&why);
  std::string address = worker != nullptr ? worker->address() : "";
  if (worker != nullptr)
    *ucx = UcxWorker::Connect(std::move(worker), client_address, c->fd(), &why);
  if (*ucx == nullptr) {
    if (transport == Transport::kUcx) {
      *error = "this server takes ucx connections only: " + why;
      return false;
    }
    return true;  // auto: stay on TCP
  }
  verdict->set_ucx_address(address);
  verdict->set_ucx_host(UcxHostIdentity());
  return true;
}

}  // namespace

bool ServerHandshake(Connection* c, const std::string& secret, std::string* service,
                     std::string* error,
                     const std::function<bool(const std::string&)>& known_service) {
  HandshakeLimits limits(c);
  const std::string nonce = RandomBytes(kNonceSize);
  if (nonce.empty()) {
    *error = "handshake: no random bytes for a nonce";
    return false;
  }
  wirepb::ServerHello hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_nonce(nonce);
  wirepb::ClientHello theirs;
  if (!c->Send(hello) || !c->Receive(&theirs)) {
    *error = "handshake: " + c->error();
    return false;
  }
  wirepb::ServerVerdict verdict;
  std::unique_ptr<Channel> ucx;
  if (theirs.protocol_version() != kProtocolVersion) {
    *error = "handshake: client speaks protocol version " +
             std::to_string(theirs.protocol_version());
    verdict.set_reason("protocol version " + std::to_string(theirs.protocol_version()) +
                       " is not supported; this server speaks " + std::to_string(kProtocolVersion));
  } else if (theirs.nonce().size() != kNonceSize ||
             !ConstantTimeEqual(theirs.proof(),
                                ClientProof(secret, nonce, theirs.nonce(), theirs.service(),
                                            theirs.ucx_address(), theirs.ucx_host()))) {
    *error = "handshake: authentication failed (wrong cluster secret)";
    verdict.set_reason("authentication failed");
  } else if (known_service && !known_service(theirs.service())) {
    *error = "handshake: the client asked for unknown service '" + theirs.service() + "'";
    verdict.set_reason("unknown service '" + theirs.service() + "'");
  } else if (!ChooseChannel(c, theirs.ucx_address(), theirs.ucx_host(), &verdict, &ucx, error)) {
    verdict.set_reason(*error);
    *error = "handshake: " + *error;
  } else {
    verdict.set_accepted(true);
    verdict.set_proof(ServerProof(secret, nonce, theirs.nonce(), verdict.ucx_address(),
                                  verdict.ucx_host()));
    *service = theirs.service();
  }
  if (!c->Send(verdict)) {
    *error = "handshake: " + c->error();
    return false;
  }
  if (!verdict.accepted()) return false;
  CountConnection(ucx != nullptr);
  if (ucx != nullptr) c->UseChannel(std::move(ucx));
  return true;
}

}  // namespace wire
}  // namespace djava
