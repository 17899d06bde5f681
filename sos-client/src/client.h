// Client: one node's shared-object cache (include/djava/sos_client.h is its
// C ABI). Chunks live in a table keyed by id; each chunk's hot state is one
// atomic word, so a cached access is a compare-and-swap to pin it and an
// atomic decrement to release it. Everything else (misses, installs,
// revocations, errors) runs under the chunk's own mutex, so a thread waiting
// for one chunk never blocks threads using others.
//
// Threads: the caller's threads, one receiver thread reading each shard's
// main connection, and (started when first needed) a retry thread for flushes
// whose bytes the JVM could not produce at once. Grants are stashed by the receiver and installed by the thread
// that needs them (a JVM installs bytes into its objects on its own thread).
// An invalidate or flush is carried out as soon as no access to the chunk is
// in progress: by the receiver when the chunk is idle, else by the thread
// whose release ends the last access. A thread that waited for a grant gets
// one access before a revocation that arrived meanwhile takes effect, so
// contended chunks cannot livelock.
#ifndef DJAVA_SOS_CLIENT_CLIENT_H_
#define DJAVA_SOS_CLIENT_CLIENT_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "class_registry.h"
#include "djava/sos_client.h"
#include "sos.pb.h"
#include "sos/ids.h"
#include "wire/connection.h"
#include "wire/traffic.h"

namespace djava {
namespace sos {
class Client;
}  // namespace sos
}  // namespace djava

// The chunk handle of the C ABI.
struct djava_sos_chunk {
  // Hot word: bits 0-1 state (I/S/M), bit 2 blocked (take the slow path),
  // bits 32-63 accesses in progress (pins).
  std::atomic<uint64_t> word{0};
  djava::sos::Client* client = nullptr;
  uint64_t id = 0;
  std::atomic<uintptr_t> user{0};

  // Everything below is guarded by mu.
  std::mutex mu;
  std::condition_variable cv;
  size_t size = 0;
  std::unique_ptr<char[]> bytes;  // when the client keeps the bytes
  uint64_t version = 0;           // of the copy held
  uint64_t seen_version = 0;      // the newest any grant here carried (proto Read)
  uint32_t class_local = 0;
  djava_sos_meta meta{};          // class_name points into the ClassRegistry
  bool has_meta = false;
  djava_sos_stats stats{};        // this chunk's share of the client's counters

  // For the distributed garbage collector (docs/SOS.md). How many times the
  // server shipped this id here (grants of it, or it among a granted
  // chunk's refs; its making, for a chunk made here) since this node last
  // released it; and how many stashed grants name it and are not installed
  // yet (the JVM learns of the id when one is). Atomic: the receiver counts
  // a ref without the ref's mutex.
  std::atomic<uint32_t> shipments{0};
  std::atomic<uint32_t> pending_refs{0};
  // The JVM keeps a pointer to the handle without an object naming it (its
  // statistics of a collected replica): not released until it lets go.
  std::atomic<uint32_t> retained{0};

  // A grant the receiver stashed for installation.
  struct Stash {
    djava::sospb::Access access = djava::sospb::ACCESS_UNSPECIFIED;
    uint64_t version = 0;
    bool has_data = false;
    bool clean = false;  // Grant.clean
    std::string data;
    uint32_t class_local = 0;
    uint32_t array_length = 0;
    uint32_t identity_hash = 0;
    // The handles of the ids the bytes name, each counted in its
    // pending_refs until the stash is installed or dropped (StashDone); and
    // the ids, for a flush that sends these bytes back.
    std::vector<djava_sos_chunk*> ref_handles;
    std::vector<uint64_t> refs;
  };
  std::unique_ptr<Stash> stash;
  // The class of a stash that went back without being installed: the
  // handle belongs to that class's program all the same (ForgetProgram).
  uint32_t unused_grant_class = 0;
  bool installing = false;

  enum class Asked { kNone, kRead, kWrite, kFree };
  Asked outstanding = Asked::kNone;
  std::atomic<uint64_t> generation{0};  // grows with every answer to this chunk
  djava_sos_status answer_status = DJAVA_SOS_OK;
  std::string answer_message;
  int waiters = 0;

  struct Revoke {
    bool active = false;
    bool flush = false;  // else invalidate
    bool keep_shared = false;
    uint64_t txn = 0;
    // The JVM could not produce the bytes yet: the chunk works as before
    // until the retry thread arms the revocation again (Client::RetryLoop).
    bool deferred = false;
  } revoke;
  bool freed = false;
  // A write-back (Client::WriteBack) is on its way: the copy here is not
  // to be read or written until the answer (every access waits), and a
  // flush crossing it is answered with these bytes.
  bool write_back_pending = false;
  // The write-back keeps a read copy: the bytes stay in the object, but are
  // read again only once the server accepts them (OnWrittenBack), which
  // lists this node as a sharer. Until then a flush crossing the write-back
  // may have let another node write (docs/SOS.md, "Write-back").
  bool read_copy_on_answer = false;
  // Held by a clean exclusive grant (Grant.clean) and not written since:
  // the word says S, so reads hit, and the JVM, which pins only a copy in
  // M, may collect the object; the first write turns it M here with no
  // message. A flush is answered without bytes, and an unreferenced copy
  // goes home as a clean write-back (docs/SOS.md, "Clean grants").
  bool clean = false;
};

namespace djava {
namespace sos {

constexpr uint64_t kStateMask = 3;
constexpr uint64_t kStateI = 0;
constexpr uint64_t kStateS = 1;
constexpr uint64_t kStateM = 2;
constexpr uint64_t kBlocked = 4;
constexpr int kPinShift = 32;
constexpr uint64_t kPin = uint64_t{1} << kPinShift;

class Client {
 public:
  static djava_sos_status Connect(const djava_sos_config& config, Client** out,
                                  djava_sos_error* error);
  ~Client();

  djava_sos_status Close(djava_sos_error* error);  // die / okToDie, then disconnect
  void Abandon();                                  // disconnect only

  NodeId node() const { return node_; }
  // Whether the client lost a server or left (every access fails); why.
  bool Lost(std::string* why) const;
  djava_sos_chunk* Alloc(size_t size, const djava_sos_meta* meta, djava_sos_error* error);
  djava_sos_chunk* AllocRun(size_t count, const size_t* sizes, const djava_sos_meta* meta,
                            djava_sos_error* error);
  djava_sos_chunk* ChunkFor(uint64_t id);
  // first_writes (exclusive only): Prefetch.first_writes in proto/sos.proto.
  // at_least > 1: nothing is asked unless that many of ids (or ids[0]) are
  // still to be asked for.
  djava_sos_status Prefetch(const uint64_t* ids, size_t n, bool exclusive, bool first_writes,
                            size_t at_least, djava_sos_error* error);
  djava_sos_status Free(djava_sos_chunk* c, djava_sos_error* error);
  void Discard(djava_sos_chunk* c);
  djava_sos_status DropCopy(djava_sos_chunk* c, uintptr_t orphan_user);
  // The JVM has no object for the chunk any more (djava_sos_unreferenced):
  // once nothing else here holds it, the retry thread releases it.
  void Unreferenced(djava_sos_chunk* c);
  void Unretain(djava_sos_chunk* c);
  // Writes a chunk modified here home unasked and keeps a read copy once
  // the server accepts it (djava_sos_write_back), or none (drop). IN_USE
  // when it is not idle in M here.
  // A hand-over's (drop) takes only a chunk of `program`, and never waits
  // for the chunk's mutex.
  // refs: the ids the bytes written home name; later: set when the JVM
  // could not produce the bytes yet.
  djava_sos_status WriteBack(djava_sos_chunk* c, bool drop = false, uint64_t program = 0,
                             std::vector<uint64_t>* refs = nullptr, bool* later = nullptr);
  // A clean grant (djava_sos_chunk::clean) that nothing here references
  // any more goes home without bytes (WriteBack with clean), with c->mu held.
  void GiveBackClean(djava_sos_chunk* c);
  // For a release (HandOver): gives back a clean grant that is idle here,
  // never waiting for its mutex. False if it stays.
  bool HandOverClean(djava_sos_chunk* c, uint64_t program);
  // Sends home a grant no access here installed (its bytes if it holds the
  // only current copy) so that its handle can go. False if it must stay.
  // Under c->mu.
  bool GiveBackStash(djava_sos_chunk* c);
  // A grant's stashed bytes, ids named and layout into ch (a flush's
  // reply or a write-back of a grant no access installed).
  static void CopyOutStash(const djava_sos_chunk::Stash& s, sospb::Chunk* ch);
  // Whether a class is the JDK's (java/..., or an array of such or of a
  // primitive type): HandOver's jdk_only.
  bool IsJdkClass(uint32_t class_local) const;
  // How many chunks this node has taken exclusively so far (granted
  // exclusive, or made here): a mark for HandOver (djava_sos_exclusive_mark).
  uint64_t ExclusiveMark();
  // Writes home and drops the newest `max` of the chunks taken exclusively
  // since `since` that are still idle in M here, or gives back those still
  // clean (jdk_only: of the JDK's classes only); their ids go to out.
  // Returns how many (djava_sos_hand_over).
  size_t HandOver(uint64_t since, uint64_t program, bool jdk_only, uint64_t* out, size_t max);
  void TakeChunkStats(djava_sos_chunk* c, djava_sos_stats* stats);
  // The bytes about to be produced name these ids (the produce callback
  // says so, djava_sos_produced_refs); runs as in sospb::Chunk.
  void ProducedRefs(djava_sos_chunk* c, const uint64_t* ids, size_t n, const uint64_t* run_heads,
                    const uint32_t* run_blocks, size_t n_runs);
  // What put flushes off may be over: the retry thread tries them now.
  void RetryDeferredNow();
  // The JVM let go of a program's objects (the program ended on this node):
  // the handles of that program's chunks (and of any program that ended
  // before) and those `released` go, but those in `kept` and any in use.
  // A grant no access installed goes home first (GiveBackStash, by the
  // release pass, which this waits a bounded while for). Returns how many
  // went. See djava_sos_forget_program.
  size_t ForgetProgram(uint64_t program, djava_sos_chunk* const* kept, size_t n_kept,
                       djava_sos_chunk* const* released, size_t n_released);
  // While held, no forgotten handle is freed (djava_sos_hold_handles).
  void HoldHandles() { handles_mu_.lock_shared(); }
  void UnholdHandles() { handles_mu_.unlock_shared(); }
  size_t HandleCount();
  void GetStats(djava_sos_stats* stats) const;
  // This cache's messages by kind, each way, for -XX:+PrintDistributedStatistics:
  // "requests read 3, write 1; on the bypass ...; received grant 4, ...".
  std::string TrafficByKind() const;

  // The slow paths of djava_sos_load/lock/release.
  djava_sos_status Access(djava_sos_chunk* c, bool write, djava_sos_error* error);
  void SlowRelease(djava_sos_chunk* c);

  std::atomic<uint64_t> hits{0};

 private:
  struct Home;  // below
  Client() = default;

  void ReceiverLoop(Home* home);
  void OnGrant(Home* home, const sospb::ServerMessage& m);
  void OnRevoke(uint64_t id, uint64_t txn, bool flush, bool keep_shared);
  // The answer to a revocation of a chunk this node has nothing of.
  void AnswerWithNothing(uint64_t id, uint64_t txn, bool flush);
  // A forgotten handle's revocation, if one is pending, answered so. With
  // c->mu held.
  void AnswerPendingRevokeWithNothing(djava_sos_chunk* c);
  void OnError(const sospb::ServerMessage& m);
  void OnFreed(const sospb::ServerMessage& m);
  void OnDeclined(const sospb::ServerMessage& m);
  void OnWrittenBack(const sospb::ServerMessage& m);
  // The copy for a chunk message: its current bytes and what they name,
  // from the JVM (produce) or the client. False: produce said LATER. With
  // c->mu held.
  bool CopyOut(djava_sos_chunk* c, sospb::Chunk* ch);
  // A stash is installed or dropped: the ids it named are no longer
  // pending on it. With c->mu held.
  void StashDone(djava_sos_chunk::Stash* s);
  void ResetStash(djava_sos_chunk* c);
  // Releases the candidates nothing here holds any more, and sends what
  // waits to be released; on the retry thread. False when it must try
  // again later (a lock was busy).
  bool ReleaseUnreferenced();
  // Whether this node may let go of the chunk: nothing here uses or will
  // learn of it. With c->mu held.
  bool Releasable(const djava_sos_chunk* c) const;
  // A flush's bytes are being produced and sent: a release decided after
  // it began is sent after it (FlushBegins/FlushSent, AwaitFlushesBefore).
  uint64_t FlushBegins();
  void FlushSent(uint64_t epoch);
  void AwaitFlushesBegunBefore();
  void Disconnected(const std::string& why);

  // With c->mu held. along: the caller holds handles_mu_ shared (the
  // receiver, the retry thread), so a flush may look up and send along the
  // new objects its bytes name (SendAlong).
  void ArmRevoke(djava_sos_chunk* c);
  void MaybeRevoke(djava_sos_chunk* c, bool along = false);
  void PerformRevoke(djava_sos_chunk* c, bool along = false);
  // New objects travel with the one that names them (docs/SOS.md): before
  // a flush of `c` (whose bytes name `refs`) is answered, the chunks among
  // them, and among theirs, that this node made and nobody else has had
  // (version 0, idle in M here, linked, of c's program and c's home) are
  // written home and dropped on the same connection, at most kAlong; their
  // ids go in `along` for the reply, and the server grants them to the
  // flush's requester. With c->mu and handles_mu_ (shared) held; never
  // waits for another chunk's mutex. One the JVM cannot produce yet (just
  // published, its fence running) is named all the same and written home
  // by the retry thread once it can (along_later_): the directory pushes
  // it when it arrives.
  static constexpr size_t kAlong = 8;
  void SendAlong(djava_sos_chunk* c, const google::protobuf::RepeatedField<uint64_t>& refs,
                 google::protobuf::RepeatedField<uint64_t>* along);
  void DeferRevoke(djava_sos_chunk* c);
  void FinishReleaseLater(djava_sos_chunk* c);
  void RetryLoop();
  void StopRetrying();
  // Callers hold handles_mu_ shared while they use what it returns.
  std::vector<djava_sos_chunk*> AllChunks();
  // Frees forgotten handles no thread can hold any more; never waits.
  void FreeForgotten();
  // Nothing under way on the chunk. With c->mu held.
  bool Idle(const djava_sos_chunk* c) const;
  // The program of a chunk's class, 0 if not known. With c->mu held.
  uint64_t ProgramOf(const djava_sos_chunk* c) const;
  // The chunk's current bytes from the JVM's produce callback; their size.
  size_t Produce(djava_sos_chunk* c, std::string* data);
  bool Install(djava_sos_chunk* c, std::unique_lock<std::mutex>& l, djava_sos_error* error);
  bool SendRequest(Home& home, sospb::NodeRequest* req);
  // A message on the bypass; the caller holds home.bypass_send_mu.
  bool SendBypass(Home& home, const sospb::BypassMessage& m);
  void SetState(djava_sos_chunk* c, uint64_t state, bool blocked);

  djava_sos_chunk* Find(uint64_t id);
  // A new chunk in state M with the id of this node's sequence.
  djava_sos_chunk* AllocAt(uint64_t sequence, size_t size, const djava_sos_meta* meta);
  djava_sos_chunk* Insert(uint64_t id, std::unique_ptr<djava_sos_chunk> c);
  void Callback(void (*fn)(void*));

  NodeId node_ = 0;
  uint32_t max_chunk_size_ = 0;
  djava_sos_callbacks callbacks_{};
  bool have_callbacks_ = false;
  std::string name_;
  // The node's connections to one sos-server shard, and the thread that
  // reads its main connection. A chunk's requests and answers go to its
  // home shard (HomeShard in sos/ids.h), in the order the cluster lists
  // the shards.
  struct Home {
    size_t index = 0;
    std::string address;
    std::unique_ptr<wire::Connection> main;
    std::unique_ptr<wire::Connection> bypass;
    std::mutex bypass_send_mu;  // orders describing a class with sending (PerformRevoke)
    std::thread receiver;
    bool ok_to_die = false;  // under mu_
    // How this shard's part of a message names it ("sos-server A", plus
    // "(shard i of n)" when there are several).
    std::string name;
  };
  std::vector<std::unique_ptr<Home>> homes_;
  Home& HomeOf(uint64_t id) { return *homes_[HomeShard(id, homes_.size())]; }
  // Connects and authenticates both connections to one shard; the first
  // numbers this node.
  static djava_sos_status Join(Client* c, size_t index, const std::string& secret,
                               djava_sos_error* error);
  // Deferred revocations (DeferRevoke), taken by the retry thread. Lock
  // order: a chunk's mu, then retry_mu_.
  std::mutex retry_mu_;
  std::condition_variable retry_cv_;
  // Notified after each release pass (ForgetProgram waits for the pass
  // that takes what its program's end left to release).
  std::condition_variable release_pass_cv_;
  std::vector<djava_sos_chunk*> deferred_;
  // New objects a flush's reply named as coming along (SendAlong) that the
  // JVM could not produce yet (their publication fence): the retry thread
  // writes each home (drop) once it can, up to kAlongTries attempts.
  struct AlongLater {
    uint64_t id;
    uint64_t program;
    int tries;
  };
  static constexpr int kAlongTries = 16;
  std::vector<AlongLater> along_later_;
  // Releases whose chunk another thread held (SlowRelease), to finish.
  std::vector<djava_sos_chunk*> releases_to_finish_;
  // Chunks the JVM let go of, to release once nothing here holds them
  // (Unreferenced), and releases decided and not yet sent. Under retry_mu_.
  std::vector<djava_sos_chunk*> release_candidates_;
  std::vector<std::pair<uint64_t, uint32_t>> to_release_;
  // Programs that ended (ForgetProgram). A grant of one may still arrive
  // after its program's handles went (a push or a read copy on its way, a
  // flush that left a stash as a read copy): nothing here will install it,
  // so its handle goes at the next release pass or program end instead of
  // staying stashed for good. Under retry_mu_.
  std::unordered_set<uint64_t> ended_programs_;
  bool ProgramHasEnded(uint64_t program);
  // Flushes under way per epoch parity (FlushBegins).
  std::mutex flush_epoch_mu_;
  std::condition_variable flush_epoch_cv_;
  uint64_t flush_epoch_ = 1;  // 0 means "no flush" to PerformRevoke
  uint64_t flushes_in_epoch_[2] = {0, 0};
  // Refs the produce callback reported for the flush under way on this
  // thread's chunk (ProducedRefs, read by PerformRevoke).
  struct Produced {
    const djava_sos_chunk* chunk = nullptr;
    std::vector<uint64_t> refs, run_heads;
    std::vector<uint32_t> run_blocks;
  };
  static thread_local Produced produced_;
  bool retry_stopping_ = false;
  bool retry_now_ = false;  // RetryDeferredNow: skip the back-off once
  std::thread retrier_;
  ClassRegistry classes_;
  std::atomic<uint64_t> next_seq_{1};
  std::atomic<uint64_t> next_sequence_{1};  // of this node's chunk ids

  static constexpr size_t kShards = 64;
  struct Shard {
    std::mutex mu;
    std::unordered_map<uint64_t, std::unique_ptr<djava_sos_chunk>> chunks;
  };
  Shard shards_[kShards];

  // Handles are freed only when forgotten (ForgetProgram), and only once
  // nobody can hold one: the JVM promised it holds none; the client's own
  // threads hold handles_mu_ shared while they use handles they looked up
  // (the receiver for one message, the retry thread for one round, AllChunks'
  // callers, a JVM between hold and unhold); freeing takes it exclusively,
  // never waiting (FreeForgotten, from the receiver and ForgetProgram).
  // Lock order: handles_mu_, then a chunk's mu, a shard's mu, retry_mu_ or
  // forgotten_mu_.
  std::shared_mutex handles_mu_;
  struct Forgotten {
    std::unique_ptr<djava_sos_chunk> handle;
    std::chrono::steady_clock::time_point when;
  };
  // A stash of a forgotten handle: the ids it named are let go of, their
  // shipments by it released, and a handle made only for them forgotten.
  void ForgetStashRefs(djava_sos_chunk::Stash* s, std::vector<Forgotten>* out,
                       std::chrono::steady_clock::time_point now,
                       std::vector<std::pair<uint64_t, uint32_t>>* releases);
  // Releases a handle nothing here names (its mutex held): out of the
  // table into `out`, its shipments into `releases`; nothing if it was
  // forgotten already.
  void TakeOutToRelease(djava_sos_chunk* c, std::vector<Forgotten>* out,
                        std::chrono::steady_clock::time_point now,
                        std::vector<std::pair<uint64_t, uint32_t>>* releases);
  // Out of the table at `now`: freed after the grace (FreeForgotten).
  void AddForgotten(std::vector<Forgotten>* out, std::chrono::steady_clock::time_point now);
  std::mutex forgotten_mu_;
  std::vector<Forgotten> forgotten_;
  std::atomic<size_t> forgotten_waiting_{0};
  // When the oldest forgotten handle's grace ends (steady clock, ns): until
  // then FreeForgotten, called for every message, returns at once.
  std::atomic<int64_t> forgotten_due_ns_{INT64_MAX};
  std::atomic<uint64_t> handles_freed_{0};

  // Connection-wide state.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> broken_{false};
  std::string broken_why_;

  std::atomic<uint64_t> misses_{0}, upgrades_{0}, invalidations_{0}, flushes_{0};
  std::atomic<uint64_t> deferred_revokes_{0};
  std::atomic<uint64_t> releases_handed_off_{0};
  std::atomic<uint64_t> bytes_in_{0}, bytes_out_{0};
  std::atomic<uint64_t> released_{0}, release_messages_{0}, written_back_{0};
  std::atomic<uint64_t> given_back_clean_{0};  // clean grants written back without bytes
  std::atomic<uint64_t> handed_over_{0};
  // TrafficByKind's counts: main-connection requests, bypass messages, and
  // what the servers sent.
  wire::KindCounts requests_by_kind_, bypass_by_kind_, received_by_kind_;
  // The last chunks taken exclusively here (a ring), and how many in all:
  // what a monitor's release may hand over (HandOver), as the directory's
  // log is what it moves with a lock.
  // A write's have_version when this node holds no read copy: never a
  // chunk's version. (0 is one: a chunk never granted exclusively is at
  // version 0, and a node the server still lists as a sharer of it, with
  // its copy dropped or not yet readable, would get write access without
  // bytes.)
  static constexpr uint64_t kNoVersion = UINT64_MAX;
  static constexpr size_t kExclusiveLog = 32;
  void NoteExclusive(uint64_t id);
  // Without a lock: every publication and exclusive grant notes one, with
  // or without data leaving with releases. A hand-over that reads a slot
  // being rewritten, or a count not yet updated, writes back some other
  // chunk of this node's idle in M, or leaves one alone: a miss or a flush
  // later, never a wrong byte (only idle M copies are written back).
  std::array<std::atomic<uint64_t>, kExclusiveLog> exclusive_log_{};
  std::atomic<uint64_t> exclusive_count_{0};
};

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_CLIENT_CLIENT_H_
