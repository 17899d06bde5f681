// ClassRegistry: a node's class descriptors, numbered locally, and their
// numbering on each of the node's connection directions, per sos-server
// shard (`connection`, the shard's index): outbound (the bypass connection,
// where flush replies carry chunks to the server) sends a descriptor in full
// once and its number afterwards; inbound (the main connection) learns the
// server's numbers from the first grant using them.
#ifndef DJAVA_SOS_CLIENT_CLASS_REGISTRY_H_
#define DJAVA_SOS_CLIENT_CLASS_REGISTRY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "sos.pb.h"

namespace djava {
namespace sos {

struct ClassInfo {
  std::string name;
  uint64_t program = 0;
  int32_t element_type = 0;
};

class ClassRegistry {
 public:
  // The local number (>= 1) of a descriptor.
  uint32_t Intern(const std::string& name, uint64_t program, int32_t element_type);
  // Stable for the registry's life; null for an unknown number.
  const ClassInfo* Get(uint32_t local) const;

  // Outbound: fills c's class_ref (and class_def the first time).
  void Describe(size_t connection, uint32_t local, sospb::Chunk* c);
  // Inbound: the local number for c's class; 0 when c has none. False when
  // c uses a server number never defined on this connection.
  bool Resolve(size_t connection, const sospb::Chunk& c, uint32_t* local);

 private:
  using Key = std::tuple<std::string, uint64_t, int32_t>;
  mutable std::mutex mu_;
  std::deque<ClassInfo> classes_;  // local number - 1; deque: stable addresses
  std::map<Key, uint32_t> index_;
  std::set<std::pair<size_t, uint32_t>> sent_;
  std::map<std::pair<size_t, uint32_t>, uint32_t> server_to_local_;
};

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_CLIENT_CLASS_REGISTRY_H_
