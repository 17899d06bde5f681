#include "client.h"

#include <sched.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "wire/handshake.h"
#include "wire/secret.h"

namespace djava {
namespace sos {

namespace {

constexpr int kWelcomeTimeoutMs = 10000;
constexpr int kDieTimeoutMs = 60000;
constexpr int kYieldsBeforeSleep = 50;
// How long a forgotten handle waits before its memory goes, beyond every
// thread that can hold it being done: a thread not of the program (a JDK
// cleaner running its code) that read a replica's word pointer just before
// the JVM let go of the program's objects is done with it within this.
constexpr auto kForgottenGrace = std::chrono::seconds(2);

int64_t SteadyNs(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

djava_sos_status Fail(djava_sos_error* error, djava_sos_status status, const char* fmt, ...) {
  if (error != nullptr) {
    error->status = status;
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(error->message, sizeof error->message, fmt, ap);
    va_end(ap);
  }
  return status;
}

djava_sos_status FromWire(sospb::ErrorCode code) {
  switch (code) {
    case sospb::LOST: return DJAVA_SOS_LOST;
    case sospb::NO_SUCH_CHUNK: return DJAVA_SOS_NO_SUCH_CHUNK;
    case sospb::FREED: return DJAVA_SOS_FREED;
    case sospb::IN_USE: return DJAVA_SOS_IN_USE;
    case sospb::TOO_LARGE: return DJAVA_SOS_TOO_LARGE;
    default: return DJAVA_SOS_PROTOCOL;
  }
}

uint64_t Pins(uint64_t word) { return word >> kPinShift; }

// Releases are batched: the retry thread waits this long after the first
// candidate before it releases, unless many wait already.
constexpr auto kReleaseBatchDelay = std::chrono::milliseconds(5);
constexpr size_t kReleaseBatchNow = 1024;
// A release message names at most this many chunks (~0.8 MB), well within
// the frame limit.
constexpr size_t kReleasesPerMessage = 65536;

}  // namespace

thread_local Client::Produced Client::produced_;

// ---- connecting and leaving ------------------------------------------------------

djava_sos_status Client::Connect(const djava_sos_config& config, Client** out,
                                 djava_sos_error* error) {
  if (config.server == nullptr || config.secret_file == nullptr)
    return Fail(error, DJAVA_SOS_BAD_ARGUMENT, "server and secret_file are required");
  std::string secret, why;
  if (!wire::LoadSecret(config.secret_file, &secret, &why))
    return Fail(error, DJAVA_SOS_BAD_ARGUMENT, "%s", why.c_str());
  std::unique_ptr<Client> c(new Client());
  c->name_ = config.node_name != nullptr ? config.node_name : "";
  if (config.callbacks != nullptr && config.callbacks->install != nullptr) {
    if (config.callbacks->produce == nullptr)
      return Fail(error, DJAVA_SOS_BAD_ARGUMENT, "an install callback needs a produce callback");
    c->callbacks_ = *config.callbacks;
    c->have_callbacks_ = true;
  }
  // "host:port[,host:port...]": the shards, in the cluster's order.
  for (const std::string& address : wire::SplitAddressList(config.server)) {
    auto home = std::make_unique<Home>();
    home->index = c->homes_.size();
    home->address = address;
    c->homes_.push_back(std::move(home));
  }
  if (c->homes_.empty() || c->homes_.size() > kMaxShards)
    return Fail(error, DJAVA_SOS_BAD_ARGUMENT, "sos-servers '%s': give 1 to %zu addresses",
                config.server, kMaxShards);
  for (auto& home : c->homes_) {
    home->name = "sos-server " + home->address;
    if (c->homes_.size() > 1)
      home->name += " (shard " + std::to_string(home->index) + " of " +
                    std::to_string(c->homes_.size()) + ")";
  }
  for (size_t i = 0; i < c->homes_.size(); i++) {
    const djava_sos_status status = Join(c.get(), i, secret, error);
    if (status != DJAVA_SOS_OK) return status;  // the connections opened so far close here
  }
  Client* raw = c.get();
  for (auto& home : c->homes_) {
    Home* h = home.get();
    h->receiver = std::thread([raw, h] { raw->ReceiverLoop(h); });
  }
  *out = c.release();
  return DJAVA_SOS_OK;
}

djava_sos_status Client::Join(Client* c, size_t index, const std::string& secret,
                              djava_sos_error* error) {
  Home& home = *c->homes_[index];
  const char* name = home.name.c_str();
  std::string why;
  int fd = wire::ConnectTcp(home.address, &why);
  if (fd < 0) return Fail(error, DJAVA_SOS_DISCONNECTED, "%s: %s", name, why.c_str());
  home.main = std::make_unique<wire::Connection>(fd);
  if (!wire::ClientHandshake(home.main.get(), secret, "sos", &why))
    return Fail(error, DJAVA_SOS_DISCONNECTED, "%s: %s", name, why.c_str());
  sospb::NodeRequest hello;
  hello.set_seq(c->next_seq_++);
  hello.mutable_hello()->set_node_name(c->name_);
  hello.mutable_hello()->set_node(index == 0 ? 0 : c->node_);
  hello.mutable_hello()->set_shard(static_cast<uint32_t>(index));
  hello.mutable_hello()->set_shards(static_cast<uint32_t>(c->homes_.size()));
  sospb::ServerMessage welcome;
  home.main->SetReceiveTimeout(kWelcomeTimeoutMs);
  if (!home.main->Send(hello) || !home.main->Receive(&welcome))
    return Fail(error, DJAVA_SOS_DISCONNECTED, "%s: no welcome: %s", name,
                home.main->error().c_str());
  if (welcome.has_error())
    return Fail(error, DJAVA_SOS_DISCONNECTED, "%s %s", name, welcome.error().message().c_str());
  if (!welcome.has_welcome())
    return Fail(error, DJAVA_SOS_DISCONNECTED, "%s: no welcome: it sent something else", name);
  // A server that does not say which shard it is predates shards: one.
  const uint32_t shards = welcome.welcome().shards() == 0 ? 1 : welcome.welcome().shards();
  if (welcome.welcome().shard() != index || shards != c->homes_.size())
    return Fail(error, DJAVA_SOS_DISCONNECTED,
                "%s is shard %u of %u, but is listed as shard %zu of %zu", name,
                welcome.welcome().shard(), shards, index, c->homes_.size());
  home.main->SetReceiveTimeout(0);
  if (index == 0) {
    c->node_ = welcome.welcome().node();
    c->max_chunk_size_ = welcome.welcome().max_chunk_size();
  } else {
    if (welcome.welcome().node() != c->node_)
      return Fail(error, DJAVA_SOS_DISCONNECTED, "%s welcomed node %u as node %u", name, c->node_,
                  welcome.welcome().node());
    c->max_chunk_size_ = std::min(c->max_chunk_size_, welcome.welcome().max_chunk_size());
  }

  fd = wire::ConnectTcp(home.address, &why);
  if (fd < 0) return Fail(error, DJAVA_SOS_DISCONNECTED, "%s: %s", name, why.c_str());
  home.bypass = std::make_unique<wire::Connection>(fd);
  if (!wire::ClientHandshake(home.bypass.get(), secret, "sos-bypass", &why))
    return Fail(error, DJAVA_SOS_DISCONNECTED, "%s: %s", name, why.c_str());
  sospb::BypassMessage bypass_hello;
  bypass_hello.mutable_hello()->set_node(c->node_);
  bypass_hello.mutable_hello()->set_token(welcome.welcome().token());
  if (!home.bypass->Send(bypass_hello))
    return Fail(error, DJAVA_SOS_DISCONNECTED, "%s: %s", name, home.bypass->error().c_str());
  return DJAVA_SOS_OK;
}

Client::~Client() {
  for (auto& home : homes_) {
    if (home->main) home->main->Shutdown();
    if (home->bypass) home->bypass->Shutdown();
  }
  for (auto& home : homes_)
    if (home->receiver.joinable()) home->receiver.join();
  StopRetrying();
}

djava_sos_status Client::Close(djava_sos_error* error) {
  // One Die per shard, each naming the modified chunks at home there.
  std::vector<sospb::NodeRequest> dies(homes_.size());
  for (sospb::NodeRequest& die : dies) {
    die.set_seq(next_seq_++);
    die.mutable_die();  // an empty Die (nothing modified) is still a Die
  }
  int owned = 0;
  {
    std::shared_lock<std::shared_mutex> hold(handles_mu_);
    for (djava_sos_chunk* c : AllChunks()) {
      std::lock_guard<std::mutex> cl(c->mu);
      const bool modified = (c->word.load() & kStateMask) == kStateM ||
                            (c->stash && c->stash->access == sospb::EXCLUSIVE);
      if (modified && !c->freed) {
        dies[HomeOf(c->id).index].mutable_die()->add_owned(c->id);
        owned++;
      }
    }
  }
  djava_sos_status status = DJAVA_SOS_OK;
  bool sent = true;
  for (size_t i = 0; i < homes_.size() && sent; i++) sent = SendRequest(*homes_[i], &dies[i]);
  if (!sent) {
    status = Fail(error, DJAVA_SOS_DISCONNECTED, "node %u could not write back its chunks: %s",
                  node_, broken_why_.c_str());
  } else {
    std::unique_lock<std::mutex> l(mu_);
    auto all_ok = [this] {
      for (const auto& home : homes_)
        if (!home->ok_to_die) return false;
      return true;
    };
    cv_.wait_for(l, std::chrono::milliseconds(kDieTimeoutMs), [&] { return all_ok() || broken_; });
    if (!all_ok())
      status = Fail(error, DJAVA_SOS_DISCONNECTED,
                    "node %u: the server did not confirm the write-back of its %d modified chunks: %s",
                    node_, owned, broken_ ? broken_why_.c_str() : "timed out");
  }
  // From here every access fails (the handles stay valid): a thread still
  // running in a leaving process must not read copies nobody keeps coherent.
  Disconnected("node " + std::to_string(node_) + " has left the cluster");
  Abandon();
  return status;
}

void Client::Abandon() {
  for (auto& home : homes_) {
    home->main->Shutdown();
    home->bypass->Shutdown();
  }
  for (auto& home : homes_)
    if (home->receiver.joinable()) home->receiver.join();
  StopRetrying();
}

void Client::Callback(void (*fn)(void*)) {
  if (fn != nullptr) fn(callbacks_.context);
}

// ---- the chunk table ---------------------------------------------------------------

// A snapshot: a chunk's mutex is never taken under a shard's, because a
// JVM's produce callback (under the chunk's mutex) may allocate chunks.
// The pointers stay valid while the caller holds handles_mu_.
std::vector<djava_sos_chunk*> Client::AllChunks() {
  std::vector<djava_sos_chunk*> all;
  for (Shard& s : shards_) {
    std::lock_guard<std::mutex> l(s.mu);
    for (auto& [id, c] : s.chunks) all.push_back(c.get());
  }
  return all;
}

size_t Client::HandleCount() {
  size_t n = 0;
  for (Shard& s : shards_) {
    std::lock_guard<std::mutex> l(s.mu);
    n += s.chunks.size();
  }
  return n;
}

bool Client::IsJdkClass(uint32_t class_local) const {
  const ClassInfo* info = class_local != 0 ? classes_.Get(class_local) : nullptr;
  if (info == nullptr) return false;
  const std::string& n = info->name;
  size_t at = 0;
  while (at < n.size() && n[at] == '[') at++;  // an array's element class
  if (at > 0) {
    if (at == n.size() - 1) return true;  // of a primitive type
    if (n[at] == 'L') at++;
  }
  return n.compare(at, 5, "java/") == 0;  // HotSpot's internal names
}

// In use: an access, a request or revocation under way, a thread waiting,
// bytes being installed. Such a handle is not forgotten.
bool Client::Idle(const djava_sos_chunk* c) const {
  return Pins(c->word.load()) == 0 && c->outstanding == djava_sos_chunk::Asked::kNone &&
         !c->revoke.active && c->waiters == 0 && !c->installing;
}

uint64_t Client::ProgramOf(const djava_sos_chunk* c) const {
  // A grant no access installed yet (one moved here with its lock) names
  // the class the copy would get.
  const uint32_t class_local = c->class_local != 0   ? c->class_local
                               : c->stash != nullptr ? c->stash->class_local
                                                     : c->unused_grant_class;
  const ClassInfo* info = class_local != 0 ? classes_.Get(class_local) : nullptr;
  if (info != nullptr) return info->program;
  return c->has_meta ? c->meta.program : 0;
}

bool Client::ProgramHasEnded(uint64_t program) {
  if (program == 0) return false;
  std::lock_guard<std::mutex> l(retry_mu_);
  return ended_programs_.count(program) != 0;
}

size_t Client::ForgetProgram(uint64_t program, djava_sos_chunk* const* kept, size_t n_kept,
                             djava_sos_chunk* const* released, size_t n_released) {
  if (program == 0) return 0;
  const std::unordered_set<const djava_sos_chunk*> keep(kept, kept + n_kept);
  const std::unordered_set<const djava_sos_chunk*> let_go(released, released + n_released);
  std::unordered_set<uint64_t> ended;
  {
    std::lock_guard<std::mutex> l(retry_mu_);
    ended_programs_.insert(program);
    ended = ended_programs_;
  }
  std::vector<djava_sos_chunk*> going;
  size_t given_back = 0;
  {
    std::shared_lock<std::shared_mutex> hold(handles_mu_);
    for (djava_sos_chunk* c : AllChunks()) {
      if (keep.count(c) != 0) continue;
      std::lock_guard<std::mutex> l(c->mu);
      if (!Idle(c)) continue;
      const uint64_t its = ProgramOf(c);
      const bool unnamed =
          c->user.load() == 0 && c->pending_refs.load() == 0 && c->retained.load() == 0;
      // One of a program that ended before: only if no object here names
      // it (the JVM's `kept` of that program's end may still).
      if (let_go.count(c) == 0 && its != program && (ended.count(its) == 0 || !unnamed))
        continue;
      if (c->stash != nullptr && unnamed && ended.count(its) != 0) {
        // A grant no access installed goes home by the release pass
        // (GiveBackStash), its bytes with it: the chunk may outlive its
        // program (a JDK object the program published first, which later
        // programs use), and the grant may hold its only current copy.
        Unreferenced(c);
        given_back++;
        continue;
      }
      // An earlier program's handle goes only if it holds no copy that
      // home lacks, for the same reason.
      if (its != program && let_go.count(c) == 0 &&
          (c->stash != nullptr || c->clean || c->write_back_pending ||
           (c->word.load() & kStateMask) == kStateM))
        continue;
      going.push_back(c);
    }
  }
  // Out of the table: from here the receiver finds no handle for these ids
  // (an invalidate is acknowledged, a flush finds no copy). One that a
  // client thread looked up before is still in use under handles_mu_.
  std::vector<Forgotten> out;
  out.reserve(going.size());
  const auto now = std::chrono::steady_clock::now();
  for (djava_sos_chunk* c : going) {
    // Idle still (checked again under the chunk's mutex, then the shard's):
    // a thread may have begun an access since.
    std::lock_guard<std::mutex> cl(c->mu);
    if (!Idle(c)) continue;
    Shard& s = shards_[HomeShard(c->id, kShards)];
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.chunks.find(c->id);
    if (it == s.chunks.end() || it->second.get() != c) continue;
    out.push_back(Forgotten{std::move(it->second), now});
    s.chunks.erase(it);
  }
  std::vector<std::pair<uint64_t, uint32_t>> releases;
  std::vector<std::unique_ptr<djava_sos_chunk::Stash>> stashes;
  for (Forgotten& f : out) {
    // A revocation armed since the handle left the table, by a receiver
    // that found it just before (it may have been put off, for the retry
    // thread): the server waits for its answer.
    std::lock_guard<std::mutex> l(f.handle->mu);
    AnswerPendingRevokeWithNothing(f.handle.get());
    if (f.handle->stash != nullptr) stashes.push_back(std::move(f.handle->stash));
    // The server's count of this node's hold goes too (its chunk may be
    // of another program, still running).
    const uint32_t n = f.handle->shipments.exchange(0);
    if (n > 0 && !IsNamed(f.handle->id)) releases.emplace_back(f.handle->id, n);
  }
  // A grant moved here with its lock that no access installed: the ids its
  // bytes named are the ended program's too, and nothing here will name
  // them now. Their handles made only for it go with the program.
  for (const auto& stash : stashes) ForgetStashRefs(stash.get(), &out, now, &releases);
  if (!releases.empty()) {
    std::lock_guard<std::mutex> l(retry_mu_);
    if (!retry_stopping_) {
      to_release_.insert(to_release_.end(), releases.begin(), releases.end());
      if (!retrier_.joinable()) retrier_ = std::thread([this] { RetryLoop(); });
      retry_cv_.notify_one();
    }
  }
  const size_t forgotten = out.size() + given_back;
  AddForgotten(&out, now);
  FreeForgotten();
  {
    // Handles the JVM let go of just before (the program's last replicas,
    // ids named only by bytes it installed) wait for the next release pass,
    // a few ms away: the program's end waits for it, a bounded while, so
    // that what the node says it kept is what it keeps.
    std::unique_lock<std::mutex> l(retry_mu_);
    if (!retry_stopping_ && retrier_.joinable())
      release_pass_cv_.wait_for(l, std::chrono::milliseconds(200), [this] {
        return retry_stopping_ || (release_candidates_.empty() && to_release_.empty());
      });
  }
  return forgotten;
}

void Client::ForgetStashRefs(djava_sos_chunk::Stash* s, std::vector<Forgotten>* out,
                             std::chrono::steady_clock::time_point now,
                             std::vector<std::pair<uint64_t, uint32_t>>* releases) {
  for (djava_sos_chunk* r : s->ref_handles) {
    std::lock_guard<std::mutex> l(r->mu);
    // As StashDone and ReleaseUnreferenced would, without waiting for the
    // retry thread: the last stash naming an id no object here names lets
    // go of it (its shipments, from this stash and from installs that made
    // no object for it, are released). The id is the ended program's, so
    // no thread of this node looks it up to name it now. One that is the
    // program's own is out of the table already.
    if (r->pending_refs.fetch_sub(1) != 1 || r->user.load() != 0 || r->retained.load() != 0 ||
        IsNamed(r->id) || (r->word.load() & kStateMask) == kStateM || r->clean ||
        !Releasable(r))
      continue;
    TakeOutToRelease(r, out, now, releases);
  }
  s->ref_handles.clear();
}

void Client::TakeOutToRelease(djava_sos_chunk* c, std::vector<Forgotten>* out,
                              std::chrono::steady_clock::time_point now,
                              std::vector<std::pair<uint64_t, uint32_t>>* releases) {
  Shard& s = shards_[HomeShard(c->id, kShards)];
  std::lock_guard<std::mutex> sl(s.mu);
  auto it = s.chunks.find(c->id);
  if (it == s.chunks.end() || it->second.get() != c) return;  // forgotten already
  const uint32_t n = c->shipments.exchange(0);
  if (n > 0) releases->emplace_back(c->id, n);
  // Its read copy goes with it; an access through a stale pointer fails
  // loudly instead of reading what nobody keeps coherent any more.
  c->freed = true;
  SetState(c, kStateI, false);
  c->bytes.reset();
  out->push_back(Forgotten{std::move(it->second), now});
  s.chunks.erase(it);
}

void Client::AddForgotten(std::vector<Forgotten>* out, std::chrono::steady_clock::time_point now) {
  if (out->empty()) return;
  std::lock_guard<std::mutex> l(forgotten_mu_);
  for (Forgotten& f : *out) forgotten_.push_back(std::move(f));
  forgotten_waiting_ = forgotten_.size();
  forgotten_due_ns_ = std::min(forgotten_due_ns_.load(), SteadyNs(now + kForgottenGrace));
}

void Client::FreeForgotten() {
  if (forgotten_waiting_.load(std::memory_order_relaxed) == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (SteadyNs(now) < forgotten_due_ns_.load(std::memory_order_relaxed)) return;
  std::unique_lock<std::shared_mutex> sole(handles_mu_, std::try_to_lock);
  if (!sole.owns_lock()) return;  // someone uses handles: a later call frees them
  std::vector<std::unique_ptr<djava_sos_chunk>> done;
  {
    std::lock_guard<std::mutex> l(forgotten_mu_);
    const auto due = now - kForgottenGrace;
    auto still = std::stable_partition(forgotten_.begin(), forgotten_.end(),
                                       [&](const Forgotten& f) { return f.when > due; });
    for (auto it = still; it != forgotten_.end(); ++it) done.push_back(std::move(it->handle));
    forgotten_.erase(still, forgotten_.end());
    forgotten_waiting_ = forgotten_.size();
    int64_t next = INT64_MAX;
    for (const Forgotten& f : forgotten_) next = std::min(next, SteadyNs(f.when + kForgottenGrace));
    forgotten_due_ns_ = next;
  }
  if (done.empty()) return;
  for (const auto& h : done) {
    // The same, armed later still: nobody will produce the bytes now.
    std::lock_guard<std::mutex> l(h->mu);
    AnswerPendingRevokeWithNothing(h.get());
  }
  {
    // Such a handle may also wait on the retry thread's lists; the retry
    // thread takes handles off them only while it holds handles_mu_.
    std::unordered_set<const djava_sos_chunk*> gone;
    for (const auto& h : done) gone.insert(h.get());
    auto is_gone = [&](djava_sos_chunk* c) { return gone.count(c) != 0; };
    std::lock_guard<std::mutex> l(retry_mu_);
    deferred_.erase(std::remove_if(deferred_.begin(), deferred_.end(), is_gone), deferred_.end());
    releases_to_finish_.erase(
        std::remove_if(releases_to_finish_.begin(), releases_to_finish_.end(), is_gone),
        releases_to_finish_.end());
    release_candidates_.erase(
        std::remove_if(release_candidates_.begin(), release_candidates_.end(), is_gone),
        release_candidates_.end());
  }
  handles_freed_ += done.size();
}

djava_sos_chunk* Client::Find(uint64_t id) {
  Shard& s = shards_[HomeShard(id, kShards)];
  std::lock_guard<std::mutex> l(s.mu);
  auto it = s.chunks.find(id);
  return it == s.chunks.end() ? nullptr : it->second.get();
}

djava_sos_chunk* Client::Insert(uint64_t id, std::unique_ptr<djava_sos_chunk> c) {
  Shard& s = shards_[HomeShard(id, kShards)];
  std::lock_guard<std::mutex> l(s.mu);
  auto it = s.chunks.find(id);
  if (it != s.chunks.end()) return it->second.get();
  return s.chunks.emplace(id, std::move(c)).first->second.get();
}

djava_sos_chunk* Client::ChunkFor(uint64_t id) {
  if (id == 0) return nullptr;
  if (djava_sos_chunk* c = Find(id)) return c;
  auto c = std::make_unique<djava_sos_chunk>();
  c->client = this;
  c->id = id;
  if (broken_) c->word.store(kBlocked);
  return Insert(id, std::move(c));
}

djava_sos_chunk* Client::Alloc(size_t size, const djava_sos_meta* meta, djava_sos_error* error) {
  return AllocRun(1, &size, meta, error);
}

djava_sos_chunk* Client::AllocRun(size_t count, const size_t* sizes, const djava_sos_meta* meta,
                                  djava_sos_error* error) {
  if (count == 0 || count > kMaxSequence) {
    Fail(error, DJAVA_SOS_BAD_ARGUMENT, "a run of %zu chunks", count);
    return nullptr;
  }
  for (size_t i = 0; i < count; i++) {
    if (sizes[i] > max_chunk_size_) {
      Fail(error, DJAVA_SOS_TOO_LARGE, "a chunk of %zu bytes is above the limit of %u", sizes[i],
           max_chunk_size_);
      return nullptr;
    }
  }
  const uint64_t first = next_sequence_.fetch_add(count);
  if (first + count - 1 > kMaxSequence) {
    Fail(error, DJAVA_SOS_TOO_LARGE, "node %u has used all its chunk ids", node_);
    return nullptr;
  }
  djava_sos_chunk* head = nullptr;
  for (size_t i = 0; i < count; i++) {
    djava_sos_chunk* c = AllocAt(first + i, sizes[i], meta);
    if (i == 0) head = c;
  }
  // An object made here is this node's exclusively (an array kept in
  // blocks moves in its own protocol).
  if (count == 1) NoteExclusive(head->id);
  return head;
}

djava_sos_chunk* Client::AllocAt(uint64_t sequence, size_t size, const djava_sos_meta* meta) {
  auto c = std::make_unique<djava_sos_chunk>();
  c->client = this;
  c->id = MakeChunkId(node_, sequence);
  c->size = size;
  if (!have_callbacks_) c->bytes.reset(new char[size > 0 ? size : 1]());
  if (meta != nullptr) {
    if (meta->class_name != nullptr)
      c->class_local = classes_.Intern(meta->class_name, meta->program, meta->element_type);
    c->meta = *meta;
    const ClassInfo* info = classes_.Get(c->class_local);
    c->meta.class_name = info != nullptr ? info->name.c_str() : nullptr;
    c->has_meta = true;
  }
  // The only copy, and dirty: the server learns of it when someone asks,
  // and counts this node's hold on it from its making.
  c->word.store(kStateM);
  c->shipments.store(1);
  const uint64_t id = c->id;
  return Insert(id, std::move(c));
}

// ---- accesses ---------------------------------------------------------------------

void Client::SetState(djava_sos_chunk* c, uint64_t state, bool blocked) {
  uint64_t w = c->word.load();
  uint64_t next;
  do {
    next = (w & ~(kStateMask | kBlocked)) | state | (blocked || broken_ ? kBlocked : 0);
  } while (!c->word.compare_exchange_weak(w, next));
  if (state != kStateS) c->clean = false;
}

bool Client::SendRequest(Home& home, sospb::NodeRequest* req) {
  if (broken_) return false;
  requests_by_kind_.Count(req->body_case());
  return home.main->Send(*req);
}

bool Client::SendBypass(Home& home, const sospb::BypassMessage& m) {
  bypass_by_kind_.Count(m.body_case());
  return home.bypass->Send(m);
}

std::string Client::TrafficByKind() const {
  return "requests " + requests_by_kind_.Describe(sospb::NodeRequest::descriptor()) +
         "; on the bypass " + bypass_by_kind_.Describe(sospb::BypassMessage::descriptor()) +
         "; received " + received_by_kind_.Describe(sospb::ServerMessage::descriptor());
}

djava_sos_status Client::Access(djava_sos_chunk* c, bool write, djava_sos_error* error) {
  std::unique_lock<std::mutex> l(c->mu);
  c->waiters++;
  struct Leave {
    Client* self;
    djava_sos_chunk* c;
    ~Leave() {
      c->waiters--;
      self->MaybeRevoke(c);
      c->cv.notify_all();
    }
  } leave{this, c};

  for (;;) {
    if (broken_)
      return Fail(error, DJAVA_SOS_DISCONNECTED, "chunk 0x%016" PRIx64 ": %s", c->id,
                  broken_why_.c_str());
    if (c->freed)
      return Fail(error, DJAVA_SOS_FREED, "chunk 0x%016" PRIx64 " was freed", c->id);
    const uint64_t w = c->word.load();
    const uint64_t state = w & kStateMask;
    const bool enough = state == kStateM || (!write && state == kStateS);
    if (enough && !(w & kBlocked)) {
      c->word.fetch_add(kPin, std::memory_order_acquire);
      return DJAVA_SOS_OK;
    }
    if (write && state == kStateS && c->clean && !(w & kBlocked) && !c->revoke.active &&
        c->stash == nullptr && !c->installing) {
      // The first write of a clean grant: the server has this node as the
      // owner already, and the JVM pins the object now (DsoHeap).
      SetState(c, kStateM, false);
      c->word.fetch_add(kPin, std::memory_order_acquire);
      return DJAVA_SOS_OK;
    }
    // A stashed grant comes first: its thread gets one access even when a
    // revocation arrived meanwhile.
    if (c->stash != nullptr && !c->installing) {
      const bool useful = c->stash->access == sospb::EXCLUSIVE || !write;
      if (useful || !enough) {
        if (!Install(c, l, error)) return error->status;
        const uint64_t now = c->word.load() & kStateMask;
        if (now == kStateM || (!write && now == kStateS)) {
          c->word.fetch_add(kPin, std::memory_order_acquire);
          return DJAVA_SOS_OK;
        }
        continue;
      }
    }
    if (c->write_back_pending && (write || state == kStateI)) {
      // The server still has this node as the owner until the write-back
      // arrives: an upgrade, or a read (a write-back leaves no readable
      // copy until its answer), sent now could overtake it.
      c->cv.wait(l);
      continue;
    }
    if (c->revoke.active || c->installing) {
      MaybeRevoke(c);
      // A deferred revocation leaves the chunk usable meanwhile: the thread
      // that would wait here may be the one the JVM waits for.
      const uint64_t now = c->word.load() & kStateMask;
      const bool usable = now == kStateM || (!write && now == kStateS);
      if (c->installing || (c->revoke.active && !(c->revoke.deferred && usable))) c->cv.wait(l);
      continue;
    }
    if (c->outstanding == djava_sos_chunk::Asked::kNone) {
      sospb::NodeRequest req;
      req.set_seq(next_seq_++);
      if (write) {
        req.mutable_write()->set_id(c->id);
        req.mutable_write()->set_seen_version(c->seen_version);
        req.mutable_write()->set_have_version(state == kStateS ? c->version : kNoVersion);
        if (state == kStateS) {
          upgrades_++;
          c->stats.upgrades++;
        }
        c->outstanding = djava_sos_chunk::Asked::kWrite;
      } else {
        req.mutable_read()->set_id(c->id);
        req.mutable_read()->set_seen_version(c->seen_version);
        c->outstanding = djava_sos_chunk::Asked::kRead;
      }
      misses_++;
      c->stats.misses++;
      Home& home = HomeOf(c->id);
      if (!SendRequest(home, &req)) {
        c->outstanding = djava_sos_chunk::Asked::kNone;
        return Fail(error, DJAVA_SOS_DISCONNECTED, "chunk 0x%016" PRIx64 ": %s", c->id,
                    broken_ ? broken_why_.c_str() : home.main->error().c_str());
      }
    }
    const uint64_t generation = c->generation;
    // The answer usually comes within a round trip: yielding for it first
    // saves the futex wake-up that would otherwise add a third to a miss
    // (docs/SOS.md, Benchmarks); a thread that yields gives its CPU to any
    // runnable thread, so the wait costs others little.
    l.unlock();
    for (int i = 0; i < kYieldsBeforeSleep &&
                    c->generation.load(std::memory_order_acquire) == generation;
         i++)
      sched_yield();
    l.lock();
    c->cv.wait(l, [&] { return c->generation != generation || broken_; });
    if (c->generation != generation && c->answer_status != DJAVA_SOS_OK && c->stash == nullptr)
      return Fail(error, c->answer_status, "%s", c->answer_message.c_str());
  }
}

bool Client::Install(djava_sos_chunk* c, std::unique_lock<std::mutex>& l, djava_sos_error* error) {
  c->installing = true;
  // Taken out: the JVM's callback runs without the mutex, and a grant that
  // arrives meanwhile (one moved here with its lock, or answering a request
  // such a move crossed) becomes the next stash instead of replacing this
  // one under the callback's feet.
  std::unique_ptr<djava_sos_chunk::Stash> taken = std::move(c->stash);
  const djava_sos_chunk::Stash& s = *taken;
  uint64_t state = c->word.load() & kStateMask;
  if (s.has_data) {
    // Readers of the old copy finish before its bytes change.
    SetState(c, state, true);
    c->cv.wait(l, [&] { return Pins(c->word.load()) == 0; });
  } else if (state != kStateS || s.version != c->version + 1) {
    // An upgrade without bytes is only valid on top of the current read copy.
    c->installing = false;
    StashDone(taken.get());
    SetState(c, state, c->revoke.active);
    c->cv.notify_all();
    Fail(error, DJAVA_SOS_PROTOCOL,
         "chunk 0x%016" PRIx64 ": the server granted write access without bytes to a node "
         "without the current copy",
         c->id);
    return false;
  }
  if (s.has_data) {
    djava_sos_meta meta{};
    const ClassInfo* info = classes_.Get(s.class_local);
    meta.class_name = info != nullptr ? info->name.c_str() : nullptr;
    meta.program = info != nullptr ? info->program : 0;
    meta.element_type = info != nullptr ? info->element_type : 0;
    meta.array_length = s.array_length;
    meta.identity_hash = s.identity_hash;
    if (have_callbacks_) {
      char why[256] = "";
      l.unlock();
      int rc = callbacks_.install(callbacks_.context, c, c->id, &meta, s.data.data(),
                                  s.data.size(), why, sizeof why);
      l.lock();
      if (rc != 0) {
        // The stash stays: the server counts this node as holding the chunk,
        // and a flush can still be answered from it (unless a newer grant
        // arrived meanwhile, which is what the server counts now).
        if (c->stash == nullptr)
          c->stash = std::move(taken);
        else
          StashDone(taken.get());
        c->installing = false;
        SetState(c, state, c->revoke.active);
        c->cv.notify_all();
        Fail(error, DJAVA_SOS_INSTALL_FAILED, "chunk 0x%016" PRIx64 ": %s", c->id, why);
        return false;
      }
    } else {
      if (c->bytes == nullptr || c->size != s.data.size())
        c->bytes.reset(new char[s.data.empty() ? 1 : s.data.size()]);
      std::memcpy(c->bytes.get(), s.data.data(), s.data.size());
    }
    c->size = s.data.size();
    c->class_local = s.class_local;
    c->meta = meta;
    c->has_meta = true;
  }
  c->version = s.version;
  // A clean grant a flush has turned into a read copy since (the stash
  // kept for keep_shared) is no longer this node's to write.
  c->clean = s.access == sospb::EXCLUSIVE && s.clean;
  state = s.access == sospb::EXCLUSIVE && !c->clean ? kStateM : kStateS;
  StashDone(taken.get());  // the JVM has made objects for the ids it named
  c->installing = false;
  SetState(c, state, c->revoke.active);
  c->cv.notify_all();
  return true;
}

size_t Client::Produce(djava_sos_chunk* c, std::string* data) {
  // The last known size is the first guess; a grown encoding asks again.
  data->resize(c->size);
  size_t size = callbacks_.produce(callbacks_.context, c, c->id, data->empty() ? nullptr : &(*data)[0],
                                   data->size());
  while (size > data->size() && size != DJAVA_SOS_PRODUCE_LATER) {
    data->resize(size);
    size = callbacks_.produce(callbacks_.context, c, c->id, &(*data)[0], data->size());
  }
  if (size != DJAVA_SOS_PRODUCE_LATER) data->resize(size);
  return size;
}

void Client::SlowRelease(djava_sos_chunk* c) {
  // A JVM calls this from threads that must not wait for long (in Java or
  // VM state a thread holds up every safepoint), while the mutex's holder
  // may be a flush whose produce callback waits for a safepoint to end. So
  // when another thread holds the chunk, the retry thread finishes the
  // release: a revocation that waited for it runs there.
  std::unique_lock<std::mutex> l(c->mu, std::try_to_lock);
  if (!l.owns_lock()) {
    FinishReleaseLater(c);
    return;
  }
  MaybeRevoke(c);
  c->cv.notify_all();
}

void Client::FinishReleaseLater(djava_sos_chunk* c) {
  releases_handed_off_++;
  std::lock_guard<std::mutex> l(retry_mu_);
  if (retry_stopping_) return;  // leaving: the server gives up on the node
  releases_to_finish_.push_back(c);
  if (!retrier_.joinable()) retrier_ = std::thread([this] { RetryLoop(); });
  retry_cv_.notify_one();
}

void Client::MaybeRevoke(djava_sos_chunk* c, bool along) {
  // A deferred revocation waits for the retry thread to block the chunk
  // again: until then accesses may start at any moment.
  if (!c->revoke.active || c->revoke.deferred || c->installing || Pins(c->word.load()) != 0) return;
  // A grant some thread waits for is used once before it is taken back.
  if (c->stash != nullptr && c->waiters > 0) return;
  PerformRevoke(c, along);
}

void Client::PerformRevoke(djava_sos_chunk* c, bool along) {
  const djava_sos_chunk::Revoke r = c->revoke;
  c->revoke = djava_sos_chunk::Revoke();
  const uint32_t stash_class = c->stash != nullptr ? c->stash->class_local : 0;
  uint64_t state = c->word.load() & kStateMask;
  sospb::BypassMessage m;
  sospb::Chunk* described = nullptr;  // its class, described when sent
  uint32_t class_local = 0;
  uint64_t flush_epoch = 0;
  if (!r.flush) {
    if (c->stash != nullptr && c->stash->access == sospb::SHARED) ResetStash(c);
    if (state == kStateS) state = kStateI;
    invalidations_++;
    c->stats.invalidations++;
    m.mutable_invalidate_ack()->set_id(c->id);
    m.mutable_invalidate_ack()->set_txn(r.txn);
  } else {
    sospb::FlushReply* fr = m.mutable_flush_reply();
    fr->set_id(c->id);
    fr->set_txn(r.txn);
    const bool stash_m = c->stash != nullptr && c->stash->access == sospb::EXCLUSIVE;
    if (state == kStateS && c->clean && !stash_m) {
      // A clean grant never written: nothing to send, the home copy is
      // current (the server knows the grant was clean).
      state = r.keep_shared ? kStateS : kStateI;
      c->clean = false;
    } else if (state == kStateM || stash_m) {
      // Before the bytes are read: a release this node decides after this
      // point may concern an id they name, and must reach the server after
      // them (AwaitFlushesBegunBefore).
      flush_epoch = FlushBegins();
      sospb::Chunk* ch = fr->mutable_chunk();
      ch->set_id(c->id);
      std::string* data = ch->mutable_data();
      if (state == kStateM || (stash_m && !c->stash->has_data)) {
        // The installed bytes are current (for an uninstalled upgrade, the
        // read copy it upgrades).
        described = ch;
        class_local = c->class_local;
        if (!CopyOut(c, ch)) {
          FlushSent(flush_epoch);
          c->revoke = r;
          DeferRevoke(c);
          return;
        }
        if (along && state == kStateM) SendAlong(c, ch->refs(), fr->mutable_along());
      } else {
        described = ch;
        class_local = c->stash->class_local;
        CopyOutStash(*c->stash, ch);
        fr->set_unused(true);  // no access installed it
      }
      ch->set_version(c->version);
      fr->set_present(true);
      bytes_out_ += data->size();
      flushes_++;
      c->stats.bytes_out += data->size();
      c->stats.flushes++;
      if (state == kStateM) {
        state = r.keep_shared ? kStateS : kStateI;
      } else if (stash_m && (!r.keep_shared || c->stash->has_data)) {
        // The read copy installed before the stash is not what the server
        // counts now: it had this node as the stash's owner, and a flush
        // that leaves no copy leaves none, or one that keeps a copy keeps
        // the stash's bytes (installed by the next access). Kept as S, it
        // would be read long after the next writer's invalidations passed
        // this node by (a lost wake-up in a shared lock's Dekker check).
        state = kStateI;
      }
      if (stash_m) {
        if (r.keep_shared) {
          c->stash->access = sospb::SHARED;
          c->stash->clean = false;
        }
        else
          ResetStash(c);
      }
    } else if (!r.keep_shared) {
      // Nothing to send (a flush asked before the server saw this node's
      // write-back, which is ahead of this reply on the bypass and serves as
      // its reply, so the server ignores this one). After this flush the
      // server lists this node as no sharer: a copy kept here would never
      // be invalidated again.
      state = kStateI;
    }
  }
  {
    // A class goes in full in the first message that uses it, its number in
    // later ones: describing and sending are one step, or a later message
    // (another chunk's flush, on another thread) could overtake the one with
    // the descriptor, and the server would meet a number never defined.
    Home& home = HomeOf(c->id);
    std::lock_guard<std::mutex> l(home.bypass_send_mu);
    if (described != nullptr) classes_.Describe(home.index, class_local, described);
    // A failed send means the server is gone; the receiver reports that.
    SendBypass(home, m);
  }
  if (flush_epoch != 0) FlushSent(flush_epoch);
  SetState(c, state, false);
  c->cv.notify_all();
  // A grant moved here with its lock went back unused: if nothing here
  // names the id, the handle goes as an unreferenced one does (or with its
  // program, should that end first).
  if (stash_class != 0 && c->stash == nullptr && !c->has_meta) {
    c->unused_grant_class = stash_class;
    if (c->user.load() == 0 && c->pending_refs.load() == 0) Unreferenced(c);
  }
}

// ---- the receiver ------------------------------------------------------------------

void Client::ReceiverLoop(Home* home) {
  if (have_callbacks_ && callbacks_.thread_started != nullptr)
    callbacks_.thread_started(callbacks_.context, "djava sos receiver");
  sospb::ServerMessage m;
  std::string why;
  while (why.empty() && home->main->Receive(&m)) {
    FreeForgotten();  // this thread holds no handle between messages
    std::shared_lock<std::shared_mutex> hold(handles_mu_);
    received_by_kind_.Count(m.body_case());
    switch (m.body_case()) {
      case sospb::ServerMessage::kGrant:
        OnGrant(home, m);
        break;
      case sospb::ServerMessage::kInvalidate:
        OnRevoke(m.invalidate().id(), m.invalidate().txn(), false, false);
        break;
      case sospb::ServerMessage::kFlush:
        OnRevoke(m.flush().id(), m.flush().txn(), true, m.flush().keep_shared());
        break;
      case sospb::ServerMessage::kError:
        OnError(m);
        break;
      case sospb::ServerMessage::kFreed:
        OnFreed(m);
        break;
      case sospb::ServerMessage::kDeclined:
        OnDeclined(m);
        break;
      case sospb::ServerMessage::kWrittenBack:
        OnWrittenBack(m);
        break;
      case sospb::ServerMessage::kOkToDie: {
        std::lock_guard<std::mutex> l(mu_);
        home->ok_to_die = true;
        cv_.notify_all();
        break;
      }
      default:
        why = "the server sent an unexpected message";
    }
  }
  if (why.empty()) why = home->main->error();
  Disconnected("lost the connection to " + home->name + ": " + why);
  if (have_callbacks_ && callbacks_.thread_ending != nullptr)
    callbacks_.thread_ending(callbacks_.context);
}

void Client::OnGrant(Home* home, const sospb::ServerMessage& m) {
  const sospb::Chunk& ch = m.grant().chunk();
  djava_sos_chunk* c = ChunkFor(ch.id());
  if (c == nullptr) return;
  uint32_t class_local = 0;
  if (m.grant().has_data() && !classes_.Resolve(home->index, ch, &class_local)) {
    home->main->Shutdown();  // the receiver then reports the broken stream
    return;
  }
  auto stash = std::make_unique<djava_sos_chunk::Stash>();
  stash->access = m.grant().access();
  stash->version = ch.version();
  stash->has_data = m.grant().has_data();
  stash->clean = stash->access == sospb::EXCLUSIVE && m.grant().clean();
  stash->data = ch.data();
  stash->class_local = class_local;
  stash->array_length = ch.array_length();
  stash->identity_hash = ch.identity_hash();
  // Counted as the server counted them when it sent the grant (this thread
  // holds handles_mu_, so none of these handles is released meanwhile).
  stash->refs.assign(ch.refs().begin(), ch.refs().end());
  stash->ref_handles.reserve(stash->refs.size());
  for (uint64_t ref : stash->refs) {
    djava_sos_chunk* r = ChunkFor(ref);
    if (r == nullptr) continue;
    // Each shard counts the refs at home there (Directory::ShipRefs), and
    // the release goes home.
    if (&HomeOf(ref) == home) r->shipments.fetch_add(1);
    r->pending_refs.fetch_add(1);
    stash->ref_handles.push_back(r);
  }
  bytes_in_ += ch.data().size();
  std::lock_guard<std::mutex> l(c->mu);
  c->seen_version = std::max(c->seen_version, ch.version());
  c->shipments.fetch_add(1);
  c->stats.bytes_in += ch.data().size();
  ResetStash(c);  // none is expected: the server grants a chunk once per request
  if (stash->access == sospb::EXCLUSIVE) NoteExclusive(c->id);
  c->stash = std::move(stash);
  const bool unasked = c->outstanding == djava_sos_chunk::Asked::kNone;
  c->outstanding = djava_sos_chunk::Asked::kNone;
  c->answer_status = DJAVA_SOS_OK;
  c->generation++;
  c->cv.notify_all();
  // Moved here unasked after its program's handles went: nobody waits to
  // install it.
  if (unasked && c->user.load() == 0 && c->pending_refs.load() == 0 &&
      ProgramHasEnded(ProgramOf(c)))
    Unreferenced(c);
}

// Blocks the chunk for a revocation and carries it out once no access is in
// progress (at once, or by the release of the last access).
void Client::ArmRevoke(djava_sos_chunk* c) {
  c->revoke.deferred = false;
  uint64_t before = c->word.fetch_or(kBlocked);
  // Writers that announce themselves instead of pinning may be storing
  // into the copy right now: they finish before the bytes are read.
  if ((before & kStateMask) == kStateM && have_callbacks_ &&
      callbacks_.quiesce_writers != nullptr) {
    callbacks_.quiesce_writers(callbacks_.context, djava_sos_word(c));
  }
  MaybeRevoke(c, /*along=*/true);  // both callers hold handles_mu_ shared
}

void Client::SendAlong(djava_sos_chunk* c, const google::protobuf::RepeatedField<uint64_t>& refs,
                       google::protobuf::RepeatedField<uint64_t>* along) {
  const uint64_t program = ProgramOf(c);
  if (program == 0) return;
  const size_t home = HomeShard(c->id, homes_.size());
  // Breadth first from the flushed chunk's refs, two levels deep (a queue's
  // node, then the element it holds).
  std::vector<uint64_t> next(refs.begin(), refs.end());
  for (int depth = 0; depth < 2 && !next.empty() && static_cast<size_t>(along->size()) < kAlong;
       depth++) {
    std::vector<uint64_t> level;
    level.swap(next);
    for (uint64_t id : level) {
      if (static_cast<size_t>(along->size()) >= kAlong) break;
      if (id == c->id || IsNamed(id) || HomeShard(id, homes_.size()) != home ||
          std::find(along->begin(), along->end(), id) != along->end())
        continue;
      djava_sos_chunk* a = Find(id);
      // Made here and never granted to anyone (version 0): nobody else has
      // it. A chunk the JVM has not linked to its object yet (user 0) has no
      // bytes to produce. WriteBack checks the rest without waiting.
      if (a == nullptr || (have_callbacks_ && a->user.load() == 0)) continue;
      {
        std::unique_lock<std::mutex> al(a->mu, std::try_to_lock);
        if (!al.owns_lock() || a->version != 0) continue;
      }
      // One the JVM cannot produce yet (published a moment ago, its fence
      // not done) is named now and written home later: the flushed chunk's
      // bytes are produced already, and its replica no longer pinned here,
      // so the reply cannot wait for it.
      std::vector<uint64_t> its_refs;
      bool later = false;
      if (WriteBack(a, /*drop=*/true, program, &its_refs, &later) != DJAVA_SOS_OK) {
        if (!later) continue;
        along->Add(id);
        std::lock_guard<std::mutex> l(retry_mu_);
        if (retry_stopping_) continue;
        along_later_.push_back(AlongLater{id, program, 0});
        if (!retrier_.joinable()) retrier_ = std::thread([this] { RetryLoop(); });
        retry_cv_.notify_one();
        continue;
      }
      along->Add(id);
      next.insert(next.end(), its_refs.begin(), its_refs.end());
    }
  }
}

// The JVM cannot produce the bytes yet: the chunk goes back to work
// (unblocked, in its state) and the retry thread tries again.
void Client::DeferRevoke(djava_sos_chunk* c) {
  c->revoke.deferred = true;
  deferred_revokes_++;
  c->stats.deferred_flushes++;
  SetState(c, c->word.load() & kStateMask, false);
  c->cv.notify_all();
  std::lock_guard<std::mutex> l(retry_mu_);
  if (retry_stopping_) return;  // leaving: the server gives up on the node
  deferred_.push_back(c);
  if (!retrier_.joinable()) retrier_ = std::thread([this] { RetryLoop(); });
  retry_cv_.notify_one();
}

void Client::RetryLoop() {
  if (have_callbacks_ && callbacks_.thread_started != nullptr)
    callbacks_.thread_started(callbacks_.context, "djava sos retry");
  // Waits from 1 ms up to 64 ms while retries keep failing: what the JVM
  // waits for (another thread leaving synchronized code) usually takes
  // microseconds, but may take long, and each retry blocks the chunk.
  auto delay = std::chrono::milliseconds(1);
  std::unique_lock<std::mutex> l(retry_mu_);
  auto release_due = std::chrono::steady_clock::time_point::max();
  // The last release pass left candidates it could not take yet: the next
  // waits for release_due however many there are, or a full list would
  // keep this thread releasing and never retrying a deferred flush.
  bool release_stalled = false;
  auto batch_full = [this, &release_stalled] {
    return !release_stalled &&
           release_candidates_.size() + to_release_.size() >= kReleaseBatchNow;
  };
  while (!retry_stopping_) {
    // Emptied by others too (FreeForgotten takes freed handles off): a
    // deadline left behind would have this thread wait for it, past, in a
    // loop (both cores busy in a 2-thread-server run).
    if (release_candidates_.empty() && to_release_.empty())
      release_due = std::chrono::steady_clock::time_point::max();
    if (!release_candidates_.empty() || !to_release_.empty()) {
      const auto now = std::chrono::steady_clock::now();
      if (release_due == std::chrono::steady_clock::time_point::max())
        release_due = now + kReleaseBatchDelay;
      if (now >= release_due || batch_full()) {
        l.unlock();
        const bool done = ReleaseUnreferenced();
        l.lock();
        release_pass_cv_.notify_all();
        release_stalled = !done;
        // A busy lock: try again after another batch delay.
        release_due = done && release_candidates_.empty() && to_release_.empty()
                          ? std::chrono::steady_clock::time_point::max()
                          : std::chrono::steady_clock::now() + kReleaseBatchDelay;
        continue;
      }
    }
    if (!releases_to_finish_.empty()) {
      // Held before the handles leave the list: a forgotten one is freed
      // only while nobody holds handles_mu_, and taken off the lists then.
      l.unlock();
      std::shared_lock<std::shared_mutex> hold(handles_mu_);
      l.lock();
      std::vector<djava_sos_chunk*> ended;
      ended.swap(releases_to_finish_);
      l.unlock();
      {
        for (djava_sos_chunk* c : ended) {
          std::lock_guard<std::mutex> cl(c->mu);
          MaybeRevoke(c);
          c->cv.notify_all();
        }
      }
      hold.unlock();
      l.lock();
      continue;
    }
    if (deferred_.empty() && along_later_.empty()) {
      delay = std::chrono::milliseconds(1);
      auto wake = [this, &batch_full] {
        return retry_stopping_ || !deferred_.empty() || !along_later_.empty() ||
               !releases_to_finish_.empty() || batch_full();
      };
      if (release_due == std::chrono::steady_clock::time_point::max()) {
        retry_cv_.wait(l, [&] { return wake() || !release_candidates_.empty() || !to_release_.empty(); });
      } else {
        retry_cv_.wait_until(l, release_due, wake);
      }
      continue;
    }
    const bool woken = retry_cv_.wait_for(l, std::min<std::chrono::steady_clock::duration>(
                                                  delay, release_due - std::chrono::steady_clock::now()),
                                          [this] {
      return retry_stopping_ || retry_now_ || !releases_to_finish_.empty();
    });
    if (retry_stopping_) break;
    if (woken && !retry_now_) continue;  // a release to finish first; the back-off starts over
    if (retry_now_) delay = std::chrono::milliseconds(1);
    retry_now_ = false;
    l.unlock();
    std::shared_lock<std::shared_mutex> hold(handles_mu_);  // as above
    l.lock();
    std::vector<djava_sos_chunk*> due;
    due.swap(deferred_);
    std::vector<AlongLater> along_due;
    along_due.swap(along_later_);
    l.unlock();
    {
      for (djava_sos_chunk* c : due) {
        std::lock_guard<std::mutex> cl(c->mu);
        if (c->revoke.active && c->revoke.deferred && !broken_) ArmRevoke(c);
      }
    }
    std::vector<AlongLater> along_again;
    for (AlongLater& a : along_due) {
      djava_sos_chunk* c = Find(a.id);
      bool later = false;
      if (c == nullptr || broken_ ||
          WriteBack(c, /*drop=*/true, a.program, nullptr, &later) == DJAVA_SOS_OK || !later)
        continue;  // gone home, or taken meanwhile: the directory's push finds it so
      if (++a.tries < kAlongTries) along_again.push_back(a);
    }
    hold.unlock();
    l.lock();
    along_later_.insert(along_later_.end(), along_again.begin(), along_again.end());
    if (!deferred_.empty() || !along_later_.empty())
      delay = std::min(delay * 2, std::chrono::milliseconds(64));
  }
  l.unlock();
  if (have_callbacks_ && callbacks_.thread_ending != nullptr)
    callbacks_.thread_ending(callbacks_.context);
}

void Client::RetryDeferredNow() {
  // Kept even with nothing deferred: a produce that said LATER just before
  // may not have queued its chunk yet.
  std::lock_guard<std::mutex> l(retry_mu_);
  retry_now_ = true;
  retry_cv_.notify_one();
}

void Client::StopRetrying() {
  {
    std::lock_guard<std::mutex> l(retry_mu_);
    retry_stopping_ = true;
    retry_cv_.notify_all();
  }
  if (retrier_.joinable()) retrier_.join();
}

void Client::AnswerWithNothing(uint64_t id, uint64_t txn, bool flush) {
  // An invalidate is trivially done; a flush finds no copy.
  sospb::BypassMessage m;
  if (flush) {
    m.mutable_flush_reply()->set_id(id);
    m.mutable_flush_reply()->set_txn(txn);
  } else {
    m.mutable_invalidate_ack()->set_id(id);
    m.mutable_invalidate_ack()->set_txn(txn);
  }
  Home& home = HomeOf(id);
  std::lock_guard<std::mutex> l(home.bypass_send_mu);
  SendBypass(home, m);
}

void Client::AnswerPendingRevokeWithNothing(djava_sos_chunk* c) {
  if (!c->revoke.active) return;
  const djava_sos_chunk::Revoke r = c->revoke;
  c->revoke = djava_sos_chunk::Revoke();
  AnswerWithNothing(c->id, r.txn, r.flush);
}

void Client::OnRevoke(uint64_t id, uint64_t txn, bool flush, bool keep_shared) {
  djava_sos_chunk* c = Find(id);
  if (c == nullptr) {
    AnswerWithNothing(id, txn, flush);
    return;
  }
  std::lock_guard<std::mutex> l(c->mu);
  c->revoke.active = true;
  c->revoke.flush = flush;
  c->revoke.keep_shared = keep_shared;
  c->revoke.txn = txn;
  ArmRevoke(c);
}

void Client::OnError(const sospb::ServerMessage& m) {
  djava_sos_chunk* c = Find(m.error().id());
  if (c == nullptr) return;
  std::lock_guard<std::mutex> l(c->mu);
  c->outstanding = djava_sos_chunk::Asked::kNone;
  c->answer_status = FromWire(m.error().code());
  c->answer_message = m.error().message();
  c->generation++;
  c->cv.notify_all();
}

void Client::OnDeclined(const sospb::ServerMessage& m) {
  // Nothing granted: an access waiting for the prefetch asks for itself.
  djava_sos_chunk* c = Find(m.declined().id());
  if (c == nullptr) return;
  std::lock_guard<std::mutex> l(c->mu);
  c->outstanding = djava_sos_chunk::Asked::kNone;
  c->answer_status = DJAVA_SOS_OK;
  c->generation++;
  c->cv.notify_all();
}

void Client::OnFreed(const sospb::ServerMessage& m) {
  djava_sos_chunk* c = Find(m.freed().id());
  if (c == nullptr) return;
  std::lock_guard<std::mutex> l(c->mu);
  c->outstanding = djava_sos_chunk::Asked::kNone;
  c->answer_status = DJAVA_SOS_OK;
  c->freed = true;
  ResetStash(c);
  SetState(c, kStateI, false);
  c->generation++;
  c->cv.notify_all();
}

bool Client::Lost(std::string* why) const {
  if (!broken_) return false;
  std::lock_guard<std::mutex> l(mu_);
  *why = broken_why_;
  return true;
}

void Client::Disconnected(const std::string& why) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (broken_) return;
    broken_why_ = why;
    broken_ = true;
    cv_.notify_all();
  }
  // Cached copies can no longer be kept coherent: every access fails from
  // now on rather than read bytes the server may have revoked.
  std::shared_lock<std::shared_mutex> hold(handles_mu_);
  for (djava_sos_chunk* c : AllChunks()) {
    std::lock_guard<std::mutex> cl(c->mu);
    c->word.fetch_or(kBlocked);
    c->generation++;
    c->answer_status = DJAVA_SOS_DISCONNECTED;
    c->answer_message = why;
    c->cv.notify_all();
  }
}

// ---- prefetch, free, stats ------------------------------------------------------------

djava_sos_status Client::Prefetch(const uint64_t* ids, size_t n, bool exclusive,
                                  bool first_writes, size_t at_least, djava_sos_error* error) {
  // Nothing to ask: the access is here, asked for or arrived already. Nor
  // ahead of this node's own write-back, which it could overtake (Access
  // waits for its answer; the access asks then). With c->mu held.
  auto to_ask = [exclusive](const djava_sos_chunk* c) {
    const uint64_t state = c->word.load() & kStateMask;
    return !(state == kStateM || (!exclusive && state == kStateS) || c->clean ||
             c->stash != nullptr || c->installing ||
             c->outstanding != djava_sos_chunk::Asked::kNone || c->freed || c->revoke.active ||
             c->write_back_pending);
  };
  std::shared_lock<std::shared_mutex> hold(handles_mu_);
  if (at_least > 1) {
    // A window's refill: one frame for a batch, not one for each chunk the
    // scan's accesses leave behind them.
    size_t count = 0;
    bool first = false;
    for (size_t i = 0; i < n; i++) {
      djava_sos_chunk* c = ChunkFor(ids[i]);
      if (c == nullptr) continue;
      std::lock_guard<std::mutex> l(c->mu);
      if (!to_ask(c)) continue;
      count++;
      if (i == 0) first = true;
    }
    if (!first && count < at_least) return DJAVA_SOS_OK;
  }
  // One request per shard, each naming the chunks at home there.
  std::vector<sospb::NodeRequest> reqs(homes_.size());
  for (sospb::NodeRequest& req : reqs) {
    req.set_seq(next_seq_++);
    req.mutable_prefetch()->set_exclusive(exclusive);
    req.mutable_prefetch()->set_first_writes(exclusive && first_writes);
  }
  for (size_t i = 0; i < n; i++) {
    djava_sos_chunk* c = ChunkFor(ids[i]);
    if (c == nullptr) continue;
    std::lock_guard<std::mutex> l(c->mu);
    const uint64_t state = c->word.load() & kStateMask;
    if (!to_ask(c)) continue;
    c->outstanding = exclusive ? djava_sos_chunk::Asked::kWrite : djava_sos_chunk::Asked::kRead;
    c->stats.misses++;
    sospb::Prefetch* p = reqs[HomeOf(ids[i]).index].mutable_prefetch();
    p->add_ids(ids[i]);
    p->add_seen_versions(c->seen_version);
    if (exclusive) {
      // An upgrade when this node holds a read copy, as Access's write asks.
      p->add_have_versions(state == kStateS ? c->version : kNoVersion);
      if (state == kStateS) {
        upgrades_++;
        c->stats.upgrades++;
      }
    }
  }
  for (size_t h = 0; h < homes_.size(); h++) {
    if (reqs[h].prefetch().ids_size() == 0) continue;
    misses_ += static_cast<uint64_t>(reqs[h].prefetch().ids_size());
    if (!SendRequest(*homes_[h], &reqs[h]))
      return Fail(error, DJAVA_SOS_DISCONNECTED, "prefetch: %s",
                  broken_ ? broken_why_.c_str() : homes_[h]->main->error().c_str());
  }
  return DJAVA_SOS_OK;
}

djava_sos_status Client::Free(djava_sos_chunk* c, djava_sos_error* error) {
  std::unique_lock<std::mutex> l(c->mu);
  c->cv.wait(l, [&] { return c->outstanding == djava_sos_chunk::Asked::kNone || broken_; });
  if (broken_)
    return Fail(error, DJAVA_SOS_DISCONNECTED, "chunk 0x%016" PRIx64 ": %s", c->id,
                broken_why_.c_str());
  if (c->freed) return DJAVA_SOS_OK;
  sospb::NodeRequest req;
  req.set_seq(next_seq_++);
  req.mutable_free()->set_id(c->id);
  c->outstanding = djava_sos_chunk::Asked::kFree;
  Home& home = HomeOf(c->id);
  if (!SendRequest(home, &req)) {
    c->outstanding = djava_sos_chunk::Asked::kNone;
    return Fail(error, DJAVA_SOS_DISCONNECTED, "chunk 0x%016" PRIx64 ": %s", c->id,
                home.main->error().c_str());
  }
  const uint64_t generation = c->generation;
  c->cv.wait(l, [&] { return c->generation != generation || broken_; });
  if (c->freed) return DJAVA_SOS_OK;
  if (broken_)
    return Fail(error, DJAVA_SOS_DISCONNECTED, "chunk 0x%016" PRIx64 ": %s", c->id,
                broken_why_.c_str());
  return Fail(error, c->answer_status, "%s", c->answer_message.c_str());
}

void Client::Discard(djava_sos_chunk* c) {
  std::lock_guard<std::mutex> l(c->mu);
  c->freed = true;
  c->shipments.store(0);  // its id never left: the server never counted it
  SetState(c, kStateI, false);
  c->cv.notify_all();
}

djava_sos_status Client::DropCopy(djava_sos_chunk* c, uintptr_t orphan_user) {
  std::lock_guard<std::mutex> l(c->mu);
  // A new owner sets the user value before it first accesses the chunk,
  // which takes this mutex: read here, the value is current.
  if (c->user.load() != orphan_user) return DJAVA_SOS_IN_USE;
  const uint64_t w = c->word.load();
  if ((w & kStateMask) == kStateM) return DJAVA_SOS_IN_USE;
  if (c->clean) {
    // Never written here, so the home copy is current: it goes home
    // without bytes, and the load that follows waits for the answer. A
    // revocation or install under way settles the copy first.
    if (!c->installing && !c->revoke.active && !c->write_back_pending) GiveBackClean(c);
    return DJAVA_SOS_OK;
  }
  // Bytes being installed go into whatever object the JVM's install
  // callback finds for the chunk; a revocation under way finds the copy
  // invalid and acknowledges it.
  if ((w & kStateMask) == kStateS && !c->installing) SetState(c, kStateI, (w & kBlocked) != 0);
  // The bytes a write-back kept were the orphan's: the new object has none
  // to make readable when the server accepts it.
  c->read_copy_on_answer = false;
  return DJAVA_SOS_OK;
}

// ---- releasing what this node no longer holds ----------------------------------------

void Client::ResetStash(djava_sos_chunk* c) {
  if (c->stash == nullptr) return;
  StashDone(c->stash.get());
  c->stash.reset();
}

void Client::StashDone(djava_sos_chunk::Stash* s) {
  std::vector<djava_sos_chunk*> now_free;
  for (djava_sos_chunk* r : s->ref_handles) {
    // The JVM made an object for each id the bytes named (user set), or
    // none: then nothing here will learn of it from these bytes again.
    if (r->pending_refs.fetch_sub(1) == 1 && r->user.load() == 0) now_free.push_back(r);
  }
  s->ref_handles.clear();
  if (now_free.empty()) return;
  std::lock_guard<std::mutex> l(retry_mu_);
  if (retry_stopping_) return;
  release_candidates_.insert(release_candidates_.end(), now_free.begin(), now_free.end());
  if (!retrier_.joinable()) retrier_ = std::thread([this] { RetryLoop(); });
  retry_cv_.notify_one();
}

void Client::Unreferenced(djava_sos_chunk* c) {
  std::lock_guard<std::mutex> l(retry_mu_);
  if (retry_stopping_) return;  // leaving: the server forgets the node whole
  release_candidates_.push_back(c);
  if (!retrier_.joinable()) retrier_ = std::thread([this] { RetryLoop(); });
  if (release_candidates_.size() == 1 || release_candidates_.size() >= kReleaseBatchNow)
    retry_cv_.notify_one();
}

void Client::NoteExclusive(uint64_t id) {
  const uint64_t k = exclusive_count_.fetch_add(1, std::memory_order_relaxed);
  exclusive_log_[k % kExclusiveLog].store(id, std::memory_order_relaxed);
}

uint64_t Client::ExclusiveMark() {
  return exclusive_count_.load(std::memory_order_relaxed);
}

size_t Client::HandOver(uint64_t since, uint64_t program, bool jdk_only, uint64_t* out,
                        size_t max) {
  if (program == 0) return 0;
  std::vector<uint64_t> ids;
  {
    const uint64_t count = exclusive_count_.load(std::memory_order_relaxed);
    const uint64_t oldest = count > kExclusiveLog ? count - kExclusiveLog : 0;
    for (uint64_t k = count; k > std::max(since, oldest) && ids.size() < max; k--) {
      const uint64_t id = exclusive_log_[(k - 1) % kExclusiveLog].load(std::memory_order_relaxed);
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
  }
  size_t n = 0;
  // Never waits, as WriteBack with drop does not (the release goes without).
  std::shared_lock<std::shared_mutex> hold(handles_mu_, std::try_to_lock);
  if (!hold.owns_lock()) return 0;
  for (uint64_t id : ids) {
    djava_sos_chunk* c = Find(id);
    // Not idle in M (in use, taken away since, a revocation under way): it
    // stays, and the next holder asks for it as before. Nor one made here
    // that the JVM has not linked to its object yet (user 0: another
    // thread is publishing it right now): there are no bytes to produce
    // for it, and nobody else knows its id yet anyway.
    if (c == nullptr || (have_callbacks_ && c->user.load() == 0)) continue;
    // A synchronizer's release hands over only the JDK's objects (a queue's
    // own object and array, AQS's nodes): their final fields are read from
    // the replica (docs/HEAP.md, "kept finals"), so the releaser loses
    // nothing it reads outside the lock. A program's own object written
    // under the lock may be read so (t.lock.lock() reads final t.lock):
    // dropped here, that read would miss at once and pull it back, and the
    // two nodes would pass it to and fro; it moves with the grant instead.
    if (jdk_only && !IsJdkClass(c->class_local)) continue;
    if (HandOverClean(c, program) || WriteBack(c, /*drop=*/true, program) == DJAVA_SOS_OK)
      out[n++] = id;
  }
  handed_over_ += n;
  return n;
}

djava_sos_status Client::WriteBack(djava_sos_chunk* c, bool drop, uint64_t program,
                                   std::vector<uint64_t>* refs, bool* later) {
  // A hand-over (drop) runs where its thread must not wait: DsoMonitors::
  // exit is a leaf, in Java state, and holds up every safepoint, while the
  // mutex's holder may be a flush whose produce callback waits for a
  // safepoint to end (as in SlowRelease). A busy chunk stays, as one in use.
  std::unique_lock<std::mutex> l(c->mu, std::defer_lock);
  if (!drop) {
    l.lock();
  } else if (!l.try_lock()) {
    return DJAVA_SOS_IN_USE;
  }
  if (broken_) return DJAVA_SOS_DISCONNECTED;
  if ((c->word.load() & kStateMask) != kStateM || !Idle(c) || c->stash != nullptr ||
      c->write_back_pending || (program != 0 && ProgramOf(c) != program))
    return DJAVA_SOS_IN_USE;
  // As a flush does: no access may start, and writers that announce
  // themselves instead of pinning finish, before the bytes are read.
  c->word.fetch_or(kBlocked);
  if (have_callbacks_ && callbacks_.quiesce_writers != nullptr)
    callbacks_.quiesce_writers(callbacks_.context, djava_sos_word(c));
  if (Pins(c->word.load()) != 0) {
    SetState(c, kStateM, false);  // an access began meanwhile
    return DJAVA_SOS_IN_USE;
  }
  const uint64_t epoch = FlushBegins();
  sospb::BypassMessage m;
  sospb::Chunk* ch = m.mutable_write_back()->mutable_chunk();
  if (!CopyOut(c, ch)) {
    FlushSent(epoch);
    SetState(c, kStateM, false);
    if (later != nullptr) *later = true;
    return DJAVA_SOS_IN_USE;
  }
  if (refs != nullptr) refs->assign(ch->refs().begin(), ch->refs().end());
  // Until the server answers, this node must not ask for the chunk: a
  // request on the main connection could overtake the write-back on the
  // bypass (Access waits for write_back_pending).
  c->write_back_pending = true;
  if (drop) m.mutable_write_back()->set_drop(true);
  // Unreadable until the answer, even when the copy is kept: the server may
  // take the write-back for the reply to a flush crossing it and let
  // another node write before this node sees that flush.
  c->read_copy_on_answer = !drop;
  SetState(c, kStateI, false);
  c->cv.notify_all();
  bytes_out_ += ch->data().size();
  c->stats.bytes_out += ch->data().size();
  {
    Home& home = HomeOf(c->id);
    std::lock_guard<std::mutex> bl(home.bypass_send_mu);
    classes_.Describe(home.index, c->class_local, ch);
    SendBypass(home, m);
  }
  FlushSent(epoch);
  written_back_++;
  return DJAVA_SOS_OK;
}

void Client::GiveBackClean(djava_sos_chunk* c) {
  if (broken_) return;
  sospb::BypassMessage m;
  sospb::WriteBack* wb = m.mutable_write_back();
  wb->mutable_chunk()->set_id(c->id);
  wb->set_drop(true);
  wb->set_clean(true);
  // As for any write-back: no request for the chunk until the answer.
  c->write_back_pending = true;
  SetState(c, kStateI, false);
  c->cv.notify_all();
  Home& home = HomeOf(c->id);
  std::lock_guard<std::mutex> bl(home.bypass_send_mu);
  SendBypass(home, m);
  given_back_clean_++;
}

bool Client::HandOverClean(djava_sos_chunk* c, uint64_t program) {
  // A lock's data granted here clean and only read under the lock (a
  // woken waiter's re-check): home's copy is current, so it goes home
  // without bytes and the release names it. Left here, the directory
  // still takes this node for its owner, and moving it to the next holder
  // would cost a flush of this node on the hand-off's critical path.
  std::unique_lock<std::mutex> l(c->mu, std::try_to_lock);
  if (!l.owns_lock() || broken_ || !c->clean || c->stash != nullptr || c->write_back_pending ||
      (c->word.load() & kStateMask) != kStateS || !Idle(c) ||
      (program != 0 && ProgramOf(c) != program))
    return false;
  GiveBackClean(c);
  return true;
}

bool Client::GiveBackStash(djava_sos_chunk* c) {
  djava_sos_chunk::Stash* s = c->stash.get();
  if (broken_) return false;
  if (s->access == sospb::SHARED) {
    // A read copy: home has the same bytes. The release says it went.
    ResetStash(c);
    SetState(c, kStateI, false);
    return true;
  }
  if (s->clean) {
    // Never written since home granted it: home's copy is current.
    ResetStash(c);
    GiveBackClean(c);
    return true;
  }
  // An upgrade without bytes makes the installed read copy current, and
  // only an object here could produce it: none names it, so it stays until
  // the server asks (a flush answers from the copy).
  if (!s->has_data) return false;
  // The stash holds the current bytes: written back, dropped, as a lock's
  // release does (a request for the chunk waits for the answer).
  const uint64_t epoch = FlushBegins();
  sospb::BypassMessage m;
  sospb::WriteBack* wb = m.mutable_write_back();
  sospb::Chunk* ch = wb->mutable_chunk();
  ch->set_id(c->id);
  ch->set_version(c->version);
  CopyOutStash(*s, ch);
  wb->set_drop(true);
  const uint32_t class_local = s->class_local;
  bytes_out_ += s->data.size();
  c->stats.bytes_out += s->data.size();
  c->write_back_pending = true;
  ResetStash(c);
  SetState(c, kStateI, false);
  c->cv.notify_all();
  {
    Home& home = HomeOf(c->id);
    std::lock_guard<std::mutex> bl(home.bypass_send_mu);
    classes_.Describe(home.index, class_local, ch);
    SendBypass(home, m);
  }
  FlushSent(epoch);
  written_back_++;
  return true;
}

void Client::CopyOutStash(const djava_sos_chunk::Stash& s, sospb::Chunk* ch) {
  ch->set_array_length(s.array_length);
  ch->set_identity_hash(s.identity_hash);
  *ch->mutable_data() = s.data;
  for (uint64_t ref : s.refs) ch->add_refs(ref);
}

bool Client::CopyOut(djava_sos_chunk* c, sospb::Chunk* ch) {
  ch->set_id(c->id);
  ch->set_array_length(c->meta.array_length);
  ch->set_identity_hash(c->meta.identity_hash);
  ch->set_version(c->version);
  std::string* data = ch->mutable_data();
  if (!have_callbacks_) {
    data->resize(c->size);
    if (c->size > 0) std::memcpy(&(*data)[0], c->bytes.get(), c->size);
    return true;
  }
  produced_.chunk = nullptr;
  const size_t size = Produce(c, data);
  if (size == DJAVA_SOS_PRODUCE_LATER) return false;
  c->size = size;
  if (produced_.chunk == c) {
    for (uint64_t ref : produced_.refs) ch->add_refs(ref);
    for (size_t i = 0; i < produced_.run_heads.size(); i++) {
      ch->add_run_heads(produced_.run_heads[i]);
      ch->add_run_blocks(produced_.run_blocks[i]);
    }
  }
  produced_.chunk = nullptr;
  return true;
}

void Client::OnWrittenBack(const sospb::ServerMessage& m) {
  djava_sos_chunk* c = Find(m.written_back().id());
  if (c == nullptr) return;
  std::lock_guard<std::mutex> l(c->mu);
  // Accepted: the copy here is current at home, and the server lists this
  // node as a sharer. Superseded: a flush crossing it was answered with the
  // same bytes, and another node may have written since; the copy stays
  // unreadable (a flush that kept it shared lists this node as a sharer of
  // nothing: its invalidations are answered at once).
  c->write_back_pending = false;
  if (c->read_copy_on_answer) {
    c->read_copy_on_answer = false;
    if (m.written_back().accepted() && (c->word.load() & kStateMask) == kStateI &&
        !c->revoke.active && c->stash == nullptr && !c->installing && !c->freed)
      SetState(c, kStateS, false);
  }
  c->cv.notify_all();
}

void Client::Unretain(djava_sos_chunk* c) {
  if (c->retained.fetch_sub(1) == 1 && c->user.load() == 0) Unreferenced(c);
}

void Client::TakeChunkStats(djava_sos_chunk* c, djava_sos_stats* stats) {
  std::lock_guard<std::mutex> l(c->mu);
  *stats = c->stats;
  c->stats = djava_sos_stats{};
}

void Client::ProducedRefs(djava_sos_chunk* c, const uint64_t* ids, size_t n,
                          const uint64_t* run_heads, const uint32_t* run_blocks, size_t n_runs) {
  produced_.chunk = c;
  produced_.refs.assign(ids, ids + n);
  produced_.run_heads.assign(run_heads, run_heads + n_runs);
  produced_.run_blocks.assign(run_blocks, run_blocks + n_runs);
}

bool Client::Releasable(const djava_sos_chunk* c) const {
  return Idle(c) && c->stash == nullptr && c->pending_refs.load() == 0 &&
         (c->word.load() & kStateMask) != kStateM;
}

bool Client::ReleaseUnreferenced() {
  std::vector<std::pair<uint64_t, uint32_t>> releases;
  bool done = true;
  {
    // Exclusive: no thread of this node is between looking a handle up and
    // naming it from an object (the JVM holds handles_mu_ shared meanwhile,
    // djava_sos_hold_handles), so a handle whose user value is 0 now stays
    // unnamed. Never waits: a holder may wait for this thread.
    std::unique_lock<std::shared_mutex> sole(handles_mu_, std::try_to_lock);
    if (!sole.owns_lock()) return false;
    std::vector<djava_sos_chunk*> candidates, later;
    {
      std::lock_guard<std::mutex> l(retry_mu_);
      candidates.swap(release_candidates_);
      releases.swap(to_release_);
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    std::vector<Forgotten> out;
    const auto now = std::chrono::steady_clock::now();
    for (djava_sos_chunk* c : candidates) {
      // The mutex may be held by a flush whose produce waits for a
      // safepoint, which may wait for a thread waiting for handles_mu_.
      std::unique_lock<std::mutex> cl(c->mu, std::try_to_lock);
      if (!cl.owns_lock()) {
        later.push_back(c);
        continue;
      }
      // Named again (the JVM made an object for it since), retained, or
      // still to be installed into an object: its own release comes later.
      // A copy modified here with no object is the JVM's to explain.
      if (IsNamed(c->id) || c->user.load() != 0 || c->pending_refs.load() != 0 ||
          c->retained.load() != 0 || (c->word.load() & kStateMask) == kStateM)
        continue;
      // A grant of an ended program, which nothing here will install: it
      // goes home, then its handle goes. Given back, not dropped: the chunk
      // may outlive the program that made it (a JDK object it published
      // first, which later programs use), and a grant moved here may hold
      // the only current copy.
      if (c->stash != nullptr && Idle(c) && !c->write_back_pending &&
          ProgramHasEnded(ProgramOf(c))) {
        if (!GiveBackStash(c)) continue;
        if (c->write_back_pending) {
          later.push_back(c);  // released once the server answers
          continue;
        }
      }
      if (c->clean) {
        // A clean grant: the server has this node as its owner until the
        // chunk goes home (without bytes); released once it answers.
        if (Releasable(c) && !c->write_back_pending) GiveBackClean(c);
        later.push_back(c);
        continue;
      }
      // Nor while its write-back is on its way: a handle made anew for the
      // id would not know to wait for the answer, and its request could
      // overtake the write-back (the directory would still take this node
      // for the owner).
      if (!Releasable(c) || c->write_back_pending) {
        later.push_back(c);  // a revocation, request or write-back under way ends soon
        continue;
      }
      TakeOutToRelease(c, &out, now, &releases);
    }
    if (!later.empty()) {
      done = false;
      std::lock_guard<std::mutex> l(retry_mu_);
      release_candidates_.insert(release_candidates_.end(), later.begin(), later.end());
    }
    AddForgotten(&out, now);
  }
  FreeForgotten();
  if (releases.empty() || broken_) return done;
  // After every flush whose bytes were read before these were let go.
  AwaitFlushesBegunBefore();
  // Each release goes to the chunk's home, which counted its shipments.
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> by_home(homes_.size());
  if (homes_.size() == 1) {
    by_home[0].swap(releases);
  } else {
    for (const auto& r : releases) by_home[HomeOf(r.first).index].push_back(r);
  }
  size_t count = 0;
  for (size_t h = 0; h < homes_.size(); h++) {
    const auto& list = by_home[h];
    count += list.size();
    for (size_t from = 0; from < list.size(); from += kReleasesPerMessage) {
      sospb::BypassMessage m;
      sospb::Release* r = m.mutable_release();
      for (size_t i = from; i < list.size() && i < from + kReleasesPerMessage; i++) {
        r->add_ids(list[i].first);
        r->add_shipments(list[i].second);
      }
      std::lock_guard<std::mutex> l(homes_[h]->bypass_send_mu);
      SendBypass(*homes_[h], m);
      release_messages_++;
    }
  }
  released_ += count;
  return done;
}

uint64_t Client::FlushBegins() {
  std::lock_guard<std::mutex> l(flush_epoch_mu_);
  flushes_in_epoch_[flush_epoch_ & 1]++;
  return flush_epoch_;
}

void Client::FlushSent(uint64_t epoch) {
  std::lock_guard<std::mutex> l(flush_epoch_mu_);
  if (--flushes_in_epoch_[epoch & 1] == 0) flush_epoch_cv_.notify_all();
}

void Client::AwaitFlushesBegunBefore() {
  // Flushes that begin from here on count in the other parity; those that
  // began before drain. Only the retry thread waits, one epoch at a time,
  // so the other parity is empty when it flips.
  std::unique_lock<std::mutex> l(flush_epoch_mu_);
  const uint64_t old = flush_epoch_++;
  flush_epoch_cv_.wait(l, [&] { return flushes_in_epoch_[old & 1] == 0 || broken_; });
}

void Client::GetStats(djava_sos_stats* stats) const {
  stats->misses = misses_;
  stats->upgrades = upgrades_;
  stats->invalidations = invalidations_;
  stats->flushes = flushes_;
  stats->bytes_in = bytes_in_;
  stats->bytes_out = bytes_out_;
  stats->deferred_flushes = deferred_revokes_;
  stats->releases_handed_off = releases_handed_off_;
  stats->handles_freed = handles_freed_;
  stats->chunks_released = released_;
  stats->release_messages = release_messages_;
  stats->written_back = written_back_;
}

}  // namespace sos
}  // namespace djava
