#include "wire/connection.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wire/traffic.h"

namespace djava {
namespace wire {

namespace {

class TcpChannel : public Channel {
 public:
  explicit TcpChannel(int fd) : fd_(fd) {}

  ssize_t TryWrite(const char* data, size_t n, std::string* error) override {
    while (true) {
      ssize_t sent = send(fd_, data, n, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (sent >= 0) return sent;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      *error = std::string("send failed: ") + std::strerror(errno);
      return -1;
    }
  }

  void WaitWritable(int timeout_ms) override {
    pollfd p{fd_, POLLOUT, 0};
    poll(&p, 1, timeout_ms);
  }

  ssize_t Read(char* buf, size_t n, std::string* error) override {
    while (true) {
      ssize_t got = recv(fd_, buf, n, 0);
      if (got >= 0) return got;
      if (errno == EINTR) continue;
      *error = (errno == EAGAIN || errno == EWOULDBLOCK)
                   ? std::string("timed out waiting for a frame")
                   : std::string("receive failed: ") + std::strerror(errno);
      return -1;
    }
  }

  void SetReadTimeout(int milliseconds) override {
    struct timeval tv;
    tv.tv_sec = milliseconds / 1000;
    tv.tv_usec = (milliseconds % 1000) * 1000;
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

  void Shutdown() override { shutdown(fd_, SHUT_RDWR); }
  const char* name() const override { return "tcp"; }

 private:
  const int fd_;
};

}  // namespace

std::unique_ptr<Channel> NewTcpChannel(int fd) { return std::make_unique<TcpChannel>(fd); }

Connection::Connection(int fd, uint32_t max_frame_size)
    : fd_(fd), channel_(NewTcpChannel(fd)), decoder_(max_frame_size) {}

Connection::~Connection() {
  channel_.reset();  // a UCX channel watches the socket until it goes
  close(fd_);
}

void Connection::UseChannel(std::unique_ptr<Channel> channel) { channel_ = std::move(channel); }

void Connection::SetError(const std::string& e) {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (error_.empty()) error_ = e;
}

std::string Connection::error() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return error_;
}

bool Connection::Send(const google::protobuf::MessageLite& msg) {
  std::string payload;
  if (!msg.SerializeToString(&payload)) {
    SetError("cannot serialize " + msg.GetTypeName());
    return false;
  }
  std::string frame;
  AppendFrame(payload, &frame);
  std::lock_guard<std::mutex> lock(send_mu_);
  size_t sent = 0;
  while (sent < frame.size()) {
    std::string error;
    ssize_t n = channel_->TryWrite(frame.data() + sent, frame.size() - sent, &error);
    if (n < 0) {
      SetError(error);
      return false;
    }
    if (n == 0) channel_->WaitWritable(-1);
    sent += static_cast<size_t>(n);
  }
  channel_->Flush(-1);
  CountSent(frame.size());
  return true;
}

bool Connection::ReadFrame(std::string* frame) {
  char buf[64 * 1024];
  while (true) {
    uint32_t declared = 0;
    switch (decoder_.Next(frame, &declared)) {
      case FrameDecoder::Result::kFrame:
        return true;
      case FrameDecoder::Result::kTooLarge:
        SetError("frame of " + std::to_string(declared) + " bytes is larger than the maximum " +
                 std::to_string(decoder_.max_frame_size()));
        return false;
      case FrameDecoder::Result::kNeedMore:
        break;
    }
    std::string error;
    ssize_t n = channel_->Read(buf, sizeof buf, &error);
    if (n < 0) {
      SetError(error);
      return false;
    }
    if (n == 0) {
      SetError(decoder_.buffered() > 0 ? "connection closed inside a frame (truncated)"
                                       : "connection closed");
      return false;
    }
    decoder_.Feed(buf, static_cast<size_t>(n));
  }
}

bool Connection::Receive(google::protobuf::MessageLite* msg) {
  std::string frame;
  if (!ReadFrame(&frame)) return false;
  CountReceived(frame.size() + kFrameHeaderSize);
  if (!msg->ParseFromString(frame)) {
    SetError("malformed frame: not a valid " + msg->GetTypeName());
    return false;
  }
  return true;
}

void Connection::Shutdown() { channel_->Shutdown(); }

void Connection::SetReceiveTimeout(int milliseconds) { channel_->SetReadTimeout(milliseconds); }

bool SplitHostPort(const std::string& host_port, std::string* host, std::string* port,
                   std::string* error) {
  size_t colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == host_port.size()) {
    *error = "address '" + host_port + "' is not host:port";
    return false;
  }
  *host = host_port.substr(0, colon);
  *port = host_port.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return true;
}

static addrinfo* Resolve(const std::string& host_port, bool passive, std::string* error) {
  std::string host, port;
  if (!SplitHostPort(host_port, &host, &port, error)) return nullptr;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* result = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0) {
    *error = "cannot resolve '" + host_port + "': " + gai_strerror(rc);
    return nullptr;
  }
  return result;
}

std::vector<std::string> SplitAddressList(const std::string& list) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

int ConnectTcp(const std::string& host_port, std::string* error) {
  addrinfo* addrs = Resolve(host_port, false, error);
  if (addrs == nullptr) return -1;
  int fd = -1;
  for (addrinfo* a = addrs; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      *error = "cannot connect to " + host_port + ": " + std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(addrs);
  if (fd >= 0) {
    int one = 1;  // small request/response frames: never wait for Nagle
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

int ListenTcp(const std::string& host_port, std::string* error) {
  addrinfo* addrs = Resolve(host_port, true, error);
  if (addrs == nullptr) return -1;
  int fd = -1;
  for (addrinfo* a = addrs; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 128) != 0) {
      *error = "cannot listen on " + host_port + ": " + std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(addrs);
  return fd;
}

int LocalPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
}

}  // namespace wire
}  // namespace djava
