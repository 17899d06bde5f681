#include "sos_service.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include "wire/frame.h"

namespace djava {
namespace sos {

namespace {

std::string Now() {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

constexpr size_t kTokenSize = 16;
// A prefetch names at most this many chunks (the frame limit bounds it too).
constexpr int kMaxPrefetch = 1 << 16;

}  // namespace

struct SosService::Session {
  NodeId node = 0;
  std::string name;  // "node-name at peer"
  std::string token;
  std::unique_ptr<Outbox> outbox;

  std::mutex mu;
  std::condition_variable cv;
  wire::Connection* main = nullptr;    // while the main handler runs
  wire::Connection* bypass = nullptr;  // while the bypass handler runs
  bool bypass_ever = false;
  std::set<uint32_t> classes_sent;                  // server -> node
  struct ReceivedClass {
    uint32_t index;    // in the ClassTable
    uint64_t program;  // the descriptor's
  };
  std::map<uint32_t, ReceivedClass> classes_received;  // by the node's ref
  bool left = false;                                // OkToDie sent
  std::string failure;                              // why the outbox gave up
  // Invalidates and flushes sent and not yet answered: (chunk, txn) -> when
  // sent. An answer to a transaction no longer current still clears it.
  std::map<std::pair<ChunkId, uint64_t>, std::chrono::steady_clock::time_point> unanswered;
  std::string dropped;  // why the watchdog dropped the node; empty otherwise
};

SosService::SosService(Options options, Log log)
    : options_(options), log_(std::move(log)), directory_(this, options_.migratory) {
  directory_.SetObjectsAlong(options_.objects_along);
  directory_.SetShard(options_.shard, options_.shards);
  directory_.SetClassNamer([this](uint32_t index) {
    sospb::ClassDescriptor d;
    classes_.Lookup(index, &d);
    return d.name();
  });
  watchdog_ = std::thread([this] { WatchAnswers(); });
  if (options_.collect_check_ms > 0) collector_ = std::thread([this] { CollectGarbage(); });
}

SosService::~SosService() {
  {
    std::lock_guard<std::mutex> l(watchdog_mu_);
    stopping_ = true;
  }
  watchdog_cv_.notify_all();
  watchdog_.join();
  if (collector_.joinable()) collector_.join();
}

void SosService::CollectGarbage() {
  const auto period = std::chrono::milliseconds(options_.collect_check_ms);
  std::unique_lock<std::mutex> wl(watchdog_mu_);
  while (!watchdog_cv_.wait_for(wl, period, [this] { return stopping_; })) {
    if (!directory_.WantsCollection()) continue;
    wl.unlock();
    const CollectionResult r = directory_.Collect();
    if (r.collected > 0 || r.pause > std::chrono::milliseconds(50)) {
      Say("collected " + std::to_string(r.collected) + " unreachable chunk(s), " +
          std::to_string(r.marked) + " reachable; the directory paused " +
          std::to_string(r.pause.count()) + " us");
    }
    wl.lock();
  }
}

void SosService::WatchAnswers() {
  const auto limit = std::chrono::milliseconds(options_.answer_timeout_ms);
  // Checked a few times per limit: a silent node goes within 1.25 limits.
  const auto period = std::max(std::chrono::milliseconds(10), limit / 4);
  std::unique_lock<std::mutex> wl(watchdog_mu_);
  while (!watchdog_cv_.wait_for(wl, period, [this] { return stopping_; })) {
    std::vector<std::shared_ptr<Session>> all;
    {
      std::lock_guard<std::mutex> l(sessions_mu_);
      for (auto& [node, s] : sessions_) all.push_back(s);
    }
    const auto now = std::chrono::steady_clock::now();
    for (auto& s : all) {
      std::lock_guard<std::mutex> l(s->mu);
      if (!s->dropped.empty()) continue;
      for (const auto& [key, sent] : s->unanswered) {
        if (now - sent < limit) continue;
        s->dropped = "it left an invalidate or flush of chunk " + ChunkName(key.first) +
                     " unanswered for " + std::to_string(options_.answer_timeout_ms) + " ms";
        nodes_silent_++;
        Say("node " + std::to_string(s->node) + " (" + s->name + "): " + s->dropped +
            "; dropping it");
        // Its handlers then see their connections end and remove the node.
        if (s->main != nullptr) s->main->Shutdown();
        if (s->bypass != nullptr) s->bypass->Shutdown();
        break;
      }
    }
  }
}

void SosService::Say(const std::string& line) const {
  if (log_) log_(line);
}

std::shared_ptr<SosService::Session> SosService::Find(NodeId node) const {
  std::lock_guard<std::mutex> l(sessions_mu_);
  auto it = sessions_.find(node);
  return it == sessions_.end() ? nullptr : it->second;
}

// ---- main connection ----------------------------------------------------------

void SosService::ServeMain(std::unique_ptr<wire::Connection> conn, const std::string& peer) {
  connections_++;
  int one = 1;  // grants are small and answer a waiting thread: no Nagle delay
  setsockopt(conn->fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sospb::NodeRequest req;
  if (!conn->Receive(&req)) {
    Say(peer + ": closed before Hello: " + conn->error());
    return;
  }
  if (req.body_case() != sospb::NodeRequest::kHello) {
    refused_++;
    Say(peer + ": protocol error: the first request is not Hello; closing");
    return;
  }
  auto s = std::make_shared<Session>();
  s->name = (req.hello().node_name().empty() ? std::string("unnamed") : req.hello().node_name()) +
            " at " + peer;
  std::string refusal;
  s->node = NumberNode(req.hello(), s->name, &refusal);
  if (s->node == 0) {
    refused_++;
    Say(peer + ": refused: " + refusal);
    sospb::ServerMessage error;
    error.set_seq(req.seq());
    error.mutable_error()->set_code(sospb::BAD_REQUEST);
    error.mutable_error()->set_message("refused the node: " + refusal);
    conn->Send(error);
    return;
  }
  s->token.resize(kTokenSize);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&s->token[0]), kTokenSize) != 1) {
    Say(peer + ": no random bytes for a token");
    return;
  }
  s->main = conn.get();
  Session* raw = s.get();
  s->outbox = std::make_unique<Outbox>(conn->channel(), options_.max_queued_per_node,
                                       [this, raw](const std::string& why) {
                                         Say("node " + std::to_string(raw->node) + " (" +
                                             raw->name + "): " + why + "; dropping it");
                                       });
  {
    std::lock_guard<std::mutex> l(sessions_mu_);
    sessions_[s->node] = s;
  }
  sospb::ServerMessage welcome;
  welcome.set_seq(req.seq());
  welcome.mutable_welcome()->set_node(s->node);
  welcome.mutable_welcome()->set_token(s->token);
  welcome.mutable_welcome()->set_max_chunk_size(options_.max_chunk_size);
  welcome.mutable_welcome()->set_shard(options_.shard);
  welcome.mutable_welcome()->set_shards(options_.shards);
  Post(s->node, &welcome, nullptr);

  std::string why;
  {
    std::unique_lock<std::mutex> l(s->mu);
    if (!s->cv.wait_for(l, std::chrono::milliseconds(options_.bypass_timeout_ms),
                        [&] { return s->bypass_ever; }))
      why = "its bypass connection did not join within " +
            std::to_string(options_.bypass_timeout_ms) + " ms";
  }
  if (why.empty()) {
    Say("node " + std::to_string(s->node) + " (" + s->name + ") joined over " +
        conn->transport());
    why = RunRequests(s.get(), conn.get());
  }

  bool left;
  {
    std::lock_guard<std::mutex> l(s->mu);
    left = s->left;
    if (why.empty()) why = s->dropped;
    if (why.empty()) why = conn->error();
    s->main = nullptr;
    if (s->bypass != nullptr) s->bypass->Shutdown();
  }
  if (stopping_host_) {
    // The directory ends with this process: nothing to decide for the node.
    Say("node " + std::to_string(s->node) + " (" + s->name + ") disconnected by the stop");
  } else if (left) {
    nodes_left_++;
    directory_.RemoveNode(s->node, "left at " + Now());
    Say("node " + std::to_string(s->node) + " (" + s->name + ") left");
  } else {
    nodes_died_++;
    directory_.RemoveNode(s->node, "disconnected at " + Now() + " (" + why + ")");
    Say("node " + std::to_string(s->node) + " (" + s->name + ") disconnected: " + why);
  }
  s->outbox->Close();
  std::lock_guard<std::mutex> l(sessions_mu_);
  sessions_.erase(s->node);
}

NodeId SosService::NumberNode(const sospb::Hello& hello, const std::string& name,
                              std::string* why) {
  const uint32_t shards = hello.shards() == 0 ? 1 : hello.shards();
  if (hello.shard() != options_.shard || shards != options_.shards) {
    *why = "it lists this sos-server as shard " + std::to_string(hello.shard()) + " of " +
           std::to_string(shards) + ", but it is shard " + std::to_string(options_.shard) +
           " of " + std::to_string(options_.shards) +
           " (every node must list the cluster's sos-servers in the same order)";
    return 0;
  }
  if (options_.shard == 0) {
    if (hello.node() != 0) {
      *why = "the first shard numbers nodes, but the node says it is node " +
             std::to_string(hello.node());
      return 0;
    }
    const NodeId node = directory_.AddNode(name);
    if (node == 0) *why = "node numbers are exhausted";
    return node;
  }
  if (hello.node() == 0 || hello.node() >= kNamedNode) {
    *why = "shard " + std::to_string(options_.shard) +
           " takes the node number the first shard gave, and the node gave " +
           std::to_string(hello.node());
    return 0;
  }
  if (!directory_.AddNodeAt(hello.node(), name)) {
    *why = "node " + std::to_string(hello.node()) + " has joined this shard already";
    return 0;
  }
  return hello.node();
}

bool SosService::HomedHere(NodeId node, uint64_t seq, ChunkId id) {
  const size_t home = HomeShard(id, options_.shards);
  if (home == options_.shard) return true;
  refused_++;
  Error(node, seq, id, sospb::BAD_REQUEST,
        "chunk " + ChunkName(id) + " is at home on shard " + std::to_string(home) + " of " +
            std::to_string(options_.shards) + ", not on this sos-server (shard " +
            std::to_string(options_.shard) + ")");
  return false;
}

// ---- held posts ------------------------------------------------------------------

thread_local std::vector<std::shared_ptr<SosService::Session>>* SosService::held_ = nullptr;
thread_local std::vector<std::function<void()>>* SosService::after_held_ = nullptr;

// While a connection's thread handles frames that arrived in one read, what
// it posts waits in the outboxes, and leaves when it has handled the last
// (Send): a prefetch's flush requests to a block's owner, or the grants
// that a run of flush replies completes, then go in one write, and wake
// their receiver once rather than once per message. The thread handles
// buffered frames without blocking, so nothing waits for what it holds.
class SosService::HoldPosts {
 public:
  HoldPosts() {
    held_ = &sessions_;
    after_held_ = &after_;
  }
  ~HoldPosts() {
    Send();
    held_ = nullptr;
    after_held_ = nullptr;
  }
  void Send() {
    for (const std::shared_ptr<Session>& s : sessions_) s->outbox->SendHeld();
    sessions_.clear();
    std::vector<std::function<void()>> after;
    after.swap(after_);
    for (const auto& f : after) f();
  }
  // Before each Receive: sends what is held unless the next frame is
  // buffered already (the read that could block comes after). True.
  bool SendUnlessBuffered(const wire::Connection* conn) {
    if (!conn->HasBufferedFrame()) Send();
    return true;
  }

 private:
  std::vector<std::shared_ptr<Session>> sessions_;
  std::vector<std::function<void()>> after_;
};

uint64_t SosService::ExclusiveMark(uint64_t node) const {
  return node == 0 || node > kMaxNode ? 0 : directory_.ExclusiveMark(static_cast<NodeId>(node));
}

bool SosService::MoveToNode(ChunkId id, uint64_t from, uint64_t to, uint64_t since,
                            uint64_t holder_program, std::function<void()> sent,
                            const std::vector<uint64_t>& released) {
  if (from == 0 || to == 0 || from > kMaxNode || to > kMaxNode) return false;
  // The monitor service shards as the directory does; a lock whose chunk is
  // at home elsewhere has no data to move from here.
  if (HomeShard(id, options_.shards) != options_.shard) return false;
  // The grant may be held in the outbox by the thread that completes the
  // move (HoldPosts): the lock's grant leaves after it, not before.
  auto after_grant = [sent = std::move(sent)] {
    if (after_held_ != nullptr)
      after_held_->push_back(sent);
    else
      sent();
  };
  return directory_.PushWithLock(id, static_cast<NodeId>(from), static_cast<NodeId>(to), since,
                                 holder_program, after_grant, released);
}

// A prefetch's seen version of its i-th id; one without them has seen all.
static uint64_t SeenVersion(const sospb::Prefetch& p, int i) {
  return p.seen_versions_size() == p.ids_size() ? p.seen_versions(i) : Directory::kSeenAll;
}

std::string SosService::RunRequests(Session* s, wire::Connection* conn) {
  sospb::NodeRequest req;
  const std::string who = "node " + std::to_string(s->node) + " (" + s->name + ")";
  HoldPosts held;
  while (held.SendUnlessBuffered(conn) && conn->Receive(&req)) {
    if (stopping_host_) return "";
    requests_++;
    trace_.Line(s->node, "<-", req);
    switch (req.body_case()) {
      case sospb::NodeRequest::kRead:
        if (!HomedHere(s->node, req.seq(), req.read().id())) break;
        directory_.Read(s->node, req.seq(), req.read().id(), req.read().seen_version());
        break;
      case sospb::NodeRequest::kWrite:
        if (!HomedHere(s->node, req.seq(), req.write().id())) break;
        directory_.Write(s->node, req.seq(), req.write().id(), req.write().have_version(),
                         req.write().seen_version());
        break;
      case sospb::NodeRequest::kPrefetch:
        if (req.prefetch().ids_size() > kMaxPrefetch) {
          const std::string why = "protocol error: prefetch of " +
                                  std::to_string(req.prefetch().ids_size()) + " chunks";
          Say(who + ": " + why + "; closing");
          refused_++;
          return why;
        }
        if (req.prefetch().exclusive()) {
          if (req.prefetch().have_versions_size() != req.prefetch().ids_size()) {
            const std::string why = "protocol error: an exclusive prefetch of " +
                                    std::to_string(req.prefetch().ids_size()) + " chunks with " +
                                    std::to_string(req.prefetch().have_versions_size()) +
                                    " versions";
            Say(who + ": " + why + "; closing");
            refused_++;
            return why;
          }
          for (int i = 0; i < req.prefetch().ids_size(); i++) {
            if (!HomedHere(s->node, req.seq(), req.prefetch().ids(i))) continue;
            directory_.Write(s->node, req.seq(), req.prefetch().ids(i),
                             req.prefetch().have_versions(i), SeenVersion(req.prefetch(), i),
                             req.prefetch().first_writes());
          }
          break;
        }
        if (req.prefetch().first_writes()) {
          Say(who + ": protocol error: first writes in a read prefetch; closing");
          refused_++;
          return "protocol error: first writes in a read prefetch";
        }
        if (req.prefetch().have_versions_size() != 0) {
          Say(who + ": protocol error: versions in a read prefetch; closing");
          refused_++;
          return "protocol error: versions in a read prefetch";
        }
        for (int i = 0; i < req.prefetch().ids_size(); i++) {
          if (!HomedHere(s->node, req.seq(), req.prefetch().ids(i))) continue;
          directory_.Read(s->node, req.seq(), req.prefetch().ids(i), SeenVersion(req.prefetch(), i));
        }
        break;
      case sospb::NodeRequest::kFree:
        if (!HomedHere(s->node, req.seq(), req.free().id())) break;
        directory_.Free(s->node, req.seq(), req.free().id());
        break;
      case sospb::NodeRequest::kDie: {
        // Each shard is told of the chunks at home there; another's are
        // not this directory's to fetch.
        std::vector<ChunkId> owned;
        for (ChunkId id : req.die().owned())
          if (HomeShard(id, options_.shards) == options_.shard) owned.push_back(id);
        directory_.Die(s->node, req.seq(), owned);
        break;
      }
      case sospb::NodeRequest::kHello:
        Say(who + ": protocol error: a second Hello; closing");
        refused_++;
        return "protocol error: a second Hello";
      default:
        Say(who + ": protocol error: empty or unknown request; closing");
        refused_++;
        return "protocol error: empty or unknown request";
    }
  }
  return std::string();  // the connection ended; its error says why
}

// ---- bypass connection ---------------------------------------------------------

void SosService::ServeBypass(std::unique_ptr<wire::Connection> conn, const std::string& peer) {
  connections_++;
  sospb::BypassMessage m;
  if (!conn->Receive(&m)) {
    Say(peer + ": bypass closed before its hello: " + conn->error());
    return;
  }
  std::shared_ptr<Session> s;
  if (m.body_case() == sospb::BypassMessage::kHello) s = Find(m.hello().node());
  {
    std::unique_lock<std::mutex> l;
    if (s != nullptr) l = std::unique_lock<std::mutex>(s->mu);
    if (s == nullptr || s->bypass_ever || s->main == nullptr ||
        m.hello().token().size() != s->token.size() ||
        CRYPTO_memcmp(m.hello().token().data(), s->token.data(), s->token.size()) != 0) {
      refused_++;
      Say(peer + ": protocol error: a bypass connection that names no waiting node; closing");
      return;
    }
    s->bypass = conn.get();
    s->bypass_ever = true;
  }
  s->cv.notify_all();
  const std::string who = "node " + std::to_string(s->node) + " (" + s->name + ")";

  std::string why;
  HoldPosts held;
  while (why.empty() && held.SendUnlessBuffered(conn.get()) && conn->Receive(&m)) {
    if (stopping_host_) break;
    trace_.Line(s->node, "<-", m);
    switch (m.body_case()) {
      case sospb::BypassMessage::kInvalidateAck:
        Answered(s.get(), m.invalidate_ack().id(), m.invalidate_ack().txn());
        directory_.InvalidateAck(s->node, m.invalidate_ack().id(), m.invalidate_ack().txn());
        break;
      case sospb::BypassMessage::kFlushReply: {
        const sospb::FlushReply& r = m.flush_reply();
        Answered(s.get(), r.id(), r.txn());
        std::unique_ptr<ChunkImage> image;
        if (r.present()) {
          image = std::make_unique<ChunkImage>();
          std::string error;
          if (r.chunk().id() != r.id()) {
            why = "flush reply for chunk " + std::to_string(r.id()) + " carries another chunk";
          } else if (!DecodeChunk(s.get(), r.chunk(), image.get(), &error)) {
            why = error;
          }
          if (!why.empty()) break;
        }
        std::vector<ChunkId> along(r.along().begin(), r.along().end());
        directory_.FlushReply(s->node, r.id(), r.txn(), std::move(image), r.unused(), along);
        break;
      }
      case sospb::BypassMessage::kWriteBack: {
        const sospb::Chunk& c = m.write_back().chunk();
        if (m.write_back().clean()) {
          if (!m.write_back().drop() || !c.data().empty() || c.refs_size() != 0) {
            why = "a clean write-back that keeps its copy or carries bytes";
            break;
          }
          directory_.WriteBack(s->node, c.id(), nullptr, /*drop=*/true, /*clean=*/true);
          break;
        }
        auto image = std::make_unique<ChunkImage>();
        std::string error;
        if (!DecodeChunk(s.get(), c, image.get(), &error)) {
          why = error;
          break;
        }
        directory_.WriteBack(s->node, c.id(), std::move(image), m.write_back().drop());
        break;
      }
      case sospb::BypassMessage::kRelease: {
        const sospb::Release& r = m.release();
        if (r.ids_size() != r.shipments_size()) {
          why = "a release of " + std::to_string(r.ids_size()) + " chunks with " +
                std::to_string(r.shipments_size()) + " counts";
          break;
        }
        release_messages_++;
        directory_.Release(s->node, std::vector<ChunkId>(r.ids().begin(), r.ids().end()),
                           std::vector<uint64_t>(r.shipments().begin(), r.shipments().end()));
        break;
      }
      default:
        why = "an unexpected message on the bypass connection";
    }
  }
  if (!why.empty()) {
    refused_++;
    Say(who + ": protocol error: " + why + "; closing");
  }
  // A node without its bypass cannot answer flushes: end the whole session.
  std::lock_guard<std::mutex> l(s->mu);
  s->bypass = nullptr;
  if (s->main != nullptr) s->main->Shutdown();
}

void SosService::Answered(Session* s, ChunkId id, uint64_t txn) {
  std::lock_guard<std::mutex> l(s->mu);
  s->unanswered.erase({id, txn});
}

bool SosService::DecodeChunk(Session* s, const sospb::Chunk& c, ChunkImage* image,
                             std::string* error) {
  if (c.data().size() > options_.max_chunk_size) {
    *error = "a chunk of " + std::to_string(c.data().size()) + " bytes, above the limit of " +
             std::to_string(options_.max_chunk_size);
    return false;
  }
  if (c.class_ref() != 0) {
    std::lock_guard<std::mutex> l(s->mu);
    if (c.has_class_def()) {
      s->classes_received[c.class_ref()] =
          Session::ReceivedClass{classes_.Intern(c.class_def()), c.class_def().program()};
    }
    auto it = s->classes_received.find(c.class_ref());
    if (it == s->classes_received.end()) {
      *error = "class number " + std::to_string(c.class_ref()) + " was never defined";
      return false;
    }
    image->class_index = it->second.index;
    image->program = it->second.program;
  }
  if (c.run_heads_size() != c.run_blocks_size()) {
    *error = "a chunk with " + std::to_string(c.run_heads_size()) + " block runs and " +
             std::to_string(c.run_blocks_size()) + " run lengths";
    return false;
  }
  image->array_length = c.array_length();
  image->identity_hash = c.identity_hash();
  image->data = c.data();
  image->refs.assign(c.refs().begin(), c.refs().end());
  // Each once, as the protocol says; a node that repeats one is not
  // trusted to: the counts of shipments must match the node's own.
  std::sort(image->refs.begin(), image->refs.end());
  image->refs.erase(std::unique(image->refs.begin(), image->refs.end()), image->refs.end());
  image->refs.erase(std::remove(image->refs.begin(), image->refs.end(), ChunkId{0}),
                    image->refs.end());
  for (int i = 0; i < c.run_heads_size(); i++)
    image->runs.emplace_back(c.run_heads(i), c.run_blocks(i));
  return true;
}

// ---- NodeSink --------------------------------------------------------------------

void SosService::Post(NodeId node, sospb::ServerMessage* msg, const ChunkImage* image) {
  std::shared_ptr<Session> s = Find(node);
  if (s == nullptr) return;  // gone: the directory already forgot it or will
  std::lock_guard<std::mutex> l(s->mu);
  if (image != nullptr && image->class_index != 0 && msg->has_grant()) {
    sospb::Chunk* c = msg->mutable_grant()->mutable_chunk();
    c->set_class_ref(image->class_index);
    if (s->classes_sent.insert(image->class_index).second)
      classes_.Lookup(image->class_index, c->mutable_class_def());
  }
  if (msg->has_ok_to_die()) s->left = true;
  if (msg->has_invalidate())
    s->unanswered[{msg->invalidate().id(), msg->invalidate().txn()}] =
        std::chrono::steady_clock::now();
  if (msg->has_flush())
    s->unanswered[{msg->flush().id(), msg->flush().txn()}] = std::chrono::steady_clock::now();
  trace_.Line(node, "->", *msg);
  std::string frame;
  wire::AppendFrame(msg->SerializeAsString(), &frame);
  s->outbox->Post(frame, held_ != nullptr);
  if (held_ != nullptr && std::find(held_->begin(), held_->end(), s) == held_->end())
    held_->push_back(s);
}

void SosService::Grant(NodeId node, uint64_t seq, sospb::Access access, ChunkId id,
                       uint64_t version, const ChunkImage* image, bool clean) {
  sospb::ServerMessage m;
  m.set_seq(seq);
  sospb::Grant* g = m.mutable_grant();
  g->set_access(access);
  if (clean) g->set_clean(true);
  sospb::Chunk* c = g->mutable_chunk();
  c->set_id(id);
  c->set_version(version);
  if (image != nullptr) {
    g->set_has_data(true);
    c->set_array_length(image->array_length);
    c->set_identity_hash(image->identity_hash);
    c->set_data(image->data);
    for (ChunkId ref : image->refs) c->add_refs(ref);
  }
  Post(node, &m, image);
}

void SosService::Invalidate(NodeId node, ChunkId id, uint64_t txn) {
  sospb::ServerMessage m;
  m.mutable_invalidate()->set_id(id);
  m.mutable_invalidate()->set_txn(txn);
  Post(node, &m, nullptr);
}

void SosService::Flush(NodeId node, ChunkId id, uint64_t txn, bool keep_shared) {
  sospb::ServerMessage m;
  m.mutable_flush()->set_id(id);
  m.mutable_flush()->set_txn(txn);
  m.mutable_flush()->set_keep_shared(keep_shared);
  Post(node, &m, nullptr);
}

void SosService::Error(NodeId node, uint64_t seq, ChunkId id, sospb::ErrorCode code,
                       const std::string& message) {
  sospb::ServerMessage m;
  m.set_seq(seq);
  m.mutable_error()->set_code(code);
  m.mutable_error()->set_id(id);
  m.mutable_error()->set_message(message);
  Post(node, &m, nullptr);
}

void SosService::Freed(NodeId node, uint64_t seq, ChunkId id) {
  sospb::ServerMessage m;
  m.set_seq(seq);
  m.mutable_freed()->set_id(id);
  Post(node, &m, nullptr);
}

void SosService::Declined(NodeId node, uint64_t seq, ChunkId id) {
  sospb::ServerMessage m;
  m.set_seq(seq);
  m.mutable_declined()->set_id(id);
  Post(node, &m, nullptr);
}

void SosService::OkToDie(NodeId node, uint64_t seq) {
  sospb::ServerMessage m;
  m.set_seq(seq);
  m.mutable_ok_to_die();
  Post(node, &m, nullptr);
}

void SosService::WrittenBack(NodeId node, ChunkId id, bool accepted) {
  sospb::ServerMessage m;
  m.mutable_written_back()->set_id(id);
  m.mutable_written_back()->set_accepted(accepted);
  Post(node, &m, nullptr);
}

void SosService::FreeProgram(uint64_t program) {
  const size_t dropped = directory_.FreeProgram(program);
  Say("program " + std::to_string(program) + " ended: dropped its " + std::to_string(dropped) +
      " chunk(s)");
}

std::string SosService::Stats() const {
  DirectoryStats d = directory_.Stats();
  size_t live;
  {
    std::lock_guard<std::mutex> l(sessions_mu_);
    live = sessions_.size();
  }
  return "connections " + std::to_string(connections_.load()) + ", nodes live " +
         std::to_string(live) + ", left " + std::to_string(nodes_left_.load()) + ", died " +
         std::to_string(nodes_died_.load()) + " (" + std::to_string(nodes_silent_.load()) +
         " dropped for not answering), protocol errors " +
         std::to_string(refused_.load()) + "; requests " + std::to_string(requests_.load()) +
         ", grants " + std::to_string(d.grants) + ", invalidates " +
         std::to_string(d.invalidates) + ", flushes " + std::to_string(d.flushes) +
         ", errors " + std::to_string(d.errors) + "; chunks " + std::to_string(d.chunks) +
         ", lost " + std::to_string(d.lost) + ", freed " + std::to_string(d.freed) +
         ", dropped with their program " + std::to_string(d.dropped_with_program) + " (of " +
         std::to_string(d.programs_ended) + " programs ended), classes " +
         std::to_string(classes_.size()) + "; live " + std::to_string(d.live) +
 ", released " + std::to_string(d.releases) + " in " +
         std::to_string(release_messages_.load()) + " messages (" +
         std::to_string(d.excess_releases) + " beyond their shipments), collections " + std::to_string(d.collections) +
         ", collected " + std::to_string(d.collected) + ", holds " + std::to_string(d.holds) +
         ", written back " + std::to_string(d.written_back) +
         ", pause last " + std::to_string(d.last_pause_us) + " us, max " +
         std::to_string(d.max_pause_us) + " us; migratory chunks " +
         std::to_string(d.migratory_marked) + ", reads granted exclusive " +
         std::to_string(d.migratory_grants) + ", undone " + std::to_string(d.migratory_undone) +
         "; moved with their lock " + std::to_string(d.pushes) + " (requests they answered " +
         std::to_string(d.push_crossings) + ", came back untouched " +
         std::to_string(d.pushes_unused) + ", from home " + std::to_string(d.pushes_released) +
         "); written home with a release " + std::to_string(d.released_with_lock) +
         "; new objects granted along " + std::to_string(d.pushes_along) +
         "; clean grants given back unwritten " + std::to_string(d.clean_returns);
}

}  // namespace sos
}  // namespace djava
