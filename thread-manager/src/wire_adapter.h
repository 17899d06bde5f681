// The two things issue 4 needs from the wire library (proto/wire/): serving
// a message-level service on a listening socket, and a client Channel.
// wire_adapter.cc implements them over helper A's library; everything else in
// thread-manager/ and */monitor/ is independent of the transport.
#ifndef DJAVA_TM_WIRE_ADAPTER_H_
#define DJAVA_TM_WIRE_ADAPTER_H_

#include <functional>
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

}  // namespace wire_adapter
}  // namespace djava

#endif  // DJAVA_TM_WIRE_ADAPTER_H_
