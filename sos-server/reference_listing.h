// ReferenceListing: which nodes hold which chunks, for the distributed
// garbage collector (Birrell et al., "Network Objects": reference listing).
//
// A node holds a chunk from the moment the server ships it the chunk's id
// (a grant of the chunk, or the id among a granted chunk's references) or
// makes it the holder of one it created, until the node releases it. The
// server counts shipments per node and chunk; a release names how many it
// covers, so a release that crosses a later shipment on the wire leaves
// the hold in place (Birrell's sequence numbers, as counts). Only what the
// server itself sends is counted, so a hold is recorded before the node can
// learn of the id at all.
//
// Locking: one mutex per node's list. Callers may hold a directory stripe
// while they call in, never the reverse.
#ifndef DJAVA_SOS_REFERENCE_LISTING_H_
#define DJAVA_SOS_REFERENCE_LISTING_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "sos/ids.h"

namespace djava {
namespace sos {

class ReferenceListing {
 public:
  ReferenceListing() = default;
  ReferenceListing(const ReferenceListing&) = delete;
  ReferenceListing& operator=(const ReferenceListing&) = delete;

  // One more shipment of each id to node.
  void Ship(NodeId node, const ChunkId* ids, size_t n);
  void Ship(NodeId node, ChunkId id) { Ship(node, &id, 1); }
  // Takes `shipments` back from node's count of id. True when the node no
  // longer holds it (none left). *excess is set when the node released more
  // than it was shipped (a confused node: the hold goes).
  bool Release(NodeId node, ChunkId id, uint64_t shipments, bool* excess);
  // The node is gone: it holds nothing.
  void DropNode(NodeId node);
  // The chunks are gone (their program ended): no node holds them.
  void Forget(const std::vector<ChunkId>& ids);
  // Whether node holds id (for tests and assertions).
  bool Holds(NodeId node, ChunkId id);
  uint64_t Shipments(NodeId node, ChunkId id);

  // For the collector, which calls them while no Ship or Release can run
  // (it holds every stripe, and the listing's own lock, LockAll).
  void LockAll();
  void UnlockAll();
  // Every id some node holds; with LockAll.
  void AppendHeldLocked(std::vector<ChunkId>* out) const;
  // How many (node, chunk) holds there are; with LockAll.
  size_t SizeLocked() const;

 private:
  struct List {
    std::mutex mu;
    std::unordered_map<ChunkId, uint64_t> shipments;
  };
  List* ListOf(NodeId node);  // created on first use

  std::mutex lists_mu_;  // guards lists_ itself
  std::unordered_map<NodeId, std::unique_ptr<List>> lists_;
};

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_REFERENCE_LISTING_H_
