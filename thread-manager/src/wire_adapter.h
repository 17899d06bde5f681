// What the thread-manager and monitor clients need from the wire library
// (proto/wire/): an authenticated client Channel. Everything else in
// thread-manager/ and */monitor/ is independent of the transport.
#ifndef DJAVA_TM_WIRE_ADAPTER_H_
#define DJAVA_TM_WIRE_ADAPTER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "djava/channel.h"

namespace djava {
namespace wire_adapter {

// Connects to host:port, runs the handshake and HMAC authentication with the
// secret in `secret_file`, selects `service` ("tm" or "monitor"). Null on
// failure with *error set.
std::unique_ptr<Channel> Connect(const std::string& host_port, const std::string& secret_file,
                                 const std::string& service, std::string* error);

// Copies `why` into the C ABI's caller-provided error buffer (truncating,
// always terminated); does nothing when the caller gave none.
void WriteError(const std::string& why, char* err, size_t err_len);

}  // namespace wire_adapter
}  // namespace djava

#endif  // DJAVA_TM_WIRE_ADAPTER_H_
