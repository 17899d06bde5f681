// What every djava daemon (sos-server, thread-manager) does around its
// ServiceHost: timestamped log lines on stderr, and signals taken by one
// thread with sigwait, never in a handler: SIGTERM and SIGINT stop the host
// (exit 0), SIGUSR1 prints statistics. SIGPIPE is ignored: a dead peer is
// an error return from send.
#ifndef DJAVA_WIRE_DAEMON_H_
#define DJAVA_WIRE_DAEMON_H_

#include <signal.h>

#include <functional>
#include <string>

#include "wire/service_host.h"

namespace djava {
namespace wire {

// A Log writing "PROGRAM HH:MM:SS: line" to stderr, one whole line at a time.
ServiceHost::Log StderrLog(std::string program);

class DaemonSignals {
 public:
  // Blocks the daemon's signals in the calling thread. Construct it first
  // in main, before any thread starts: threads inherit the mask, so only
  // Run's signal thread ever takes them.
  DaemonSignals();

  // Runs host (already listening) until SIGTERM or SIGINT, calling
  // print_stats on every SIGUSR1 and once at the end. Returns the exit
  // status: 0 when a signal stopped it, 1 when the host ended by itself
  // (its accept failed; the host logged why).
  int Run(ServiceHost* host, const std::function<void()>& print_stats,
          const ServiceHost::Log& log);

 private:
  sigset_t signals_;
};

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_DAEMON_H_
