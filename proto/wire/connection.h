// Connection: a framed protobuf message stream over a connected socket, plus
// the TCP helpers to make one. The wire library's transport for every djava
// component; handshake.h authenticates a fresh one and may move its frames
// to a faster channel (UseChannel) while the socket stays open beside it.
#ifndef DJAVA_WIRE_CONNECTION_H_
#define DJAVA_WIRE_CONNECTION_H_

#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "wire/channel.h"
#include "wire/frame.h"

namespace djava {
namespace wire {

class Connection {
 public:
  // Takes ownership of fd.
  explicit Connection(int fd, uint32_t max_frame_size = kDefaultMaxFrameSize);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends one message; safe from several threads. False: connection lost.
  bool Send(const google::protobuf::MessageLite& msg);
  // Receives the next message (one reader at a time). False on end of stream,
  // error, an oversized frame or a frame that is not a valid msg; error()
  // then says which.
  bool Receive(google::protobuf::MessageLite* msg);
  // Unblocks a Receive in progress and ends the connection, from any thread.
  void Shutdown();
  // The next Receive returns without reading the socket: a frame that came
  // in the same read as the last one is buffered (by the reader only).
  bool HasBufferedFrame() const { return decoder_.HasFrame(); }

  // Receive gives up after this long without a whole frame (0: never).
  void SetReceiveTimeout(int milliseconds);
  void set_max_frame_size(uint32_t max) { decoder_.set_max_frame_size(max); }
  uint32_t max_frame_size() const { return decoder_.max_frame_size(); }

  std::string error() const;
  // The TCP socket the connection was opened on.
  int fd() const { return fd_; }

  // Frames travel on `channel` from now on (the handshake's last step;
  // nothing may be sending or receiving, and no received bytes may wait).
  void UseChannel(std::unique_ptr<Channel> channel);
  Channel* channel() const { return channel_.get(); }
  // The channel's name: "tcp" or "ucx".
  const char* transport() const { return channel_->name(); }

 private:
  bool ReadFrame(std::string* frame);
  void SetError(const std::string& e);

  const int fd_;
  std::unique_ptr<Channel> channel_;
  FrameDecoder decoder_;
  std::mutex send_mu_;
  mutable std::mutex error_mu_;
  std::string error_;
};

// "host:port", IPv6 as "[addr]:port". False with *error on a malformed address.
bool SplitHostPort(const std::string& host_port, std::string* host, std::string* port,
                   std::string* error);
// The addresses of "host:port,host:port,...", in order; empty items dropped.
std::vector<std::string> SplitAddressList(const std::string& list);
// A connected TCP socket, or -1 with *error.
int ConnectTcp(const std::string& host_port, std::string* error);
// A listening TCP socket bound to host_port (port 0: any free port), or -1.
int ListenTcp(const std::string& host_port, std::string* error);
// The port a socket is bound to.
int LocalPort(int fd);

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_CONNECTION_H_
