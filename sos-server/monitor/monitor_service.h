// MonitorService: the monitor service's protocol handling, between decoded
// monitor.proto messages and the MonitorTable. Transport-agnostic: sos-server
// hosts it on its wire connections (one connection = one node); tests can
// drive it directly. Not thread-safe: the host serialises calls.
#ifndef DJAVA_MONITOR_MONITOR_SERVICE_H_
#define DJAVA_MONITOR_MONITOR_SERVICE_H_

#include <functional>
#include <map>
#include <unordered_map>
#include <string>

#include "barrier_table.h"
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
    // A sending of ev to node to run later, from any thread and with no
    // lock of the service's caller held (the data it waits for is moved on
    // another connection's thread), or at once from the service. It sends
    // once however often it runs, and nothing once the node is gone; the
    // transport may run it itself after a deadline.
    virtual std::function<void()> SendLater(NodeId node, const monitorpb::MonitorEvent& ev) = 0;
  };

  // Data follows its lock: when a monitor is handed from one node to
  // another, the object's chunk moves with it if the releasing node holds
  // it modified, and so do the chunks that node was granted exclusively
  // while its thread held the monitor (sos-server: Directory::PushWithLock).
  // Nodes are sos directory numbers, which each node gives in its Hello.
  class DataMover {
   public:
    static constexpr uint64_t kNoMark = UINT64_MAX;
    virtual ~DataMover() = default;
    // Where the node's exclusive grants stand now: taken when a thread of
    // it is granted a monitor, handed back to Move as `since`.
    virtual uint64_t Mark(uint64_t node) = 0;
    // True: the data is on its way and `sent` runs once its grants are (or
    // the moves ended otherwise). False: nothing moves; `sent` never runs.
    // `program`: the program of the thread the monitor goes to. `released`:
    // the chunks the releasing node wrote home and dropped before its
    // release (Exit.released in monitor.proto).
    virtual bool Move(ObjectId obj, uint64_t from_node, uint64_t to_node, uint64_t since,
                      ProgramId program, std::function<void()> sent,
                      const std::vector<uint64_t>& released) = 0;
  };

  MonitorService(MonitorTable::Options options, Transport* transport,
                 std::function<void(const std::string&)> log = nullptr);

  void OnConnect(NodeId node, const std::string& peer);
  void OnMessage(NodeId node, const monitorpb::MonitorRequest& req, TimeNs now);
  void OnDisconnect(NodeId node, TimeNs now);
  void OnTick(TimeNs now);
  // When OnTick must next run (a timed wait's or await's deadline), or
  // kNoDeadline.
  TimeNs NextDeadline() const;
  // The program ended (from the thread manager): free its monitors.
  void FreeProgram(ProgramId program, TimeNs now);
  const MonitorTable& table() const { return table_; }
  const BarrierTable& barriers() const { return barriers_; }
  // Grants handed from node to node wait for the object's chunk (null: no
  // data moves). Set before the first connection.
  void SetDataMover(DataMover* mover) { mover_ = mover; }
  // Grants sent after the object's chunk moved with them.
  uint64_t moved_grants() const { return moved_grants_; }

 private:
  void Deliver(const std::vector<Event>& events);
  // The programs the monitor table failed in `events` fail at the barriers too.
  void FailBarriersOf(const std::vector<Event>& events, std::vector<Event>* out);
  // Whether e's grant waits for data to move with it (DataMover);
  // `released`: the releasing node wrote some home for its release.
  bool MovesData(const Event& e, bool released) const;
  // An Exit's or Wait's `released`, for the grant its release makes.
  void NoteReleased(NodeId node, ObjectId obj,
                    const google::protobuf::RepeatedField<uint64_t>& ids);
  void Log(const std::string& line);

  MonitorTable table_;
  BarrierTable barriers_{&table_};
  Transport* transport_;
  std::function<void(const std::string&)> log_;
  std::map<NodeId, std::string> peers_;
  std::map<NodeId, uint64_t> sos_nodes_;  // from Hello; absent: not given
  // Per monitor handed between nodes: the node holding it and its mark
  // when it got it (DataMover::Mark). Bounded: cleared when it grows past
  // kTenuresKept (a lost mark only moves less).
  struct Tenure {
    NodeId node;
    uint64_t mark;
  };
  static constexpr size_t kTenuresKept = 1 << 16;
  std::unordered_map<ObjectId, Tenure> tenures_;
  // Per monitor, what the node releasing it last wrote home and dropped
  // (Exit.released, Wait.released), for the grant that release makes.
  struct Released {
    NodeId node;
    std::vector<uint64_t> ids;
  };
  std::unordered_map<ObjectId, Released> released_;
  static constexpr size_t kReleasedKept = 16;
  DataMover* mover_ = nullptr;
  uint64_t moved_grants_ = 0;
};

}  // namespace monitor
}  // namespace djava

#endif  // DJAVA_MONITOR_MONITOR_SERVICE_H_
