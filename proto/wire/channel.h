// Channel: the byte stream a Connection's frames travel on. Every
// connection starts on its TCP socket (the handshake's transport); the
// handshake may move it to UCX (ucx_channel.h), after which the socket only
// tells that the peer is gone. One reader at a time; writers are the
// channel's own business to serialize.
#ifndef DJAVA_WIRE_CHANNEL_H_
#define DJAVA_WIRE_CHANNEL_H_

#include <sys/types.h>

#include <memory>
#include <string>

namespace djava {
namespace wire {

class Channel {
 public:
  virtual ~Channel() = default;

  // Takes what it can of data now without waiting: the number of bytes
  // taken (0 when the channel is full), or -1 with *error when it failed.
  virtual ssize_t TryWrite(const char* data, size_t n, std::string* error) = 0;
  // Waits up to timeout_ms (-1: no limit) until TryWrite may take bytes.
  virtual void WaitWritable(int timeout_ms) = 0;
  // Drives sending for up to timeout_ms (-1: until every byte taken has
  // left this process, the channel failed or the peer went). A socket's
  // kernel sends on its own; UCX sends only while someone drives it.
  virtual void Flush(int timeout_ms) { (void)timeout_ms; }
  // Reads up to n bytes, waiting for at least one: the number read, 0 at
  // the end of the stream (the peer closed, or Shutdown), or -1 with
  // *error (a failure, or no bytes within the read timeout).
  virtual ssize_t Read(char* buf, size_t n, std::string* error) = 0;
  // Read gives up after this long without bytes (0: never).
  virtual void SetReadTimeout(int milliseconds) = 0;
  // Ends the stream both ways, from any thread: a Read in progress returns.
  virtual void Shutdown() = 0;
  // "tcp", "ucx": for logs and statistics.
  virtual const char* name() const = 0;
};

// A channel on a connected socket, which stays the caller's.
std::unique_ptr<Channel> NewTcpChannel(int fd);

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_CHANNEL_H_
