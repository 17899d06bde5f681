#include "wire/handshake.h"

#include "wire.pb.h"
#include "wire/hmac.h"

namespace djava {
namespace wire {

std::string ClientProof(const std::string& secret, const std::string& server_nonce,
                        const std::string& client_nonce, const std::string& service) {
  return HmacSha256(secret, std::string("djava client", 12) + '\0' + server_nonce + client_nonce +
                                service);
}

std::string ServerProof(const std::string& secret, const std::string& server_nonce,
                        const std::string& client_nonce) {
  return HmacSha256(secret, std::string("djava server", 12) + '\0' + client_nonce + server_nonce);
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
  wirepb::ClientHello mine;
  mine.set_protocol_version(kProtocolVersion);
  mine.set_nonce(nonce);
  mine.set_service(service);
  mine.set_proof(ClientProof(secret, hello.nonce(), nonce, service));
  wirepb::ServerVerdict verdict;
  if (!c->Send(mine) || !c->Receive(&verdict)) {
    *error = "handshake: server closed the connection (" + c->error() + ")";
    return false;
  }
  if (!verdict.accepted()) {
    *error = "handshake: server refused the connection: " + verdict.reason();
    return false;
  }
  if (!ConstantTimeEqual(verdict.proof(), ServerProof(secret, hello.nonce(), nonce))) {
    *error = "handshake: the server could not prove it knows the cluster secret";
    return false;
  }
  return true;
}

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
  if (theirs.protocol_version() != kProtocolVersion) {
    *error = "handshake: client speaks protocol version " +
             std::to_string(theirs.protocol_version());
    verdict.set_reason("protocol version " + std::to_string(theirs.protocol_version()) +
                       " is not supported; this server speaks " + std::to_string(kProtocolVersion));
  } else if (theirs.nonce().size() != kNonceSize ||
             !ConstantTimeEqual(theirs.proof(),
                                ClientProof(secret, nonce, theirs.nonce(), theirs.service()))) {
    *error = "handshake: authentication failed (wrong cluster secret)";
    verdict.set_reason("authentication failed");
  } else if (known_service && !known_service(theirs.service())) {
    *error = "handshake: the client asked for unknown service '" + theirs.service() + "'";
    verdict.set_reason("unknown service '" + theirs.service() + "'");
  } else {
    verdict.set_accepted(true);
    verdict.set_proof(ServerProof(secret, nonce, theirs.nonce()));
    *service = theirs.service();
  }
  if (!c->Send(verdict)) {
    *error = "handshake: " + c->error();
    return false;
  }
  return verdict.accepted();
}

}  // namespace wire
}  // namespace djava
