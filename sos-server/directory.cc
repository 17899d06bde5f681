#include "directory.h"

#include <algorithm>
#include <iterator>
#include <unordered_set>

namespace djava {
namespace sos {

Directory::Directory(NodeSink* sink, bool detect_migratory)
    : sink_(sink), detect_migratory_(detect_migratory) {
  nodes_.emplace_back();
}

NodeId Directory::AddNode(const std::string& name) {
  std::lock_guard<std::mutex> l(nodes_mu_);
  if (nodes_.size() >= kNamedNode) return 0;  // kNamedNode is nobody's
  nodes_.emplace_back();
  nodes_.back().name = name;
  return static_cast<NodeId>(nodes_.size() - 1);
}

bool Directory::AddNodeAt(NodeId node, const std::string& name) {
  std::lock_guard<std::mutex> l(nodes_mu_);
  if (node == 0 || node >= kNamedNode) return false;
  while (nodes_.size() <= node) {
    nodes_.emplace_back();
    nodes_.back().alive = false;
    nodes_.back().absent = true;
    nodes_.back().why_gone = "never joined this shard";
  }
  Node& n = nodes_[node];
  if (!n.absent) return false;
  n = Node();
  n.name = name;
  return true;
}

void Directory::ShipRefs(NodeId node, const ChunkImage& image) {
  if (shards_ == 1) {
    holds_.Ship(node, image.refs.data(), image.refs.size());
    return;
  }
  for (ChunkId ref : image.refs)
    if (HomeShard(ref, shards_) == shard_) holds_.Ship(node, ref);
}

std::string Directory::NodeName(NodeId node) const {
  std::lock_guard<std::mutex> l(nodes_mu_);
  return node < nodes_.size() ? nodes_[node].name : std::string();
}

bool Directory::Alive(NodeId node) const {
  std::lock_guard<std::mutex> l(nodes_mu_);
  return node != 0 && node < nodes_.size() && nodes_[node].alive;
}

bool Directory::Grantable(NodeId node) const {
  std::lock_guard<std::mutex> l(nodes_mu_);
  if (node == 0 || node >= nodes_.size()) return false;
  const Node& n = nodes_[node];
  return n.alive && !n.dying && !n.left_cleanly;
}

std::string Directory::Describe(NodeId node) const {
  std::lock_guard<std::mutex> l(nodes_mu_);
  std::string s = "node " + std::to_string(node);
  if (node < nodes_.size() && !nodes_[node].name.empty()) s += " (" + nodes_[node].name + ")";
  return s;
}

uint64_t Directory::NextTxn() {
  std::lock_guard<std::mutex> l(txn_mu_);
  return next_txn_++;
}

bool Directory::ProgramEnded(uint64_t program) const {
  if (program == 0) return false;
  std::lock_guard<std::mutex> l(ended_mu_);
  return ended_programs_.count(program) != 0;
}

size_t Directory::FreeProgram(uint64_t program) {
  if (program == 0) return 0;
  {
    std::lock_guard<std::mutex> l(ended_mu_);
    if (!ended_programs_.insert(program).second) return 0;
  }
  {
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.programs_ended++;
  }
  std::vector<ChunkId> dropped;
  for (Stripe& s : stripes_) {
    std::lock_guard<std::mutex> l(s.mu);
    for (auto it = s.entries.begin(); it != s.entries.end();) {
      if (it->second.program == program) {
        dropped.push_back(it->first);
        it = DropWithProgram(s, it);
      } else {
        ++it;
      }
    }
  }
  // Nodes let go of an ended program's chunks without a release (they
  // forget its handles), so its holds go here, or every program that ends
  // would leave its rows in the listing for good.
  holds_.Forget(dropped);
  return dropped.size();
}

std::unordered_map<ChunkId, Directory::Entry>::iterator Directory::DropWithProgram(
    Stripe& s, std::unordered_map<ChunkId, Entry>::iterator it) {
  const ChunkId id = it->first;
  Entry* e = &it->second;
  std::list<Request> waiting = std::move(e->queue);
  if (e->txn != 0) waiting.push_front(e->current);
  const std::string msg = "chunk " + ChunkName(id) + " was freed: its program " +
                          std::to_string(e->program) + " ended";
  // Answers to the transaction in flight find no entry and are ignored.
  auto next = s.entries.erase(it);
  live_--;
  for (const Request& r : waiting) {
    if (r.kind == Kind::kFree) {
      sink_->Freed(r.node, r.seq, id);
    } else if (r.kind == Kind::kReclaim) {
      FinishReclaim(r.node);
    } else if (Alive(r.node) || r.kind == Kind::kPush) {
      Fail(id, r, sospb::FREED, msg);
    }
  }
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.dropped_with_program++;
  return next;
}

DirectoryStats Directory::Stats() const {
  std::lock_guard<std::mutex> l(stats_mu_);
  DirectoryStats d = stats_;
  d.live = live_.load();
  return d;
}

// ---- requests ---------------------------------------------------------------

void Directory::Read(NodeId node, uint64_t seq, ChunkId id, uint64_t seen_version) {
  Stripe& s = StripeOf(id);
  std::lock_guard<std::mutex> l(s.mu);
  NoteAsked(s, id);
  Submit(s, id, Request{Kind::kRead, node, seq, 0, seen_version});
}

void Directory::Write(NodeId node, uint64_t seq, ChunkId id, uint64_t have_version,
                      uint64_t seen_version, bool first_write) {
  Stripe& s = StripeOf(id);
  std::lock_guard<std::mutex> l(s.mu);
  NoteAsked(s, id);
  Request r{Kind::kWrite, node, seq, have_version, seen_version};
  r.first_write = first_write;
  Submit(s, id, r);
}

void Directory::Free(NodeId node, uint64_t seq, ChunkId id) {
  Stripe& s = StripeOf(id);
  std::lock_guard<std::mutex> l(s.mu);
  Submit(s, id, Request{Kind::kFree, node, seq, 0});
}

void Directory::Die(NodeId node, uint64_t seq, const std::vector<ChunkId>& owned) {
  // Every chunk the node says it holds modified, and every chunk the
  // directory believes it owns (the two agree unless the node is confused;
  // taking both never leaves a dirty chunk behind).
  std::set<ChunkId> ids(owned.begin(), owned.end());
  for (Stripe& s : stripes_) {
    std::lock_guard<std::mutex> l(s.mu);
    for (auto& [id, e] : s.entries)
      if (e.state == State::kModified && e.owner == node) ids.insert(id);
  }
  {
    std::lock_guard<std::mutex> l(nodes_mu_);
    if (node >= nodes_.size()) return;
    Node& n = nodes_[node];
    n.dying = true;
    n.die_seq = seq;
    n.reclaims_pending = 1 + static_cast<int>(ids.size());  // 1: this call's own guard
  }
  for (ChunkId id : ids) {
    Stripe& s = StripeOf(id);
    std::lock_guard<std::mutex> l(s.mu);
    Submit(s, id, Request{Kind::kReclaim, node, seq, 0});
  }
  FinishReclaim(node);
}

void Directory::FinishReclaim(NodeId node) {
  uint64_t seq = 0;
  {
    std::lock_guard<std::mutex> l(nodes_mu_);
    Node& n = nodes_[node];
    if (--n.reclaims_pending > 0 || !n.dying) return;
    n.dying = false;
    n.left_cleanly = true;
    seq = n.die_seq;
  }
  sink_->OkToDie(node, seq);
}

// ---- the per-chunk machine ----------------------------------------------------

void Directory::Submit(Stripe& s, ChunkId id, const Request& r) {
  Entry* e = FindOrCreate(s, id, r);
  if (e == nullptr) return;
  e->queue.push_back(r);
  if (e->txn == 0) RunQueue(id, e);
}

Directory::Entry* Directory::FindOrCreate(Stripe& s, ChunkId id, const Request& r) {
  auto it = s.entries.find(id);
  if (it != s.entries.end()) return &it->second;
  if (IsNamed(id) && (id & kMaxSequence) != 0) {
    // A named chunk exists from the start, empty, at home.
    Entry& e = s.entries[id];
    e.state = State::kHome;
    e.image = std::make_unique<ChunkImage>();
    live_++;
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.chunks++;
    return &e;
  }
  if (FailIfCollected(id, r)) return nullptr;
  // Never seen: its only copy is at its creator, if the creator exists.
  const NodeId creator = CreatorOf(id);
  bool exists, alive = false, left_cleanly = false;
  std::string why;
  {
    std::lock_guard<std::mutex> l(nodes_mu_);
    exists = creator != 0 && creator < nodes_.size() && (id & kMaxSequence) != 0;
    if (exists) {
      alive = nodes_[creator].alive;
      left_cleanly = nodes_[creator].left_cleanly;
      why = nodes_[creator].why_gone;
    }
  }
  if (!exists) {
    Fail(id, r, sospb::NO_SUCH_CHUNK, "chunk " + ChunkName(id) + " does not exist: no node " +
                                          std::to_string(creator) + " ever created chunks");
    return nullptr;
  }
  if (!alive) {
    if (r.kind == Kind::kReclaim) {
      FinishReclaim(r.node);
    } else if (r.kind == Kind::kFree) {
      sink_->Freed(r.node, r.seq, id);
    } else if (left_cleanly) {
      Fail(id, r, sospb::NO_SUCH_CHUNK,
           "chunk " + ChunkName(id) + " does not exist: " + Describe(creator) +
               " left without publishing it (never allocated, or freed)");
    } else {
      Fail(id, r, sospb::LOST,
           "chunk " + ChunkName(id) + " is lost: it was created on " + Describe(creator) + ", which " +
               why + " before any other node fetched it");
    }
    return nullptr;
  }
  Entry& e = s.entries[id];
  e.state = State::kModified;
  e.owner = creator;
  e.last_writer = creator;  // it holds the chunk exclusively from its making
  live_++;
  // Its creator holds it from its making (the client counts that as one
  // shipment), as the directory learns only now.
  holds_.Ship(creator, id);
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.chunks++;
  return &e;
}

void Directory::RunQueue(ChunkId id, Entry* e) {
  while (e->txn == 0 && !e->queue.empty()) {
    Request r = e->queue.front();
    e->queue.pop_front();
    // A read or write a leaving node sent before its Die (a prefetch does
    // not wait for its grants) is not served: nothing there waits for it.
    const bool grant = r.kind == Kind::kRead || r.kind == Kind::kWrite;
    if (grant ? !Grantable(r.node) : !Alive(r.node) && r.kind != Kind::kReclaim) continue;
    // Decided when the request's turn comes, not when it arrived: a write
    // queued ahead of it may be the one that makes the chunk another's.
    if (r.first_write && e->version != 0 &&
        (e->state == State::kHome || e->state == State::kModified)) {
      sink_->Declined(r.node, r.seq, id);
      std::lock_guard<std::mutex> l(stats_mu_);
      stats_.declined++;
      continue;
    }
    Start(id, e, r);
  }
}

bool Directory::Start(ChunkId id, Entry* e, const Request& r) {
  if (r.kind != Kind::kPush) {
    e->released_by = 0;  // the bytes at home are someone's now
    e->along_to = 0;     // and a node asked for it: its own request answers it
  }
  switch (e->state) {
    case State::kLost:
    case State::kFreed:
      if (r.kind == Kind::kFree) {
        if (e->state == State::kLost) {
          std::lock_guard<std::mutex> l(stats_mu_);
          stats_.freed++;
        }
        e->state = State::kFreed;
        sink_->Freed(r.node, r.seq, id);
      } else if (r.kind == Kind::kReclaim) {
        FinishReclaim(r.node);
      } else {
        FailWithState(id, e, r);
      }
      return true;

    case State::kHome:
      switch (r.kind) {
        case Kind::kRead:
          if (ReadGetsExclusive(*e, r.node))
            GrantExclusive(id, e, r);
          else
            GrantShared(id, e, r);
          return true;
        case Kind::kWrite: {
          DetectMigratory(e, r.node);
          std::set<NodeId> others = e->sharers;
          others.erase(r.node);
          if (others.empty()) {
            GrantExclusive(id, e, r);
            return true;
          }
          e->txn = NextTxn();
          e->current = r;
          e->awaiting_acks = others;
          for (NodeId n : others) sink_->Invalidate(n, id, e->txn);
          std::lock_guard<std::mutex> l(stats_mu_);
          stats_.invalidates += others.size();
          return false;
        }
        case Kind::kFree: {
          std::set<NodeId> others = e->sharers;
          others.erase(r.node);
          if (!others.empty()) {
            std::string who;
            for (NodeId n : others) who += (who.empty() ? "" : ", ") + Describe(n);
            Fail(id, r, sospb::IN_USE, "chunk " + ChunkName(id) + " is still held by " + who);
            return true;
          }
          e->state = State::kFreed;
          e->image.reset();
          e->sharers.clear();
          sink_->Freed(r.node, r.seq, id);
          std::lock_guard<std::mutex> l(stats_mu_);
          stats_.freed++;
          return true;
        }
        case Kind::kReclaim:
          FinishReclaim(r.node);
          return true;
        case Kind::kPush:
          EndPush(id);  // never started so (Push checks the state)
          return true;
      }
      return true;

    case State::kModified:
      if (e->owner == r.node) {
        switch (r.kind) {
          case Kind::kRead:
          case Kind::kWrite:
            if (e->pushed || r.seen_version < e->version) {
              // Sent before the grant that made it the owner reached it,
              // which took that grant as its answer: a pushed grant, or
              // one answering a request it sent before a push reached it
              // (that push answered the request it was waiting on, and a
              // transaction since took the chunk away again).
              std::lock_guard<std::mutex> l(stats_mu_);
              stats_.push_crossings++;
              return true;
            }
            Fail(id, r, sospb::BAD_REQUEST,
                 "chunk " + ChunkName(id) + " is already held modified by the requesting " +
                     Describe(r.node));
            return true;
          case Kind::kFree: {
            e->state = State::kFreed;
            e->image.reset();
            e->owner = 0;
            sink_->Freed(r.node, r.seq, id);
            std::lock_guard<std::mutex> l(stats_mu_);
            stats_.freed++;
            return true;
          }
          case Kind::kReclaim:
            break;  // flush it home, below
          case Kind::kPush:
            return true;  // never started so (Push checks the owner)
        }
      } else {
        if (r.kind == Kind::kReclaim) {
          FinishReclaim(r.node);
          return true;
        }
        if (r.kind == Kind::kFree) {
          Fail(id, r, sospb::IN_USE,
               "chunk " + ChunkName(id) + " is still held modified by " + Describe(e->owner));
          return true;
        }
      }
      e->txn = NextTxn();
      e->current = r;
      e->awaiting_flush = e->owner;
      // A reader of a migratory chunk is to get the only copy: the owner
      // keeps none (decided now, as the flush says so; should the owner
      // turn out not to have written, the read is then granted SHARED and
      // the owner simply no longer shares it).
      e->flush_keeps_shared = r.kind == Kind::kRead && !e->migratory;
      sink_->Flush(e->owner, id, e->txn, e->flush_keeps_shared);
      {
        std::lock_guard<std::mutex> l(stats_mu_);
        stats_.flushes++;
      }
      return false;
  }
  return true;
}

void Directory::Complete(ChunkId id, Entry* e) {
  const Request r = e->current;
  e->txn = 0;
  e->awaiting_acks.clear();
  e->awaiting_flush = 0;
  if (r.kind == Kind::kPush) {
    if (e->state == State::kHome && Grantable(r.node)) {
      // The home copy as it is, unasked: the node may never write it.
      GrantExclusive(id, e, r, /*clean=*/true);
      e->pushed = true;
    }
    EndPush(id);
  } else if (e->state == State::kLost) {
    FailWithState(id, e, r);
  } else if (r.kind == Kind::kReclaim) {
    FinishReclaim(r.node);
  } else if (Grantable(r.node)) {
    if (r.kind == Kind::kRead) {
      if (ReadGetsExclusive(*e, r.node))
        GrantExclusive(id, e, r);
      else
        GrantShared(id, e, r);
    }
    if (r.kind == Kind::kWrite) GrantExclusive(id, e, r);
  }
  RunQueue(id, e);
}

void Directory::GrantShared(ChunkId id, Entry* e, const Request& r) {
  e->sharers.insert(r.node);
  // Counted before the grant leaves: the node holds what it can learn of.
  holds_.Ship(r.node, id);
  if (e->image != nullptr) ShipRefs(r.node, *e->image);
  sink_->Grant(r.node, r.seq, sospb::SHARED, id, e->version, e->image.get(), /*clean=*/false);
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.grants++;
}

void Directory::GrantExclusive(ChunkId id, Entry* e, const Request& r, bool clean) {
  // The requester's read copy is current when it is still a sharer of the
  // version it names: then the grant carries no bytes. A read (of a
  // migratory chunk) names no version and has no copy: it gets the bytes.
  const bool copy_current = r.kind != Kind::kRead && e->sharers.count(r.node) != 0 &&
                            r.have_version == e->version;
  e->version++;
  e->state = State::kModified;
  e->owner = r.node;
  e->sharers.clear();
  e->last_writer = r.node;
  e->read_exclusive = r.kind == Kind::kRead;
  e->pushed = false;
  e->clean_owner = clean ? r.node : 0;
  e->clean_version = e->version;
  if (!r.along) {
    std::lock_guard<std::mutex> l(nodes_mu_);
    Node& n = nodes_[r.node];
    n.exclusive_log[n.exclusive_count % kExclusiveLog] = id;
    n.exclusive_count++;
  }
  holds_.Ship(r.node, id);
  if (!copy_current && e->image != nullptr) ShipRefs(r.node, *e->image);
  sink_->Grant(r.node, r.seq, sospb::EXCLUSIVE, id, e->version,
               copy_current ? nullptr : e->image.get(), clean);
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.grants++;
  if (r.kind == Kind::kRead) stats_.migratory_grants++;
}

bool Directory::HeldClean(const Entry& e, NodeId node) {
  return e.state == State::kModified && e.owner == node && e.clean_owner == node &&
         e.clean_version == e.version;
}

void Directory::ReturnedClean(Entry* e) {
  e->state = State::kHome;
  e->owner = 0;
  e->pushed = false;
  e->read_exclusive = false;
  e->sharers.clear();
  e->clean_owner = 0;
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.clean_returns++;
}

bool Directory::ReadGetsExclusive(const Entry& e, NodeId node) const {
  // The home copy is what the reader gets; a migratory chunk always has one
  // (it was at home when an upgrade marked it).
  if (!e.migratory || e.state != State::kHome || e.image == nullptr) return false;
  for (NodeId n : e.sharers)
    if (n != node) return false;
  return true;
}

void Directory::DetectMigratory(Entry* e, NodeId node) {
  // Stenstrom et al.'s test: the writer and the last writer hold the only
  // two copies, so the writer read what the last writer wrote and now
  // writes it in turn. A third reader (read-shared data) or the same
  // writer again (producer and consumer) is not the pattern.
  if (!detect_migratory_ || e->migratory || e->sharers.size() != 2 ||
      e->sharers.count(node) == 0)
    return;
  const NodeId other = *e->sharers.begin() == node ? *e->sharers.rbegin() : *e->sharers.begin();
  if (other != e->last_writer) return;
  e->migratory = true;
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.migratory_marked++;
}

void Directory::NoteCopyReturned(Entry* e, const ChunkImage& image) {
  // The home copy is still the image the read-exclusive grant shipped: the
  // home bytes change only when the owner's copy comes home, i.e. here.
  const bool unwritten =
      e->read_exclusive && e->image != nullptr && image.data == e->image->data;
  e->read_exclusive = false;
  if (!unwritten) return;
  // The holder only read (or wrote the bytes back as they were): it is no
  // writer to hand the chunk on from, and the chunk is read-shared, or
  // migratory no longer. Back to the plain protocol, so that readers do
  // not take it from each other turn by turn; found again only after an
  // upgrade that follows a real write.
  e->last_writer = 0;
  if (!e->migratory) return;
  e->migratory = false;
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.migratory_undone++;
}

void Directory::NoteAsked(Stripe& s, ChunkId id) {
  // A node uses the chunk: moving it with its lock may pay again.
  auto it = s.entries.find(id);
  if (it != s.entries.end()) it->second.push_declined = false;
}

bool Directory::Push(ChunkId id, NodeId from, NodeId to, std::function<void()> sent) {
  return PushOf(id, from, to, std::move(sent), /*along=*/false, /*any_program=*/true, 0);
}

bool Directory::PushOf(ChunkId id, NodeId from, NodeId to, std::function<void()> sent,
                       bool along, bool any_program, uint64_t program, bool written_home) {
  // A named chunk (a class's statics) never moves: its image names no class,
  // so neither the directory nor the receiving node could tell its program,
  // and a copy moved there would outlive the program on that node.
  // To the node it came from: only what that node wrote home for its
  // release, which a thread of its own takes next (PushWithLock).
  if ((from == to && !written_home) || !Grantable(to) || IsNamed(id)) return false;
  Stripe& s = StripeOf(id);
  std::lock_guard<std::mutex> l(s.mu);
  auto it = s.entries.find(id);
  if (it == s.entries.end()) return false;
  Entry* e = &it->second;
  // Told apart only when both programs are known (an entry learns its
  // program from the first image with a class; a lock the directory never
  // saw an image of has none): a chunk of no known program moves.
  if (!any_program && program != 0 && e->program != 0 && e->program != program) return false;
  if (e->txn != 0 || !e->queue.empty() || e->push_declined || ProgramEnded(e->program))
    return false;
  if (e->state == State::kHome && e->released_by == from && e->image != nullptr &&
      (e->sharers.empty() || (e->sharers.size() == 1 && e->sharers.count(to) != 0))) {
    // The releasing node wrote it home and dropped it before its release
    // (WriteBack with drop), and nobody has asked for it since: granted now,
    // with no flush on the way.
    {
      std::lock_guard<std::mutex> p(pushes_mu_);
      pushes_[id] = std::move(sent);
    }
    e->txn = NextTxn();
    // have_version names none: a read copy `to` may have is older than the
    // bytes written back, which the grant carries.
    e->current = Request{Kind::kPush, to, 0, UINT64_MAX};
    e->current.along = along;
    {
      std::lock_guard<std::mutex> st(stats_mu_);
      stats_.pushes++;
      stats_.pushes_released++;
    }
    Complete(id, e);  // grants, ends the push (`sent` runs), serves the queue
    return true;
  }
  // Otherwise only a copy the releasing node holds modified moves: it wrote
  // under the lock, and the next owner would otherwise fault it in from
  // there. A chunk with anything under way or queued is left to its
  // requests. Back to `from` itself, this is a copy whose write-back has
  // not reached home yet: the flush asks `from`, and the write-back, ahead
  // of its reply, answers it.
  if (e->state != State::kModified || e->owner != from) return false;
  {
    std::lock_guard<std::mutex> p(pushes_mu_);
    pushes_[id] = std::move(sent);
  }
  e->txn = NextTxn();
  e->current = Request{Kind::kPush, to, 0, 0};
  e->current.along = along;
  e->awaiting_flush = from;
  e->flush_keeps_shared = false;
  sink_->Flush(from, id, e->txn, /*keep_shared=*/false);
  std::lock_guard<std::mutex> st(stats_mu_);
  stats_.flushes++;
  stats_.pushes++;
  return true;
}

uint64_t Directory::ExclusiveMark(NodeId node) const {
  std::lock_guard<std::mutex> l(nodes_mu_);
  return node < nodes_.size() ? nodes_[node].exclusive_count : 0;
}

bool Directory::PushWithLock(ChunkId lock, NodeId from, NodeId to, uint64_t since,
                             uint64_t holder_program, std::function<void()> sent,
                             const std::vector<ChunkId>& released) {
  // Back to the releasing node (one of its threads was next), only what
  // it wrote home for the release returns: the rest never left it.
  std::vector<ChunkId> ids;
  if (from != to) ids.push_back(lock);
  for (ChunkId id : released) {
    if (ids.size() > kMovedWithLock) break;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  // A node runs threads of several programs: what it wrote meanwhile for
  // another program's threads stays (the lock's next holder runs none of
  // them, and a copy there would outlive their program on that node). A
  // lock used only as a monitor may never have sent an image: its holder's
  // program is the lock's then.
  uint64_t program = holder_program;
  {
    Stripe& s = StripeOf(lock);
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.entries.find(lock);
    if (it != s.entries.end() && it->second.program != 0) program = it->second.program;
  }
  if (since != kNoMark && from != to) {
    std::lock_guard<std::mutex> l(nodes_mu_);
    if (from < nodes_.size()) {
      const Node& n = nodes_[from];
      const uint64_t oldest = n.exclusive_count > kExclusiveLog ? n.exclusive_count - kExclusiveLog : 0;
      for (uint64_t k = n.exclusive_count; k > std::max(since, oldest) &&
                                           ids.size() <= kMovedWithLock; k--) {
        const ChunkId id = n.exclusive_log[(k - 1) % kExclusiveLog];
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
      }
    }
  }
  // One count for each move under way, and one for this loop, so that a
  // move ending before the loop does cannot run `sent` early.
  auto left = std::make_shared<std::atomic<int>>(1);
  auto one_ended = [left, sent = std::move(sent)] {
    if (left->fetch_sub(1) == 1) sent();
  };
  bool any = false;
  for (ChunkId id : ids) {
    left->fetch_add(1);
    const bool written_home = std::find(released.begin(), released.end(), id) != released.end();
    if (PushOf(id, from, to, one_ended, /*along=*/false, /*any_program=*/id == lock, program,
               written_home)) {
      any = true;
    } else {
      left->fetch_sub(1);
    }
  }
  if (!any) return false;
  one_ended();  // the loop's count
  return true;
}

void Directory::EndPush(ChunkId id) {
  std::function<void()> sent;
  {
    std::lock_guard<std::mutex> p(pushes_mu_);
    auto it = pushes_.find(id);
    if (it == pushes_.end()) return;
    sent = std::move(it->second);
    pushes_.erase(it);
  }
  if (sent) sent();
}

void Directory::Fail(ChunkId id, const Request& r, sospb::ErrorCode code,
                     const std::string& message) {
  if (r.kind == Kind::kReclaim) {
    FinishReclaim(r.node);
    return;
  }
  if (r.kind == Kind::kPush) {
    EndPush(id);  // nobody asked: nobody is told
    return;
  }
  sink_->Error(r.node, r.seq, id, code, message);
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.errors++;
}

void Directory::FailWithState(ChunkId id, Entry* e, const Request& r) {
  if (e->state == State::kLost)
    Fail(id, r, sospb::LOST, LostMessage(id, *e));
  else
    Fail(id, r, sospb::FREED, "chunk " + ChunkName(id) + " was freed");
}

std::string Directory::LostMessage(ChunkId id, const Entry& e) const {
  return "chunk " + ChunkName(id) + " is lost: its only current copy was modified on " +
         e.lost_reason;
}

void Directory::MakeLost(Entry* e, NodeId node, const std::string& why) {
  e->state = State::kLost;
  e->lost_reason = Describe(node) + ", which " + why;
  e->image.reset();
  e->sharers.clear();
  e->owner = 0;
  e->migratory = false;
  e->read_exclusive = false;
  e->pushed = false;
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.lost++;
}

// ---- answers ------------------------------------------------------------------

void Directory::InvalidateAck(NodeId node, ChunkId id, uint64_t txn) {
  Stripe& s = StripeOf(id);
  std::lock_guard<std::mutex> l(s.mu);
  auto it = s.entries.find(id);
  if (it == s.entries.end()) return;
  Entry* e = &it->second;
  if (e->txn != txn || e->awaiting_acks.erase(node) == 0) return;
  e->sharers.erase(node);
  if (e->awaiting_acks.empty() && e->awaiting_flush == 0) Complete(id, e);
}

void Directory::FlushReply(NodeId node, ChunkId id, uint64_t txn,
                           std::unique_ptr<ChunkImage> image, bool unused,
                           const std::vector<ChunkId>& along) {
  NodeId requester = 0;
  {
    Stripe& s = StripeOf(id);
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.entries.find(id);
    if (it == s.entries.end()) return;
    Entry* e = &it->second;
    if (e->txn != txn || e->awaiting_flush != node) return;
    const Request& r = e->current;
    if (r.kind == Kind::kRead || r.kind == Kind::kWrite || r.kind == Kind::kPush)
      requester = r.node;
    FlushReplyLocked(s, it, node, std::move(image), unused);
  }
  // After the chunk's grant, so that the requester learns the ids from its
  // bytes before their grants arrive (each in its own stripe: no stripe is
  // held across another's lock). A chunk taken meanwhile, or not written
  // home, stays where it is: the requester asks for it as for any.
  if (requester == 0 || !objects_along_) return;
  for (ChunkId a : along) {
    if (PushOf(a, node, requester, nullptr, /*along=*/true, /*any_program=*/true, 0)) {
      std::lock_guard<std::mutex> l(stats_mu_);
      stats_.pushes_along++;
    } else {
      ExpectAlong(a, node, requester);
    }
  }
}

std::unordered_map<ChunkId, Directory::Entry>::iterator Directory::AdoptFromCreator(
    Stripe& s, ChunkId id, NodeId creator) {
  Entry& e = s.entries[id];
  e.state = State::kModified;
  e.owner = creator;
  e.last_writer = creator;
  live_++;
  holds_.Ship(creator, id);
  {
    std::lock_guard<std::mutex> sl(stats_mu_);
    stats_.chunks++;
  }
  return s.entries.find(id);
}

void Directory::ExpectAlong(ChunkId id, NodeId from, NodeId to) {
  if (IsNamed(id) || !Grantable(to)) return;
  Stripe& s = StripeOf(id);
  std::lock_guard<std::mutex> l(s.mu);
  auto it = s.entries.find(id);
  if (it == s.entries.end()) {
    if (CreatorOf(id) != from || !Alive(from)) return;
    it = AdoptFromCreator(s, id, from);
  }
  Entry* e = &it->second;
  if (e->state == State::kModified && e->owner == from && e->txn == 0 && e->queue.empty())
    e->along_to = to;
}

void Directory::WriteBack(NodeId node, ChunkId id, std::unique_ptr<ChunkImage> image,
                          bool drop, bool clean) {
  NodeId along_to = 0;
  WriteBackLocked(node, id, std::move(image), drop, clean, &along_to);
  // A chunk a flush reply named as coming along: granted to its requester
  // now that it is home (outside the stripe's lock, which PushOf takes).
  if (along_to != 0 && objects_along_ &&
      PushOf(id, node, along_to, nullptr, /*along=*/true, /*any_program=*/true, 0)) {
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.pushes_along++;
  }
}

void Directory::WriteBackLocked(NodeId node, ChunkId id, std::unique_ptr<ChunkImage> image,
                                bool drop, bool clean, NodeId* along_to) {
  Stripe& s = StripeOf(id);
  std::lock_guard<std::mutex> l(s.mu);
  auto it = s.entries.find(id);
  if (clean) {
    // A clean grant given up unwritten. Not held so any more: a flush took
    // it first, and the node's answer to that flush said the same.
    if (it == s.entries.end() || !HeldClean(it->second, node)) {
      sink_->WrittenBack(node, id, false);
      return;
    }
    Entry* e = &it->second;
    if (e->txn != 0) {
      // Crossed a flush asked of the node: its answer, as below.
      sink_->WrittenBack(node, id, false);
      if (e->awaiting_flush == node) FlushReplyLocked(s, it, node, nullptr);
      return;
    }
    ReturnedClean(e);
    e->released_by = node;
    e->along_to = 0;
    sink_->WrittenBack(node, id, true);
    return;
  }
  if (it == s.entries.end() && CreatorOf(id) == node && !IsNamed(id) && Alive(node))
    it = AdoptFromCreator(s, id, node);
  if (it == s.entries.end() || it->second.state != State::kModified || it->second.owner != node ||
      image == nullptr) {
    // A transaction took the chunk first; the node answered its flush.
    sink_->WrittenBack(node, id, false);
    return;
  }
  Entry* e = &it->second;
  if (e->txn != 0) {
    if (e->awaiting_flush == node) {
      // Crossed a flush asked of the node: the same bytes, which the node
      // sends again in its reply (ignored then: the transaction is done).
      // Dropped, the node keeps no copy whatever the flush said: listed as
      // a sharer, its next write (naming no version, which reads as 0)
      // would be granted without bytes at version 0.
      sink_->WrittenBack(node, id, false);
      if (drop) {
        e->flush_keeps_shared = false;
        std::lock_guard<std::mutex> sl(stats_mu_);
        stats_.released_with_lock++;
      }
      FlushReplyLocked(s, it, node, std::move(image));
    } else {
      sink_->WrittenBack(node, id, false);
    }
    return;
  }
  if (image->program != 0) e->program = image->program;
  if (ProgramEnded(e->program)) {
    sink_->WrittenBack(node, id, false);
    DropWithProgram(s, it);
    return;
  }
  LearnRuns(*image);
  NoteCopyReturned(e, *image);
  NoteHomeBytesReplaced(e->image.get(), *image);
  e->image = std::move(image);
  e->state = State::kHome;
  e->owner = 0;
  e->pushed = false;
  e->sharers.clear();
  if (drop) {
    e->released_by = node;
    *along_to = e->along_to;
  } else {
    e->sharers.insert(node);
  }
  e->along_to = 0;
  sink_->WrittenBack(node, id, true);
  std::lock_guard<std::mutex> sl(stats_mu_);
  stats_.written_back++;
  if (drop) stats_.released_with_lock++;
}

void Directory::FlushReplyLocked(Stripe& s, std::unordered_map<ChunkId, Entry>::iterator it,
                                 NodeId node, std::unique_ptr<ChunkImage> image, bool unused) {
  const ChunkId id = it->first;
  Entry* e = &it->second;
  e->awaiting_flush = 0;
  if (image == nullptr && HeldClean(*e, node)) {
    // Never written since its clean grant: the home copy is current.
    ReturnedClean(e);
    if (e->current.kind == Kind::kRead && e->flush_keeps_shared && Alive(node))
      e->sharers.insert(node);
    Complete(id, e);
    return;
  }
  if (image == nullptr) {
    if (e->image == nullptr && e->version == 0) {
      // Its creator does not have it: never allocated, or freed before anyone
      // else saw it. Everyone waiting on it hears so; the entry goes.
      const std::string msg = "chunk " + ChunkName(id) + " does not exist: its creator " +
                              Describe(node) + " has no such chunk (never allocated, or freed)";
      std::list<Request> waiting = std::move(e->queue);
      waiting.push_front(e->current);
      s.entries.erase(it);
      live_--;
      bool excess;
      holds_.Release(node, id, 1, &excess);  // the creator's, from FindOrCreate
      for (const Request& r : waiting) {
        if (r.kind == Kind::kFree) {
          sink_->Freed(r.node, r.seq, id);
        } else if (Alive(r.node) || r.kind == Kind::kReclaim || r.kind == Kind::kPush) {
          Fail(id, r, sospb::NO_SUCH_CHUNK, msg);
        }
      }
      return;
    }
    // The owner lost what it was trusted to hold: the chunk cannot be
    // recovered, and saying otherwise would present stale bytes as current.
    MakeLost(e, node, "answered a flush without the modified copy it held");
    Complete(id, e);
    return;
  }
  if (image->program != 0) e->program = image->program;
  if (ProgramEnded(e->program)) {
    // A leaving node's flush of a chunk whose program has ended: nobody
    // will read it again.
    DropWithProgram(s, it);
    return;
  }
  LearnRuns(*image);
  NoteCopyReturned(e, *image);  // may end the migratory mark: Complete then grants SHARED
  if (e->pushed && unused) {
    // Moved with its lock and never touched there: moving it is waste.
    e->push_declined = true;
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.pushes_unused++;
  }
  NoteHomeBytesReplaced(e->image.get(), *image);
  e->image = std::move(image);
  e->state = State::kHome;
  e->owner = 0;
  e->pushed = false;
  e->sharers.clear();
  // The flush said whether the node keeps a read copy.
  if (e->current.kind == Kind::kRead && e->flush_keeps_shared && Alive(node))
    e->sharers.insert(node);
  Complete(id, e);
}

void Directory::RemoveNode(NodeId node, const std::string& why) {
  {
    std::lock_guard<std::mutex> l(nodes_mu_);
    if (node == 0 || node >= nodes_.size() || !nodes_[node].alive) return;
    nodes_[node].alive = false;
    nodes_[node].why_gone = why;
  }
  // What it held goes with it (its modified chunks are lost below, and
  // stay reachable as such only if something else names them).
  holds_.DropNode(node);
  NoteGarbageMayExist();
  for (Stripe& s : stripes_) {
    std::lock_guard<std::mutex> l(s.mu);
    for (auto& [id, entry] : s.entries) {
      Entry* e = &entry;
      e->sharers.erase(node);
      for (auto q = e->queue.begin(); q != e->queue.end();)
        q = q->node == node ? e->queue.erase(q) : std::next(q);
      // A clean grant too: only its owner knew whether it wrote.
      if (e->state == State::kModified && e->owner == node) MakeLost(e, node, why);
      if (e->txn == 0) continue;
      bool done = false;
      if (e->awaiting_flush == node) {
        e->awaiting_flush = 0;
        done = true;  // state is now kLost; Complete fails the request
      }
      if (e->awaiting_acks.erase(node) != 0 && e->awaiting_acks.empty() &&
          e->awaiting_flush == 0)
        done = true;
      if (done) Complete(id, e);
    }
  }
}

// ---- the distributed garbage collector ------------------------------------------------

void Directory::Release(NodeId node, const std::vector<ChunkId>& ids,
                        const std::vector<uint64_t>& shipments) {
  uint64_t released = 0, excess_releases = 0;
  for (size_t i = 0; i < ids.size() && i < shipments.size(); i++) {
    const ChunkId id = ids[i];
    if (IsNamed(id)) continue;  // statics are held by their program, not by nodes
    Stripe& s = StripeOf(id);
    std::lock_guard<std::mutex> l(s.mu);
    bool excess;
    if (!holds_.Release(node, id, shipments[i], &excess)) continue;  // a shipment is on its way
    released++;
    if (excess) excess_releases++;
    auto it = s.entries.find(id);
    if (it != s.entries.end() && it->second.txn == 0 && it->second.owner != node) {
      // Every copy it had went with its hold: the next writer need not
      // invalidate it.
      it->second.sharers.erase(node);
    }
  }
  if (released == 0) return;
  events_.fetch_add(released, std::memory_order_relaxed);
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.releases += released;
  stats_.excess_releases += excess_releases;
}

void Directory::NoteHomeBytesReplaced(const ChunkImage* before, const ChunkImage& now) {
  if (before == nullptr || before->refs.empty()) return;
  if (before->refs.size() <= 16 && now.refs.size() <= 64) {
    for (ChunkId ref : before->refs) {
      if (std::find(now.refs.begin(), now.refs.end(), ref) == now.refs.end()) {
        NoteGarbageMayExist();
        return;
      }
    }
    return;
  }
  const std::unordered_set<ChunkId> named(now.refs.begin(), now.refs.end());
  for (ChunkId ref : before->refs) {
    if (named.count(ref) == 0) {
      NoteGarbageMayExist();
      return;
    }
  }
}

void Directory::LearnRuns(const ChunkImage& image) {
  if (image.runs.empty()) return;
  std::lock_guard<std::mutex> l(runs_mu_);
  for (const auto& [head, blocks] : image.runs) runs_[head] = blocks;
}

bool Directory::FailIfCollected(ChunkId id, const Request& r) {
  uint32_t class_index;
  {
    std::lock_guard<std::mutex> l(collected_mu_);
    auto it = collected_class_.find(id);
    if (it == collected_class_.end()) return false;
    class_index = it->second;
  }
  std::string what = "chunk " + ChunkName(id);
  if (class_index != 0 && class_namer_) what += " (" + class_namer_(class_index) + ")";
  if (r.kind == Kind::kFree) {
    sink_->Freed(r.node, r.seq, id);
  } else {
    Fail(id, r, sospb::FREED,
         what + " was freed by the distributed garbage collector: no node held it and no "
                "reachable object named it, yet " + Describe(r.node) + " asked for it");
  }
  return true;
}

bool Directory::WantsCollection() const {
  const uint64_t events = events_.load(std::memory_order_relaxed);
  if (events == 0) return false;
  const uint64_t live = live_.load(std::memory_order_relaxed);
  // Each collection costs time proportional to the live entries; waiting
  // for changes in proportion to them keeps the cost per change constant.
  if (events >= std::max<uint64_t>(1024, live / 4)) return true;
  // A quiet program's garbage goes too, within a second or so.
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  return now - last_collection_ns_.load(std::memory_order_relaxed) >= 1000000000 &&
         events >= live / 64;
}

CollectionResult Directory::Collect() {
  const auto start = std::chrono::steady_clock::now();
  CollectionResult result;
  // Nothing changes while the collector marks and sweeps: every stripe,
  // then the listing (the order every other path takes them in).
  for (Stripe& s : stripes_) s.mu.lock();
  holds_.LockAll();
  events_.store(0, std::memory_order_relaxed);

  std::vector<ChunkId> work;
  holds_.AppendHeldLocked(&work);
  const size_t holds = work.size();
  for (Stripe& s : stripes_) {
    for (const auto& [id, e] : s.entries) {
      const bool named = IsNamed(id) && !ProgramEnded(e.program);
      if (named || e.txn != 0 || !e.queue.empty() || e.state == State::kModified)
        work.push_back(id);
    }
  }
  // An entry is marked in place; an id without one (a chunk still at its
  // creator, held by a node that was shipped its id) matters only as the
  // head of a run of blocks.
  const uint32_t epoch = ++collection_ == 0 ? ++collection_ : collection_;
  std::unordered_set<ChunkId> marked_heads;
  {
    std::lock_guard<std::mutex> l(runs_mu_);
    while (!work.empty()) {
      const ChunkId id = work.back();
      work.pop_back();
      Stripe& s = StripeOf(id);
      auto it = s.entries.find(id);
      if (it != s.entries.end()) {
        Entry& e = it->second;
        if (e.marked == epoch) continue;
        e.marked = epoch;
        result.marked++;
        if (e.image != nullptr) work.insert(work.end(), e.image->refs.begin(), e.image->refs.end());
      }
      if (runs_.empty()) continue;
      auto run = runs_.find(id);
      if (run != runs_.end() && marked_heads.insert(id).second) {
        for (uint32_t k = 1; k <= run->second; k++) work.push_back(id + k);
      }
    }
    for (auto it = runs_.begin(); it != runs_.end();)
      it = marked_heads.count(it->first) == 0 ? runs_.erase(it) : std::next(it);
  }

  std::vector<std::pair<ChunkId, uint32_t>> freed;
  for (Stripe& s : stripes_) {
    for (auto it = s.entries.begin(); it != s.entries.end();) {
      if (it->second.marked == epoch) {
        ++it;
        continue;
      }
      // Unreachable entries are idle (a request under way is a root).
      const uint32_t class_index = it->second.image != nullptr ? it->second.image->class_index : 0;
      freed.emplace_back(it->first, class_index);
      it = s.entries.erase(it);
    }
  }
  live_ -= freed.size();
  result.collected = freed.size();

  holds_.UnlockAll();
  for (size_t i = kStripes; i-- > 0;) stripes_[i].mu.unlock();

  if (!freed.empty()) {
    std::lock_guard<std::mutex> l(collected_mu_);
    for (const auto& [id, class_index] : freed) {
      if (collected_class_.emplace(id, class_index).second) collected_order_.push_back(id);
    }
    while (collected_order_.size() > kCollectedRemembered) {
      collected_class_.erase(collected_order_.front());
      collected_order_.pop_front();
    }
  }
  const auto end = std::chrono::steady_clock::now();
  last_collection_ns_ =
      std::chrono::duration_cast<std::chrono::nanoseconds>(end.time_since_epoch()).count();
  result.pause = std::chrono::duration_cast<std::chrono::microseconds>(end - start);
  std::lock_guard<std::mutex> l(stats_mu_);
  stats_.collections++;
  stats_.collected += freed.size();
  stats_.holds = holds;
  stats_.last_pause_us = static_cast<uint64_t>(result.pause.count());
  stats_.max_pause_us = std::max(stats_.max_pause_us, stats_.last_pause_us);
  return result;
}

}  // namespace sos
}  // namespace djava
