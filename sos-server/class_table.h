// ClassTable: the server-wide numbering of class descriptors. Chunks store a
// descriptor's index instead of its name; each connection direction then
// numbers descriptors for itself (node_session.h), so a name crosses a
// connection once.
#ifndef DJAVA_SOS_CLASS_TABLE_H_
#define DJAVA_SOS_CLASS_TABLE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "sos.pb.h"

namespace djava {
namespace sos {

class ClassTable {
 public:
  // The index of d (>= 1), assigned on first sight.
  uint32_t Intern(const sospb::ClassDescriptor& d);
  // False for an index never assigned.
  bool Lookup(uint32_t index, sospb::ClassDescriptor* d) const;
  size_t size() const;

 private:
  using Key = std::tuple<std::string, uint64_t, int32_t>;
  mutable std::mutex mu_;
  std::map<Key, uint32_t> index_;
  std::vector<sospb::ClassDescriptor> by_index_{sospb::ClassDescriptor()};
};

}  // namespace sos
}  // namespace djava

#endif  // DJAVA_SOS_CLASS_TABLE_H_
