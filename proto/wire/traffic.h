// Traffic: what this process's connections carried, all of them together
// (a node's shared-object cache, monitor client and thread-manager client
// alike): frames and their bytes, each way, length prefixes included. For
// measuring messages per operation (-XX:+PrintDistributedStatistics, the
// benchmarks); a handshake's frames count too.
#ifndef DJAVA_WIRE_TRAFFIC_H_
#define DJAVA_WIRE_TRAFFIC_H_

#include <cstdint>

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

// For Connection.
void CountSent(uint64_t bytes);
void CountReceived(uint64_t bytes);
// For the handshake: a connection authenticated and goes on over ucx or tcp.
void CountConnection(bool ucx);

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_TRAFFIC_H_
