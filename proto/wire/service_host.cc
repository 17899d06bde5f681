#include "wire/service_host.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wire/handshake.h"

namespace djava {
namespace wire {

namespace {

std::string PeerName(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
  inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
  port = ntohs(a->sin6_port);
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

}  // namespace

ServiceHost::ServiceHost(std::string secret, Log log)
    : secret_(std::move(secret)), log_(std::move(log)) {}

ServiceHost::~ServiceHost() {
  Stop();
  std::map<std::thread::id, std::thread> threads;
  std::vector<std::thread> finished;
  {
    std::lock_guard<std::mutex> l(mu_);
    threads.swap(threads_);
    finished.swap(finished_);
  }
  for (auto& [id, t] : threads) t.join();
  for (auto& t : finished) t.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void ServiceHost::AddService(const std::string& name, Handler handler) {
  services_[name] = std::move(handler);
}

bool ServiceHost::Listen(const std::string& host_port, std::string* error) {
  listen_fd_ = ListenTcp(host_port, error);
  if (listen_fd_ < 0) return false;
  port_ = LocalPort(listen_fd_);
  return true;
}

void ServiceHost::Run() {
  for (;;) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
    std::vector<std::thread> reap;
    bool stopping;
    {
      std::lock_guard<std::mutex> l(mu_);
      reap.swap(finished_);
      stopping = stopping_;
    }
    for (auto& t : reap) t.join();
    if (stopping) {
      if (fd >= 0) close(fd);
      break;
    }
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) {
        if (errno == EMFILE || errno == ENFILE) usleep(10000);
        continue;
      }
      if (log_) log_(std::string("accept failed: ") + std::strerror(errno));
      break;
    }
    int one = 1;  // request/response frames: never wait for Nagle
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::string peer = PeerName(addr);
    std::lock_guard<std::mutex> l(mu_);
    std::thread t([this, fd, peer] { Serve(fd, peer); });
    threads_.emplace(t.get_id(), std::move(t));
  }
}

void ServiceHost::Serve(int fd, std::string peer) {
  // The handler owns the connection and may close it whenever it likes; a
  // duplicate descriptor of the same socket, ours until the handler
  // returns, lets Stop() shut the socket down without racing that close.
  const int keeper = dup(fd);
  auto conn = std::make_unique<Connection>(fd);
  bool stopping;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping = stopping_ || keeper < 0;
    if (!stopping) live_.insert(keeper);
  }
  if (!stopping) {
    std::string service, error;
    auto known = [this](const std::string& name) { return services_.count(name) != 0; };
    if (!ServerHandshake(conn.get(), secret_, &service, &error, known)) {
      if (log_) log_(peer + ": " + error + "; closing");
      conn.reset();
    } else {
      services_.at(service)(std::move(conn), peer);
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    live_.erase(keeper);
  }
  if (keeper >= 0) close(keeper);
  // Hand this thread to the accept loop (or the destructor) for joining.
  std::lock_guard<std::mutex> l(mu_);
  auto it = threads_.find(std::this_thread::get_id());
  if (it != threads_.end()) {
    finished_.push_back(std::move(it->second));
    threads_.erase(it);
  }
}

size_t ServiceHost::threads() const {
  std::lock_guard<std::mutex> l(mu_);
  return threads_.size() + finished_.size();
}

void ServiceHost::OnStop(std::function<void()> f) { on_stop_.push_back(std::move(f)); }

void ServiceHost::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  if (stopping_) return;
  stopping_ = true;
  for (const auto& f : on_stop_) f();
  if (listen_fd_ >= 0) shutdown(listen_fd_, SHUT_RDWR);
  for (int fd : live_) shutdown(fd, SHUT_RDWR);
}

}  // namespace wire
}  // namespace djava
