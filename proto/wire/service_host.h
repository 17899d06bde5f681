// ServiceHost: the server side of every djava daemon. It listens on one TCP
// address, runs the handshake (handshake.h) on each new connection in that
// connection's own thread (so a silent or slow peer never holds up others),
// and hands an authenticated connection to the handler registered for the
// service the client named. A connection naming an unknown service is
// refused in the handshake's verdict, and only after it authenticated, so an
// unauthenticated peer learns nothing about which services exist.
#ifndef DJAVA_WIRE_SERVICE_HOST_H_
#define DJAVA_WIRE_SERVICE_HOST_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "wire/connection.h"

namespace djava {
namespace wire {

class ServiceHost {
 public:
  // Runs on the connection's thread after a successful handshake and owns
  // the connection; the connection ends when the handler returns. `peer` is
  // "addr:port" of the remote end, for logs and error messages.
  using Handler = std::function<void(std::unique_ptr<Connection> conn, const std::string& peer)>;
  using Log = std::function<void(const std::string& line)>;

  ServiceHost(std::string secret, Log log);
  ~ServiceHost();  // Stop()s and joins every connection thread.
  ServiceHost(const ServiceHost&) = delete;
  ServiceHost& operator=(const ServiceHost&) = delete;

  // Before Listen.
  void AddService(const std::string& name, Handler handler);
  // Before Listen: runs first in Stop(), before any connection is shut
  // down, so a service can stop answering before its peers' connections
  // close one by one (and not mistake those closes for its peers' ends).
  void OnStop(std::function<void()> f);

  // Binds host_port (port 0: any free port). False with *error.
  bool Listen(const std::string& host_port, std::string* error);
  int port() const { return port_; }

  // Accepts until Stop(); returns then.
  void Run();
  // From any thread (not from a signal handler): stops accepting and shuts
  // down every live connection, so that handlers' Receive calls fail and
  // handlers return.
  void Stop();

  // Thread objects held: live connections plus finished ones not yet joined
  // (joined at the next accept). Stays bounded by the live connections.
  size_t threads() const;

 private:
  void Serve(int fd, std::string peer);

  const std::string secret_;
  const Log log_;
  std::map<std::string, Handler> services_;
  std::vector<std::function<void()>> on_stop_;
  int listen_fd_ = -1;
  int port_ = 0;

  mutable std::mutex mu_;
  bool stopping_ = false;
  std::set<int> live_;  // a duplicate descriptor of every live connection's socket
  std::map<std::thread::id, std::thread> threads_;
  std::vector<std::thread> finished_;
};

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_SERVICE_HOST_H_
