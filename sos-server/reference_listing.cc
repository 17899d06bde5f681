#include "reference_listing.h"

namespace djava {
namespace sos {

ReferenceListing::List* ReferenceListing::ListOf(NodeId node) {
  std::lock_guard<std::mutex> l(lists_mu_);
  std::unique_ptr<List>& list = lists_[node];
  if (list == nullptr) list = std::make_unique<List>();
  return list.get();
}

void ReferenceListing::Ship(NodeId node, const ChunkId* ids, size_t n) {
  if (n == 0) return;
  List* list = ListOf(node);
  std::lock_guard<std::mutex> l(list->mu);
  for (size_t i = 0; i < n; i++) list->shipments[ids[i]]++;
}

bool ReferenceListing::Release(NodeId node, ChunkId id, uint64_t shipments, bool* excess) {
  *excess = false;
  List* list = ListOf(node);
  std::lock_guard<std::mutex> l(list->mu);
  auto it = list->shipments.find(id);
  if (it == list->shipments.end()) {
    // Nothing counted: a chunk the node made that never left it, or one
    // whose program ended (Forget took its holds). Not an error.
    return true;
  }
  if (shipments >= it->second) {
    *excess = shipments > it->second;
    list->shipments.erase(it);
    return true;
  }
  it->second -= shipments;
  return false;
}

void ReferenceListing::DropNode(NodeId node) {
  std::lock_guard<std::mutex> l(lists_mu_);
  auto it = lists_.find(node);
  if (it == lists_.end()) return;
  // Emptied, not erased: a thread may have looked the list up just now.
  std::lock_guard<std::mutex> ll(it->second->mu);
  it->second->shipments = {};
}

void ReferenceListing::Forget(const std::vector<ChunkId>& ids) {
  if (ids.empty()) return;
  std::lock_guard<std::mutex> l(lists_mu_);
  for (auto& [node, list] : lists_) {
    std::lock_guard<std::mutex> ll(list->mu);
    for (ChunkId id : ids) list->shipments.erase(id);
  }
}

bool ReferenceListing::Holds(NodeId node, ChunkId id) { return Shipments(node, id) != 0; }

uint64_t ReferenceListing::Shipments(NodeId node, ChunkId id) {
  List* list = ListOf(node);
  std::lock_guard<std::mutex> l(list->mu);
  auto it = list->shipments.find(id);
  return it == list->shipments.end() ? 0 : it->second;
}

void ReferenceListing::LockAll() {
  lists_mu_.lock();
  for (auto& [node, list] : lists_) list->mu.lock();
}

void ReferenceListing::UnlockAll() {
  for (auto& [node, list] : lists_) list->mu.unlock();
  lists_mu_.unlock();
}

void ReferenceListing::AppendHeldLocked(std::vector<ChunkId>* out) const {
  for (const auto& [node, list] : lists_)
    for (const auto& [id, count] : list->shipments) out->push_back(id);
}

size_t ReferenceListing::SizeLocked() const {
  size_t n = 0;
  for (const auto& [node, list] : lists_) n += list->shipments.size();
  return n;
}

}  // namespace sos
}  // namespace djava
