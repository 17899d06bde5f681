// Directory: the sos-server's coherence state machine (seed Table 3 plus
// acknowledged invalidates, lost chunks and the die handshake), without I/O.
//
// Per chunk it keeps the home copy, the sharers and the owner. Requests on a
// chunk are serialised: while one waits for invalidate acks or a flush, later
// requests on that chunk queue behind it; requests on other chunks go on.
// Locking is striped by chunk id, so threads serving different nodes proceed
// in parallel. Every message produced goes to a NodeSink while the chunk's
// stripe is locked, so two messages about one chunk reach a node in the
// order the directory decided them; a sink therefore only enqueues.
#ifndef DJAVA_SOS_DIRECTORY_H_
#define DJAVA_SOS_DIRECTORY_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "reference_listing.h"
#include "sos.pb.h"
#include "sos/ids.h"

namespace djava {
namespace sos {

// A chunk's bytes and what the JVM needs to rebuild its object. class_index
// numbers descriptors server-wide (ClassTable); 0 when not yet known.
struct ChunkImage {
  uint32_t class_index = 0;
  uint64_t program = 0;  // of the class descriptor; 0 when not known
  uint32_t array_length = 0;
  uint32_t identity_hash = 0;
  std::string data;
  // The chunk ids the bytes name, each once (the collector's edges, and
  // what a grant of these bytes ships).
  std::vector<ChunkId> refs;
  // Arrays kept in blocks among refs or this chunk: head id, block count.
  std::vector<std::pair<ChunkId, uint32_t>> runs;
};

class NodeSink {
 public:
  virtual ~NodeSink() = default;
  // All must return without blocking on the network.
  // image null: no data; clean: Grant.clean in proto/sos.proto.
  virtual void Grant(NodeId node, uint64_t seq, sospb::Access access, ChunkId id,
                     uint64_t version, const ChunkImage* image, bool clean) = 0;
  virtual void Invalidate(NodeId node, ChunkId id, uint64_t txn) = 0;
  virtual void Flush(NodeId node, ChunkId id, uint64_t txn, bool keep_shared) = 0;
  virtual void Error(NodeId node, uint64_t seq, ChunkId id, sospb::ErrorCode code,
                     const std::string& message) = 0;
  virtual void Freed(NodeId node, uint64_t seq, ChunkId id) = 0;
  // A write that asked only for a chunk's first write (Prefetch.first_writes)
  // found it written since its making: nothing granted.
  virtual void Declined(NodeId node, uint64_t seq, ChunkId id) = 0;
  virtual void OkToDie(NodeId node, uint64_t seq) = 0;
  virtual void WrittenBack(NodeId node, ChunkId id, bool accepted) = 0;
};

struct DirectoryStats {
  uint64_t chunks = 0;
  uint64_t lost = 0;
  uint64_t freed = 0;
  uint64_t grants = 0;
  uint64_t invalidates = 0;
  uint64_t flushes = 0;
  uint64_t errors = 0;
  uint64_t programs_ended = 0;
  uint64_t dropped_with_program = 0;  // chunks dropped because their program ended
  // The distributed garbage collector (Collect).
  uint64_t live = 0;                 // entries now in the directory
  uint64_t holds = 0;                // (node, chunk) holds at the last collection
  uint64_t releases = 0;             // chunks nodes released
  uint64_t excess_releases = 0;      // releases of more shipments than were sent
  uint64_t collections = 0;
  uint64_t collected = 0;            // chunks freed because nothing could reach them
  uint64_t written_back = 0;         // modified copies nodes wrote home unasked
  // Migratory sharing (Directory's comment; docs/SOS.md, "Migratory chunks").
  uint64_t migratory_marked = 0;     // chunks found migratory (an upgrade showed the pattern)
  uint64_t migratory_grants = 0;     // reads answered with an exclusive copy
  uint64_t migratory_undone = 0;     // a read-exclusive copy came back unwritten
  // Data following its lock (Directory::Push).
  uint64_t pushes = 0;               // chunks moved to the node a monitor was handed to
  uint64_t push_crossings = 0;       // the new owner's own requests the push had answered
  uint64_t pushes_unused = 0;        // moved copies that came back untouched
  // Data leaves with the release (WriteBack with drop).
  uint64_t released_with_lock = 0;   // copies written home and dropped at a release
                                     // (accepted, or answering a flush they crossed)
  uint64_t pushes_released = 0;      // of the pushes, those granted from home at once
  uint64_t pushes_along = 0;         // new objects granted with the flushed chunk naming them
  // Fetching ahead (Prefetch.first_writes).
  uint64_t declined = 0;             // first writes asked for chunks written since their making
  uint64_t clean_returns = 0;        // clean grants given up unwritten, without bytes
  uint64_t last_pause_us = 0;        // the last collection's hold on the directory
  uint64_t max_pause_us = 0;
};

// What one collection did.
struct CollectionResult {
  size_t marked = 0;     // ids found reachable
  size_t collected = 0;  // entries freed
  std::chrono::microseconds pause{0};
};

// Migratory sharing (Stenstrom, Brorsson & Sandberg 1993; Cox & Fowler
// 1993). A chunk that nodes take turns to read and then write (a counter
// updated under a lock, a queue index) costs two transactions a turn under
// the plain protocol: the read miss (the owner flushes, keeping a read
// copy) and the upgrade (that copy is invalidated). The directory notices
// the pattern and answers the read miss with an exclusive copy instead:
//   detect: an upgrade (Write, chunk at home) by P while the sharers are
//           exactly {P, Q} and Q is the last node granted exclusive access
//           (a chunk's creator counts as granted it at its making);
//   use:    a Read by R of a migratory chunk modified at O != R flushes O
//           without keeping a copy and grants R EXCLUSIVE (with the bytes);
//           one at home with no sharer but R is granted EXCLUSIVE at once;
//   undo:   when a copy so granted comes home (a flush for another node, a
//           reclaim, a write-back) with exactly the bytes it was granted
//           with, its holder only read: the chunk is not migratory any more
//           and the request that flushed it is served as without detection
//           (a read gets SHARED; the old holder, whose flush already said to
//           drop its copy, no longer shares it).
// Cost when wrong: a misdetected turn (a read granted exclusively by a
// node that then does not write) costs one extra transaction: the next
// node to want the chunk waits for a flush of that node instead of being
// served from home at once, and that node, told to drop its copy, misses
// again on its next read. The flush that shows the copy unwritten ends the
// mistake, so read-shared data pays this once, not per turn. Turned off
// (detect_migratory false, sos-server --no-migratory), the directory is the
// plain table.
class Directory {
 public:
  explicit Directory(NodeSink* sink, bool detect_migratory = true);
  Directory(const Directory&) = delete;
  Directory& operator=(const Directory&) = delete;

  // Node lifecycle. A node's number is never reused.
  NodeId AddNode(const std::string& name);  // 0 when numbers ran out
  // A node numbered by the first shard (this directory being another):
  // false when that number joined here before.
  bool AddNodeAt(NodeId node, const std::string& name);
  // The directory is shard `shard` of `shards` (SosService::Options): the
  // refs it ships and counts are those at home here; another shard counts
  // its own.
  void SetShard(size_t shard, size_t shards) {
    shard_ = shard;
    shards_ = shards;
  }
  std::string NodeName(NodeId node) const;
  // The node is gone (disconnected or died): its read copies are dropped,
  // chunks it held modified become lost, waits on it end.
  void RemoveNode(NodeId node, const std::string& why);

  // Requests from a node's main connection. seen_version: the newest
  // version the node was granted (Read in proto/sos.proto); a request from
  // the owner naming an older one crossed a grant on its way and is
  // dropped. kSeenAll (a request that does not say) treats such a request
  // as the node's error unless the owner's grant was a push.
  static constexpr uint64_t kSeenAll = UINT64_MAX;
  void Read(NodeId node, uint64_t seq, ChunkId id, uint64_t seen_version = kSeenAll);
  // first_write: only if no node was granted write access to the chunk
  // since its making, else Declined (Prefetch.first_writes).
  void Write(NodeId node, uint64_t seq, ChunkId id, uint64_t have_version,
             uint64_t seen_version = kSeenAll, bool first_write = false);
  void Free(NodeId node, uint64_t seq, ChunkId id);
  void Die(NodeId node, uint64_t seq, const std::vector<ChunkId>& owned);

  // Answers from a node's bypass connection. A reply to a transaction that
  // is no longer current (e.g. the chunk was meanwhile lost) is ignored.
  void InvalidateAck(NodeId node, ChunkId id, uint64_t txn);
  // The node released these chunks: shipments[i] of ids[i] (Release in
  // proto/sos.proto). Releases travel on the bypass, after the flush
  // replies that named the chunks, so the directory sees those first.
  void Release(NodeId node, const std::vector<ChunkId>& ids,
               const std::vector<uint64_t>& shipments);
  // image null: the node says it has no modified copy. unused: the copy was
  // a grant no access on the node had installed yet. along: chunks the node
  // wrote home and dropped just before (WriteBack with drop), new objects
  // the bytes name: once the flush's transaction is complete, each still at
  // home untouched is granted EXCLUSIVE to the transaction's requester
  // unasked (as PushWithLock's released ones), unless SetObjectsAlong(false).
  // One not home yet (the node writes it home once its JVM can produce it)
  // is pushed when its WriteBack with drop arrives, if no request started
  // on it meanwhile.
  void FlushReply(NodeId node, ChunkId id, uint64_t txn, std::unique_ptr<ChunkImage> image,
                  bool unused = false, const std::vector<ChunkId>& along = {});
  void SetObjectsAlong(bool on) { objects_along_ = on; }
  // The node wrote its modified copy home unasked and keeps a read copy
  // (WriteBack in proto/sos.proto). Accepted when the node still owns the
  // chunk; crossing a flush asked of it, it is that flush's reply. drop:
  // the node keeps no copy (a monitor it held is leaving it): until another
  // request starts on the chunk, a push from that node grants it at once
  // (docs/SOS.md, "Data leaves with the release"). clean: the node gives
  // up a clean grant it never wrote (image null, drop): accepted while the
  // node still holds that grant, the home copy staying as it is.
  void WriteBack(NodeId node, ChunkId id, std::unique_ptr<ChunkImage> image, bool drop = false,
                 bool clean = false);

  // Data follows its lock (docs/SOS.md, "Data following its lock"): the
  // monitor of chunk id is being handed from a thread of node `from` to one
  // of node `to`. If `from` holds the chunk modified and nothing is under
  // way on it, the directory flushes it from `from` (keeping no copy) and
  // grants it EXCLUSIVE to `to` unasked, then calls `sent` (with the
  // chunk's stripe locked: it must only enqueue), and returns true. `sent`
  // is called once however the move ends (the chunk lost or freed, a node
  // gone). False: nothing moves and `sent` is never called. A request of
  // `to` for the chunk that crosses the grant is dropped: the grant answers
  // it.
  bool Push(ChunkId id, NodeId from, NodeId to, std::function<void()> sent);
  // The data written under a lock moves with it too: as Push for the
  // lock's own chunk and for the chunks of the lock's program granted
  // exclusively to `from` since `since` (ExclusiveMark, taken when its
  // thread got the lock; kNoMark: none), the newest kMovedWithLock of
  // them. The lock's program is the one its chunk's image named, else
  // `holder_program` (the program of the thread the lock goes to; 0: not
  // known). `released`: chunks `from` wrote home and dropped before its
  // release (WriteBack with drop), which move first and at once while they
  // are still at home untouched. `sent` runs once every move started has
  // ended; false if none started (`sent` never runs).
  static constexpr uint64_t kNoMark = UINT64_MAX;
  static constexpr size_t kMovedWithLock = 8;
  bool PushWithLock(ChunkId lock, NodeId from, NodeId to, uint64_t since,
                    uint64_t holder_program, std::function<void()> sent,
                    const std::vector<ChunkId>& released = {});
  // How many chunks have been granted exclusively to node so far: a mark
  // for PushWithLock.
  uint64_t ExclusiveMark(NodeId node) const;

  // The program ended (the thread manager says so once its launcher has
  // ended it): every chunk of it goes, whatever its state, and so does any
  // that arrives later (a leaving node's flush). Requests waiting on them
  // fail FREED; a leaving node's reclaim of one simply finishes. Returns the
  // number of chunks dropped. A chunk's program is its class descriptor's.
  size_t FreeProgram(uint64_t program);

  DirectoryStats Stats() const;

  // The distributed garbage collector (docs/SOS.md, "Freeing chunks while
  // a program runs"). A chunk is reachable when a node holds it (the
  // reference listing), it is named (a program's statics), a request is
  // under way on it, it is modified at a node, or a reachable chunk's home
  // bytes name it (or it is a block of a reachable array). Collect marks
  // from those roots with the directory held, and frees every other entry:
  // a later request for one fails FREED naming its class. Runs on the
  // caller's thread; WantsCollection says when enough changed since the
  // last one to be worth its pause (proportional to the live entries).
  CollectionResult Collect();
  bool WantsCollection() const;
  // The class name of a descriptor number, for errors about freed chunks.
  void SetClassNamer(std::function<std::string(uint32_t)> namer) { class_namer_ = std::move(namer); }
  // For tests: whether node holds id.
  bool Holds(NodeId node, ChunkId id) { return holds_.Holds(node, id); }

 private:
  enum class State { kHome, kModified, kLost, kFreed };
  // kPush: a grant unasked (Push); it has no seq and no node waits on it.
  enum class Kind { kRead, kWrite, kFree, kReclaim, kPush };

  struct Request {
    Kind kind;
    NodeId node;
    uint64_t seq;
    uint64_t have_version;
    uint64_t seen_version = kSeenAll;
    // A push of a new object along with the chunk that names it: not logged
    // as written by its receiver, which only reads most of them (Node::
    // exclusive_log would move them on with the receiver's next lock).
    bool along = false;
    // A write served only while the chunk's version is 0 (Write's first_write).
    bool first_write = false;
  };

  struct Entry {
    State state = State::kHome;
    std::unique_ptr<ChunkImage> image;  // the home copy; null until first flushed
    uint64_t version = 0;
    std::set<NodeId> sharers;
    NodeId owner = 0;
    std::string lost_reason;
    // The transaction in flight (txn != 0): the request it serves and what
    // it waits for.
    uint64_t txn = 0;
    Request current{};
    std::set<NodeId> awaiting_acks;
    NodeId awaiting_flush = 0;
    // A list, not a deque: most chunks never queue, and an empty deque
    // already holds a 512-byte block.
    std::list<Request> queue;
    uint64_t program = 0;  // from the first image with a class; 0: not known
    uint32_t marked = 0;   // the last collection that found it reachable
    // Migratory sharing (the comment above class Directory).
    NodeId last_writer = 0;     // the last node granted exclusive access
    bool migratory = false;
    // The owner was granted its exclusive copy answering a read, with the
    // home bytes (which stay as they were until the copy comes home).
    bool read_exclusive = false;
    // The flush in flight lets its node keep a read copy.
    bool flush_keeps_shared = false;
    // The owner got its copy by a Push: a read or write it sent before the
    // grant reached it is answered already.
    bool pushed = false;
    // A moved copy came back untouched (its lock's holders do not use the
    // object): no more moves until a node asks for the chunk again.
    bool push_declined = false;
    // The node that wrote the home copy back and dropped its own (WriteBack
    // with drop), until another request starts: a push from it moves the
    // chunk at once (0: none).
    NodeId released_by = 0;
    // A node's flush reply named this chunk as coming along (FlushReply.along)
    // before it could write it home: its WriteBack with drop, before any
    // request starts on it, pushes it to this node (0: none).
    NodeId along_to = 0;
    // The owner's grant was clean (Grant.clean, a push from home): the home
    // copy is current until the owner writes, which only the owner knows;
    // so an answer without bytes from it means the home copy is current,
    // not that the chunk is lost. Holds while the version is clean_version
    // (any later exclusive grant moves the version on).
    NodeId clean_owner = 0;
    uint64_t clean_version = 0;
  };

  static constexpr size_t kExclusiveLog = 32;
  struct Node {
    std::string name;
    bool alive = true;
    // A number the first shard gave a node that has not joined here (yet):
    // a placeholder below the numbers of nodes that have.
    bool absent = false;
    bool left_cleanly = false;
    std::string why_gone;
    // Die in progress: reclaims still to finish, and the request to answer.
    int reclaims_pending = 0;
    bool dying = false;
    uint64_t die_seq = 0;
    // The last chunks granted to it exclusively (a ring), and how many in
    // all: what a lock it held may have to bring along (PushWithLock).
    std::array<ChunkId, kExclusiveLog> exclusive_log{};
    uint64_t exclusive_count = 0;
  };

  static constexpr size_t kStripes = 64;
  struct Stripe {
    std::mutex mu;
    std::unordered_map<ChunkId, Entry> entries;
  };

  Stripe& StripeOf(ChunkId id) { return stripes_[HomeShard(id, kStripes)]; }

  // All below run with the chunk's stripe locked.
  void Submit(Stripe& s, ChunkId id, const Request& r);
  Entry* FindOrCreate(Stripe& s, ChunkId id, const Request& r);
  void RunQueue(ChunkId id, Entry* e);
  // Starts r; true when it finished at once, false when it waits.
  bool Start(ChunkId id, Entry* e, const Request& r);
  void Complete(ChunkId id, Entry* e);
  void Fail(ChunkId id, const Request& r, sospb::ErrorCode code, const std::string& message);
  void FailWithState(ChunkId id, Entry* e, const Request& r);
  void GrantShared(ChunkId id, Entry* e, const Request& r);
  void GrantExclusive(ChunkId id, Entry* e, const Request& r, bool clean = false);
  // Whether node holds e by a clean grant (Entry::clean_owner).
  static bool HeldClean(const Entry& e, NodeId node);
  // The clean holder gave the chunk up unwritten: the home copy is current.
  void ReturnedClean(Entry* e);
  // Whether a read by node is answered with an exclusive copy: e is
  // migratory and at home with no other sharer.
  bool ReadGetsExclusive(const Entry& e, NodeId node) const;
  // An upgrade by node of e at home: marks e migratory when it shows the
  // pattern.
  void DetectMigratory(Entry* e, NodeId node);
  // The owner's modified copy comes home with image (a flush reply or a
  // write-back), before it replaces the home copy: a read-exclusive copy
  // that comes back unwritten ends e's migratory mark.
  void NoteCopyReturned(Entry* e, const ChunkImage& image);
  void FinishReclaim(NodeId node);
  // FlushReply's along chunk `id` that `from` has not written home yet:
  // remembered for its WriteBack (Entry::along_to), its entry made if the
  // directory never saw it (its creator `from` holds it).
  void ExpectAlong(ChunkId id, NodeId from, NodeId to);
  // The entry of a chunk the directory never saw, which its creator holds
  // modified from its making (its hold counted, as its client counts it),
  // made now that the creator writes it home or names it; with s.mu held.
  std::unordered_map<ChunkId, Entry>::iterator AdoptFromCreator(Stripe& s, ChunkId id,
                                                                NodeId creator);
  // WriteBack with the chunk's stripe locked; *along_to: where a drop's
  // chunk goes along to (Entry::along_to), else 0.
  void WriteBackLocked(NodeId node, ChunkId id, std::unique_ptr<ChunkImage> image, bool drop,
                       bool clean, NodeId* along_to);
  // Push, unless any_program of no chunk known to be of another program
  // than `program` (if known). along: a new object sent along with the
  // chunk that names it (Request::along).
  // `written_home`: `from` named it as written home for its release (its
  // write-back is at home or on its way); only such a chunk moves back to
  // `from` itself (from == to).
  bool PushOf(ChunkId id, NodeId from, NodeId to, std::function<void()> sent, bool along,
              bool any_program, uint64_t program, bool written_home = false);
  // The push of id ended, whatever its outcome: its `sent` runs.
  void EndPush(ChunkId id);
  // A node asked for the chunk (a read or a write): its moves resume.
  void NoteAsked(Stripe& s, ChunkId id);
  // FlushReply with the chunk's stripe locked; it: the chunk's entry.
  void FlushReplyLocked(Stripe& s, std::unordered_map<ChunkId, Entry>::iterator it, NodeId node,
                        std::unique_ptr<ChunkImage> image, bool unused = false);
  // Erases the entry at it, answering its current and queued requests as a
  // chunk of an ended program. Returns the iterator after it.
  std::unordered_map<ChunkId, Entry>::iterator DropWithProgram(Stripe& s,
      std::unordered_map<ChunkId, Entry>::iterator it);
  bool ProgramEnded(uint64_t program) const;
  // Something that can make chunks unreachable happened (a release, new
  // home bytes, a node gone).
  void NoteGarbageMayExist() { events_.fetch_add(1, std::memory_order_relaxed); }
  // Counts home bytes replaced by `now` as a change for the collector when
  // the bytes they replace named a chunk `now` does not: only then can a
  // chunk have become unreachable through them. The first home bytes (the
  // node that wrote them held what they name) and bytes that name the same
  // chunks or more (most flushes: objects without references, or whose
  // references did not change) cannot make garbage, and counting them ran
  // the collector, which pauses the directory, after every few thousand
  // flushes.
  void NoteHomeBytesReplaced(const ChunkImage* before, const ChunkImage& now);
  // Learns the block runs an image names. With the chunk's stripe locked.
  void LearnRuns(const ChunkImage& image);
  // A request for a chunk the collector freed, if id is one of the last it
  // freed: answered FREED naming its class. With the chunk's stripe locked.
  bool FailIfCollected(ChunkId id, const Request& r);
  void MakeLost(Entry* e, NodeId node, const std::string& why);
  bool Alive(NodeId node) const;
  // Alive and not leaving: a node whose Die has arrived gets no more grants.
  // It waits only for OkToDie, and a chunk granted to it exclusively then
  // would leave with it (its reclaims took what it owned when the Die came).
  bool Grantable(NodeId node) const;
  std::string Describe(NodeId node) const;
  std::string LostMessage(ChunkId id, const Entry& e) const;
  uint64_t NextTxn();

  NodeSink* const sink_;
  const bool detect_migratory_;

  mutable std::mutex nodes_mu_;
  std::vector<Node> nodes_;  // index = node number; [0] unused

  std::mutex txn_mu_;
  uint64_t next_txn_ = 1;

  Stripe stripes_[kStripes];

  // Pushes under way: their `sent`, by chunk. Lock order: a stripe, then
  // pushes_mu_.
  bool objects_along_ = true;
  std::mutex pushes_mu_;
  std::unordered_map<ChunkId, std::function<void()>> pushes_;

  mutable std::mutex ended_mu_;
  std::set<uint64_t> ended_programs_;

  mutable std::mutex stats_mu_;
  DirectoryStats stats_;

  // The distributed garbage collector's state. Lock order: a stripe, then
  // the listing's lists, runs_mu_, collected_mu_.
  ReferenceListing holds_;
  size_t shard_ = 0, shards_ = 1;
  // One more shipment to node of each ref of image at home here.
  void ShipRefs(NodeId node, const ChunkImage& image);
  std::mutex runs_mu_;
  std::unordered_map<ChunkId, uint32_t> runs_;  // array head -> blocks after it
  std::atomic<uint64_t> events_{0};             // since the last collection
  std::atomic<uint64_t> live_{0};               // entries
  std::atomic<int64_t> last_collection_ns_{0};  // steady clock
  uint32_t collection_ = 0;                     // numbers collections (Entry::marked)
  // The ids the collector freed last (bounded), with their class, so that
  // a request for one (a bug somewhere) is told plainly what happened.
  static constexpr size_t kCollectedRemembered = 1 << 16;
  std::mutex collected_mu_;
  std::unordered_map<ChunkId, uint32_t> collected_class_;
  std::deque<ChunkId> collected_order_;
  std::function<std::string(uint32_t)> class_namer_;
};

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_DIRECTORY_H_
