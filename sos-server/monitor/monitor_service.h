// MonitorService: the monitor service's protocol handling, between decoded
// monitor.proto messages and the MonitorTable. Transport-agnostic: sos-server
// hosts it on its wire connections (one connection = one node); tests can
// drive it directly. Not thread-safe: the host serialises calls.
#ifndef DJAVA_MONITOR_MONITOR_SERVICE_H_
#define DJAVA_MONITOR_MONITOR_SERVICE_H_

#include <functional>
#include <map>
#include <string>

#include "monitor.pb.h"
#include "monitor_table.h"

namespace djava {
namespace monitor {

class MonitorService {
 public:
  class Transport {
   public:
    virtual ~Transport() = default;
    virtual void Send(NodeId node, const monitorpb::MonitorEvent& ev) = 0;
    virtual void Close(NodeId node, const std::string& why) = 0;
  };

  MonitorService(MonitorTable::Options options, Transport* transport,
                 std::function<void(const std::string&)> log = nullptr);

  void OnConnect(NodeId node, const std::string& peer);
  void OnMessage(NodeId node, const monitorpb::MonitorRequest& req, TimeNs now);
  void OnDisconnect(NodeId node, TimeNs now);
  void OnTick(TimeNs now);
  // When OnTick must next run (a timed wait's deadline), or kNoDeadline.
  TimeNs NextDeadline() const { return table_.NextDeadline(); }
  // The program ended (from the thread manager): free its monitors.
  void FreeProgram(ProgramId program, TimeNs now);
  const MonitorTable& table() const { return table_; }

 private:
  void Deliver(const std::vector<Event>& events);
  void Log(const std::string& line);

  MonitorTable table_;
  Transport* transport_;
  std::function<void(const std::string&)> log_;
  std::map<NodeId, std::string> peers_;
};

}  // namespace monitor
}  // namespace djava

#endif  // DJAVA_MONITOR_MONITOR_SERVICE_H_
