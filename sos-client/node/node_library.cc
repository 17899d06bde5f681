// libdjava_node.so's own entry point: the interface version the JVM checks
// before it calls anything else, so that a JVM and a library built from
// different sources refuse each other with a clear message instead of
// calling through mismatched signatures.
#include <cstdint>

#include "wire/traffic.h"

extern "C" __attribute__((visibility("default"))) uint32_t djava_node_abi_version() {
  // Raise when any exported signature or struct layout changes.
  return 34;
}

// What all of this process's cluster connections carried (wire/traffic.h):
// counts[0] frames sent, [1] their bytes, [2] frames received, [3] their
// bytes.
extern "C" __attribute__((visibility("default"))) void djava_node_traffic(uint64_t counts[4]) {
  djava::wire::Traffic t = djava::wire::ProcessTraffic();
  counts[0] = t.frames_sent;
  counts[1] = t.bytes_sent;
  counts[2] = t.frames_received;
  counts[3] = t.bytes_received;
}

// This process's authenticated connections by transport: counts[0] went on
// over tcp, counts[1] over ucx (wire/ucx_channel.h).
extern "C" __attribute__((visibility("default"))) void djava_node_connections(uint64_t counts[2]) {
  djava::wire::Traffic t = djava::wire::ProcessTraffic();
  counts[0] = t.connections_tcp;
  counts[1] = t.connections_ucx;
}
