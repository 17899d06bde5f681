// SosService: the shared-object service on the wire. Each node (JVM
// process) has a session made of its main connection ("sos": its requests
// in, every server message out through an Outbox) and its bypass connection
// ("sos-bypass": its invalidate acks and flush replies in). The service
// decodes requests into Directory calls and is the Directory's NodeSink,
// turning its decisions into frames. Class descriptors are numbered per
// connection direction so that a name crosses each connection once.
#ifndef DJAVA_SOS_SOS_SERVICE_H_
#define DJAVA_SOS_SOS_SERVICE_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "class_table.h"
#include "directory.h"
#include "outbox.h"
#include "wire/connection.h"

namespace djava {
namespace sos {

class SosService : public NodeSink {
 public:
  using Log = std::function<void(const std::string&)>;

  struct Options {
    uint32_t max_chunk_size = 15u << 20;        // below the 16 MiB frame limit
    size_t max_queued_per_node = 256u << 20;    // bytes waiting for a slow node
    int bypass_timeout_ms = 10000;              // for the bypass to join after Welcome
  };

  SosService(Options options, Log log);
  ~SosService() override;

  // Connection handlers for wire::ServiceHost ("sos", "sos-bypass").
  void ServeMain(std::unique_ptr<wire::Connection> conn, const std::string& peer);
  void ServeBypass(std::unique_ptr<wire::Connection> conn, const std::string& peer);

  std::string Stats() const;

  // NodeSink.
  void Grant(NodeId node, uint64_t seq, sospb::Access access, ChunkId id, uint64_t version,
             const ChunkImage* image) override;
  void Invalidate(NodeId node, ChunkId id, uint64_t txn) override;
  void Flush(NodeId node, ChunkId id, uint64_t txn, bool keep_shared) override;
  void Error(NodeId node, uint64_t seq, ChunkId id, sospb::ErrorCode code,
             const std::string& message) override;
  void Freed(NodeId node, uint64_t seq, ChunkId id) override;
  void OkToDie(NodeId node, uint64_t seq) override;

 private:
  struct Session;

  std::shared_ptr<Session> Find(NodeId node) const;
  // Serialises msg (adding class definitions the node has not seen) and
  // posts it, in one step under the session's lock so numbering and order
  // agree.
  void Post(NodeId node, sospb::ServerMessage* msg, const ChunkImage* image);
  void RunRequests(Session* s, wire::Connection* conn);
  bool DecodeChunk(Session* s, const sospb::Chunk& c, ChunkImage* image, std::string* error);
  void Say(const std::string& line) const;

  const Options options_;
  const Log log_;
  ClassTable classes_;
  Directory directory_;

  mutable std::mutex sessions_mu_;
  std::map<NodeId, std::shared_ptr<Session>> sessions_;

  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> nodes_left_{0};
  std::atomic<uint64_t> nodes_died_{0};
};

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_SOS_SERVICE_H_
