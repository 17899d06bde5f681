#include "class_table.h"

namespace djava {
namespace sos {

uint32_t ClassTable::Intern(const sospb::ClassDescriptor& d) {
  std::lock_guard<std::mutex> l(mu_);
  Key key{d.name(), d.program(), d.element_type()};
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const uint32_t index = static_cast<uint32_t>(by_index_.size());
  by_index_.push_back(d);
  index_.emplace(std::move(key), index);
  return index;
}

bool ClassTable::Lookup(uint32_t index, sospb::ClassDescriptor* d) const {
  std::lock_guard<std::mutex> l(mu_);
  if (index == 0 || index >= by_index_.size()) return false;
  *d = by_index_[index];
  return true;
}

size_t ClassTable::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return by_index_.size() - 1;
}

}  // namespace sos
}  // namespace djava
