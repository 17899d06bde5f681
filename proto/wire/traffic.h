// Traffic: what this process's connections carried, all of them together
// (a node's shared-object cache, monitor client and thread-manager client
// alike): frames and their bytes, each way, length prefixes included. For
// measuring messages per operation (-XX:+PrintDistributedStatistics, the
// benchmarks); a handshake's frames count too.
#ifndef DJAVA_WIRE_TRAFFIC_H_
#define DJAVA_WIRE_TRAFFIC_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace google {
namespace protobuf {
class Descriptor;
}  // namespace protobuf
}  // namespace google

namespace djava {
namespace wire {

struct Traffic {
  uint64_t frames_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t frames_received = 0;
  uint64_t bytes_received = 0;
  // Authenticated connections opened (either end), by the channel they
  // continued on.
  uint64_t connections_tcp = 0;
  uint64_t connections_ucx = 0;
};

// The totals since the process started; each counter is read atomically,
// the four not as one.
Traffic ProcessTraffic();

// One message type's messages counted by kind: the case of its oneof, which
// is the field number of the body it holds. For the per-kind lines of
// -XX:+PrintDistributedStatistics; counted on every message, so lock-free.
class KindCounts {
 public:
  void Count(int kind) {
    counts_[std::min<size_t>(static_cast<size_t>(kind), kKinds - 1)].fetch_add(
        1, std::memory_order_relaxed);
  }
  // "name n, name n" in field-number order, named by type's fields (the
  // message type counted); "nothing" when none was counted.
  std::string Describe(const google::protobuf::Descriptor* type) const;

 private:
  // Above every field number of a counted oneof; a larger case shares the
  // last slot.
  static constexpr size_t kKinds = 32;
  std::array<std::atomic<uint64_t>, kKinds> counts_{};
};

// A C ABI's text answer: text into out, cut to max bytes with the NUL
// (out NULL or max 0: nothing written). Returns the text's whole length.
size_t CopyTextOut(const std::string& text, char* out, size_t max);

// For Connection.
void CountSent(uint64_t bytes);
void CountReceived(uint64_t bytes);
// For the handshake: a connection authenticated and goes on over ucx or tcp.
void CountConnection(bool ucx);

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_TRAFFIC_H_
