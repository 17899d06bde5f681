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

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "message_trace.h"
#include "monitor_service.h"
#include "sos_service.h"
#include "wire/connection.h"
#include "wire/service_host.h"

namespace djava {
namespace monitor {

// Monitors and chunks of one object live on the same sos-server: a monitor
// handed from node to node brings the object's modified chunk along
// (SosService::MoveToNode).
class ChunkMover : public MonitorService::DataMover {
 public:
  explicit ChunkMover(sos::SosService* sos) : sos_(sos) {}
  uint64_t Mark(uint64_t node) override { return sos_->ExclusiveMark(node); }
  bool Move(ObjectId obj, uint64_t from_node, uint64_t to_node, uint64_t since,
            ProgramId program, std::function<void()> sent,
            const std::vector<uint64_t>& released) override {
    return sos_->MoveToNode(obj, from_node, to_node, since, program, std::move(sent), released);
  }

 private:
  sos::SosService* const sos_;
};

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

  // Grants handed from node to node wait for the object's chunk
  // (MonitorService::DataMover); before Register.
  void SetDataMover(MonitorService::DataMover* mover) { service_.SetDataMover(mover); }

  // One line for SIGUSR1 and exit.
  std::string Stats() const;

  // Appends to `path` a line for every request the service takes and every
  // event it sends (the time, the node, the message), for following a
  // stall or a race message by message (sos-server --trace-monitors).
  // Before Register. False, with *error, if the file cannot be opened.
  bool TraceTo(const std::string& path, std::string* error);

 private:
  struct Node;

  // MonitorService::Transport; called under mu_.
  void Send(NodeId node, const monitorpb::MonitorEvent& ev) override;
  void Close(NodeId node, const std::string& why) override;
  std::function<void()> SendLater(NodeId node, const monitorpb::MonitorEvent& ev) override;

  // Wakes the timer if the service's next deadline moved earlier. Under mu_.
  void RearmTimerLocked();
  // Grants held for their object's data (SendLater): the earliest that is
  // due (forgetting those sent), and sending those due. Under mu_.
  TimeNs NextLateGrantLocked();
  void SendLateGrantsLocked(TimeNs now);
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
  // How long a grant waits for its object's data at most.
  static constexpr TimeNs kDataWaitLimitNs = 100 * 1000 * 1000;
  struct LateGrant {
    TimeNs due;
    std::shared_ptr<std::atomic<bool>> sent;
    std::function<void()> post;
  };
  std::vector<LateGrant> late_;  // under mu_

  sos::MessageTrace trace_;

  // Statistics, under mu_.
  uint64_t connections_ = 0;
  uint64_t requests_ = 0;
  uint64_t events_ = 0;
  uint64_t ticks_ = 0;
  uint64_t closed_by_service_ = 0;
  uint64_t grants_not_waiting_ = 0;  // held grants the timer sent
};

}  // namespace monitor
}  // namespace djava

#endif  // DJAVA_MONITOR_MONITOR_HOST_H_
