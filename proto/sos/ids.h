// Chunk ids and their home: the two pure functions every sos component
// agrees on. An id is the creating node's number in the top 24 bits and that
// node's own sequence in the low 40, so a node allocates without a round trip
// and the server can tell, from an id alone, whom to ask for a chunk it has
// never seen. The home shard is a function of the id only, so the directory
// can be split over several sos-servers without a lookup service.
#ifndef DJAVA_SOS_IDS_H_
#define DJAVA_SOS_IDS_H_

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace djava {
namespace sos {

using NodeId = uint32_t;
using ChunkId = uint64_t;

constexpr int kSequenceBits = 40;
constexpr NodeId kMaxNode = (1u << 24) - 1;
constexpr uint64_t kMaxSequence = (uint64_t{1} << kSequenceBits) - 1;

inline NodeId CreatorOf(ChunkId id) { return static_cast<NodeId>(id >> kSequenceBits); }

// Named chunks: ids whose "creator" is this reserved node number are not
// made by any node. Every node computes such an id from a name (a JVM: a
// class's static fields in a program), and the chunk exists from the start,
// empty, at its home; the first writer gives it its bytes. No node is ever
// given this number.
constexpr NodeId kNamedNode = kMaxNode;
inline bool IsNamed(ChunkId id) { return CreatorOf(id) == kNamedNode; }
inline ChunkId MakeChunkId(NodeId node, uint64_t sequence) {
  return (static_cast<uint64_t>(node) << kSequenceBits) | sequence;
}

// How many sos-servers the directory may be split over.
constexpr size_t kMaxShards = 1024;

// Consecutive ids of one creator spread over all shards (a multiplicative
// hash: sequences are dense, shards count is small).
inline size_t HomeShard(ChunkId id, size_t shards) {
  return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> 32) % shards;
}

// How logs and error messages name a chunk: 0x, then 16 hex digits, so that
// the creator (the top six digits) can be read off.
inline std::string ChunkName(ChunkId id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, id);
  return buf;
}

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_IDS_H_
