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
#include <thread>
#include <utility>

#include "class_table.h"
#include "directory.h"
#include "message_trace.h"
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
    // For a node to answer an invalidate or flush. A node that stays silent
    // longer is dropped (its copies count as invalidated, its modified chunks
    // as lost) so that it cannot stall the writers of the chunks it holds.
    // Generous: a node answers once the one access in progress on the chunk
    // ends, but its JVM may be paused (a long GC) meanwhile.
    int answer_timeout_ms = 30000;
    // How often the collector thread asks whether a collection is due
    // (Directory::WantsCollection); 0: never collect (chunks then stay
    // until their program ends).
    int collect_check_ms = 100;
    // Detect migratory chunks and answer their read misses with exclusive
    // copies (Directory; docs/SOS.md, "Migratory chunks"). Off: the plain
    // protocol (sos-server --no-migratory).
    bool migratory = true;
    // Grant the new objects a flushed chunk names, which its node sent
    // along, to the flush's requester (Directory::FlushReply; docs/SOS.md,
    // "New objects travel with the one that names them"). Off: they wait at
    // home for a request (sos-server --no-objects-along).
    bool objects_along = true;
    // This server's share of the directory: the chunks HomeShard(id,
    // shards) puts at `shard` (sos/ids.h). Shard 0 numbers the nodes; the
    // others take the number a node was given there.
    uint32_t shard = 0;
    uint32_t shards = 1;
  };

  SosService(Options options, Log log);
  ~SosService() override;  // stops the answer watchdog

  // Appends to `path` a line for every request and bypass message the
  // service takes and every message it sends (MessageTrace; sos-server
  // --trace-sos). Before the first connection. False, with *error, if the
  // file cannot be opened.
  bool TraceTo(const std::string& path, std::string* error) { return trace_.Open(path, error); }

  // Connection handlers for wire::ServiceHost ("sos", "sos-bypass").
  void ServeMain(std::unique_ptr<wire::Connection> conn, const std::string& peer);
  void ServeBypass(std::unique_ptr<wire::Connection> conn, const std::string& peer);
  // The server is stopping (wire::ServiceHost::OnStop): it answers no more
  // requests, and the connections its stop closes are not its nodes'
  // deaths. A node learns of the stop from its connection's end, as it
  // would of a killed server; none is told that another node's copies are
  // lost because this server closed that node's connection first.
  void Stop() { stopping_host_ = true; }

  // The program ended (the thread manager, through the monitor service):
  // its chunks go (Directory::FreeProgram).
  void FreeProgram(uint64_t program);

  // Data follows its lock (Directory::PushWithLock: the lock's chunk and
  // what `from` was granted exclusively since the mark `since` for the
  // lock's program, or else for `holder_program`'s): `sent` runs once the
  // grants have left, after the posts the completing thread holds.
  // `released`: what `from` wrote home and dropped before its release.
  bool MoveToNode(ChunkId id, uint64_t from, uint64_t to, uint64_t since,
                  uint64_t holder_program, std::function<void()> sent,
                  const std::vector<uint64_t>& released = {});
  uint64_t ExclusiveMark(uint64_t node) const;

  std::string Stats() const;
  DirectoryStats DirectoryStatistics() const { return directory_.Stats(); }

  // NodeSink.
  void Grant(NodeId node, uint64_t seq, sospb::Access access, ChunkId id, uint64_t version,
             const ChunkImage* image, bool clean) override;
  void Invalidate(NodeId node, ChunkId id, uint64_t txn) override;
  void Flush(NodeId node, ChunkId id, uint64_t txn, bool keep_shared) override;
  void Error(NodeId node, uint64_t seq, ChunkId id, sospb::ErrorCode code,
             const std::string& message) override;
  void Freed(NodeId node, uint64_t seq, ChunkId id) override;
  void Declined(NodeId node, uint64_t seq, ChunkId id) override;
  void OkToDie(NodeId node, uint64_t seq) override;
  void WrittenBack(NodeId node, ChunkId id, bool accepted) override;

 private:
  struct Session;
  class HoldPosts;

  std::shared_ptr<Session> Find(NodeId node) const;
  // Serialises msg (adding class definitions the node has not seen) and
  // posts it, in one step under the session's lock so numbering and order
  // agree.
  // An invalidate or flush is recorded as awaiting an answer in the same
  // step, before the node can possibly answer it.
  void Post(NodeId node, sospb::ServerMessage* msg, const ChunkImage* image);
  // The outboxes the calling thread's posts are held in, while it handles
  // frames that arrived together (HoldPosts); null otherwise.
  static thread_local std::vector<std::shared_ptr<Session>>* held_;
  // What runs once those held posts are sent (a moved chunk's lock grant).
  static thread_local std::vector<std::function<void()>>* after_held_;
  // Drops every node that has left an invalidate or flush unanswered for
  // answer_timeout_ms; runs on its own thread until the service ends.
  void WatchAnswers();
  // Runs the distributed garbage collector when the directory wants it;
  // on its own thread until the service ends.
  void CollectGarbage();
  // Serves a joined node's requests until its connection ends (returns "")
  // or it breaks the protocol (returns why, and the caller closes it).
  std::string RunRequests(Session* s, wire::Connection* conn);
  // The node answered the invalidate or flush (id, txn).
  void Answered(Session* s, ChunkId id, uint64_t txn);
  bool DecodeChunk(Session* s, const sospb::Chunk& c, ChunkImage* image, std::string* error);
  // Whether id's home is this shard; if not, the request seq is answered
  // with an error naming the chunk's home.
  bool HomedHere(NodeId node, uint64_t seq, ChunkId id);
  // Hello's node number: a new one (shard 0) or the one shard 0 gave; 0
  // with *why when the Hello is refused.
  NodeId NumberNode(const sospb::Hello& hello, const std::string& name, std::string* why);
  void Say(const std::string& line) const;

  const Options options_;
  const Log log_;
  ClassTable classes_;
  Directory directory_;
  MessageTrace trace_;

  mutable std::mutex sessions_mu_;
  std::map<NodeId, std::shared_ptr<Session>> sessions_;

  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> release_messages_{0};
  std::atomic<uint64_t> nodes_left_{0};
  std::atomic<uint64_t> nodes_died_{0};
  std::atomic<uint64_t> nodes_silent_{0};
  std::atomic<bool> stopping_host_{false};

  std::mutex watchdog_mu_;
  std::condition_variable watchdog_cv_;
  bool stopping_ = false;
  std::thread watchdog_;
  std::thread collector_;
};

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_SOS_SERVICE_H_
