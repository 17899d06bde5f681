// Channel: one connected, authenticated, framed message stream to a service,
// as the issue-4 client libraries use it. The wire library (proto/wire/)
// provides the real one over TCP; the interface keeps the clients' logic
// independent of the transport and lets tests join a client to a service in
// one process.
#ifndef DJAVA_CHANNEL_H_
#define DJAVA_CHANNEL_H_

#include <google/protobuf/message_lite.h>

#include <string>

namespace djava {

class Channel {
 public:
  virtual ~Channel() = default;
  // Sends one message. Callers serialise Send calls. False: connection lost.
  virtual bool Send(const google::protobuf::MessageLite& msg) = 0;
  // Blocks for the next message. False: connection closed or broken.
  virtual bool Receive(google::protobuf::MessageLite* msg) = 0;
  // Unblocks Receive (from any thread) and closes the connection.
  virtual void Shutdown() = 0;
  // Why the connection ended, for error messages.
  virtual std::string Error() const = 0;
};

}  // namespace djava

#endif  // DJAVA_CHANNEL_H_
