// The handshake that opens every djava connection (proto/wire.proto):
//   server -> ServerHello   version, server nonce
//   client -> ClientHello   version, client nonce, service, client proof
//   server -> ServerVerdict accepted + server proof, or refused + reason
// Proofs are HMAC-SHA256 over both fresh nonces with the cluster secret, so
// each side shows the other it knows the secret without sending it, and a
// recorded exchange cannot be replayed. Until the handshake ends, frames are
// limited to kHandshakeMaxFrame bytes and each side waits at most
// kHandshakeTimeoutMs for the other.
//
// When the process's transport (ucx_channel.h) allows, each side adds its
// UCX worker's address, bound into its proof, and an accepted connection
// continues on UCX; the caller sees the same Connection either way
// (Connection::transport() says which).
#ifndef DJAVA_WIRE_HANDSHAKE_H_
#define DJAVA_WIRE_HANDSHAKE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "wire/connection.h"

namespace djava {
namespace wire {

constexpr uint32_t kProtocolVersion = 1;
constexpr uint32_t kHandshakeMaxFrame = 8192;  // room for a UCX worker address
constexpr int kHandshakeTimeoutMs = 10000;
constexpr size_t kNonceSize = 32;

// True when the server accepted and proved it knows the secret.
bool ClientHandshake(Connection* c, const std::string& secret, const std::string& service,
                     std::string* error);

// True, with the service the client asked for, when the client proved it
// knows the secret. On false the caller closes the connection and logs *error.
// With known_service, an authenticated client naming another service is
// refused in the verdict with the reason.
bool ServerHandshake(Connection* c, const std::string& secret, std::string* service,
                     std::string* error,
                     const std::function<bool(const std::string&)>& known_service = nullptr);

// The proofs, exposed for tests; a UCX address, when sent, is bound in.
std::string ClientProof(const std::string& secret, const std::string& server_nonce,
                        const std::string& client_nonce, const std::string& service,
                        const std::string& ucx_address = "", const std::string& ucx_host = "");
std::string ServerProof(const std::string& secret, const std::string& server_nonce,
                        const std::string& client_nonce, const std::string& ucx_address = "",
                        const std::string& ucx_host = "");

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_HANDSHAKE_H_
