#include "wire/traffic.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <atomic>

namespace djava {
namespace wire {

namespace {

std::atomic<uint64_t> frames_sent{0};
std::atomic<uint64_t> bytes_sent{0};
std::atomic<uint64_t> frames_received{0};
std::atomic<uint64_t> bytes_received{0};
std::atomic<uint64_t> connections_tcp{0};
std::atomic<uint64_t> connections_ucx{0};

}  // namespace

Traffic ProcessTraffic() {
  Traffic t;
  t.frames_sent = frames_sent.load(std::memory_order_relaxed);
  t.bytes_sent = bytes_sent.load(std::memory_order_relaxed);
  t.frames_received = frames_received.load(std::memory_order_relaxed);
  t.bytes_received = bytes_received.load(std::memory_order_relaxed);
  t.connections_tcp = connections_tcp.load(std::memory_order_relaxed);
  t.connections_ucx = connections_ucx.load(std::memory_order_relaxed);
  return t;
}

std::string KindCounts::Describe(const google::protobuf::Descriptor* type) const {
  std::string out;
  for (size_t kind = 0; kind < kKinds; kind++) {
    const uint64_t n = counts_[kind].load(std::memory_order_relaxed);
    if (n == 0) continue;
    const auto* field = type->FindFieldByNumber(static_cast<int>(kind));
    if (!out.empty()) out += ", ";
    out += (field != nullptr ? field->name() : "other") + " " + std::to_string(n);
  }
  return out.empty() ? "nothing" : out;
}

size_t CopyTextOut(const std::string& text, char* out, size_t max) {
  if (out != nullptr && max > 0) {
    const size_t n = std::min(text.size(), max - 1);
    text.copy(out, n);
    out[n] = '\0';
  }
  return text.size();
}

void CountSent(uint64_t bytes) {
  frames_sent.fetch_add(1, std::memory_order_relaxed);
  bytes_sent.fetch_add(bytes, std::memory_order_relaxed);
}

void CountConnection(bool ucx) {
  (ucx ? connections_ucx : connections_tcp).fetch_add(1, std::memory_order_relaxed);
}

void CountReceived(uint64_t bytes) {
  frames_received.fetch_add(1, std::memory_order_relaxed);
  bytes_received.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace wire
}  // namespace djava
