#include "class_registry.h"

namespace djava {
namespace sos {

uint32_t ClassRegistry::Intern(const std::string& name, uint64_t program, int32_t element_type) {
  std::lock_guard<std::mutex> l(mu_);
  Key key{name, program, element_type};
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  classes_.push_back(ClassInfo{name, program, element_type});
  const uint32_t local = static_cast<uint32_t>(classes_.size());
  index_.emplace(std::move(key), local);
  return local;
}

const ClassInfo* ClassRegistry::Get(uint32_t local) const {
  std::lock_guard<std::mutex> l(mu_);
  if (local == 0 || local > classes_.size()) return nullptr;
  return &classes_[local - 1];
}

void ClassRegistry::Describe(size_t connection, uint32_t local, sospb::Chunk* c) {
  if (local == 0) return;
  std::lock_guard<std::mutex> l(mu_);
  c->set_class_ref(local);
  if (!sent_.emplace(connection, local).second) return;
  const ClassInfo& info = classes_[local - 1];
  sospb::ClassDescriptor* d = c->mutable_class_def();
  d->set_name(info.name);
  d->set_program(info.program);
  d->set_element_type(info.element_type);
}

bool ClassRegistry::Resolve(size_t connection, const sospb::Chunk& c, uint32_t* local) {
  *local = 0;
  if (c.class_ref() == 0) return true;
  uint32_t fresh = 0;
  if (c.has_class_def())
    fresh = Intern(c.class_def().name(), c.class_def().program(), c.class_def().element_type());
  std::lock_guard<std::mutex> l(mu_);
  if (fresh != 0) server_to_local_[{connection, c.class_ref()}] = fresh;
  auto it = server_to_local_.find({connection, c.class_ref()});
  if (it == server_to_local_.end()) return false;
  *local = it->second;
  return true;
}

}  // namespace sos
}  // namespace djava
