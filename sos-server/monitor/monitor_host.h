// MonitorHost: runs the MonitorService on wire connections inside sos-server,
// as the service named "monitor" (one connection = one node). The service is
// not thread-safe, so every call into it is made under one mutex: from each
// connection's thread as its requests arrive, and from a timer thread that
// runs OnTick at the service's next deadline (timed waits).
//
// Events leave through a per-node Outbox (sos-server/outbox.h): queued in
// service order under the mutex, never written with a blocking send there,
// so one slow node cannot stall the others. A node that stops reading is
// disconnected once too much waits for it (which fails its programs, as its
// death would).
#ifndef DJAVA_MONITOR_MONITOR_HOST_H_
#define DJAVA_MONITOR_MONITOR_HOST_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "monitor_service.h"
#include "wire/connection.h"
#include "wire/service_host.h"

namespace djava {
namespace monitor {

class MonitorHost : private MonitorService::Transport {
 public:
  // Told when the thread manager says a program ended (after its monitors
  // are freed, outside the host's lock): the process's other services free
  // what else the program had (sos-server: its chunks).
  using ProgramEnded = std::function<void(ProgramId)>;

  explicit MonitorHost(wire::ServiceHost::Log log, MonitorTable::Options options = {},
                       ProgramEnded program_ended = nullptr);
  ~MonitorHost() override;  // stops its timer thread
  MonitorHost(const MonitorHost&) = delete;
  MonitorHost& operator=(const MonitorHost&) = delete;

  // AddService("monitor", ...) on the host; before host->Listen.
  void Register(wire::ServiceHost* host);

  // The handler of one "monitor" connection; returns when it ends.
  void Serve(std::unique_ptr<wire::Connection> conn, const std::string& peer);

  // One line for SIGUSR1 and exit.
  std::string Stats() const;

 private:
  struct Node;

  // MonitorService::Transport; called under mu_.
  void Send(NodeId node, const monitorpb::MonitorEvent& ev) override;
  void Close(NodeId node, const std::string& why) override;

  // Wakes the timer if the service's next deadline moved earlier. Under mu_.
  void RearmTimerLocked();
  void TimerLoop();
  void Say(const std::string& line) const;

  const wire::ServiceHost::Log log_;
  const ProgramEnded program_ended_;

  mutable std::mutex mu_;
  MonitorService service_;
  std::map<NodeId, std::shared_ptr<Node>> nodes_;
  NodeId next_node_ = 0;
  bool stop_ = false;
  TimeNs armed_ = kNoDeadline;  // the deadline the timer thread sleeps until
  std::condition_variable timer_cv_;
  std::thread timer_;

  // Statistics, under mu_.
  uint64_t connections_ = 0;
  uint64_t requests_ = 0;
  uint64_t events_ = 0;
  uint64_t ticks_ = 0;
  uint64_t closed_by_service_ = 0;
};

}  // namespace monitor
}  // namespace djava

#endif  // DJAVA_MONITOR_MONITOR_HOST_H_
