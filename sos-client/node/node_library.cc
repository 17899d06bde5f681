// libdjava_node.so's own entry point: the interface version the JVM checks
// before it calls anything else, so that a JVM and a library built from
// different sources refuse each other with a clear message instead of
// calling through mismatched signatures.
#include <cstdint>

extern "C" __attribute__((visibility("default"))) uint32_t djava_node_abi_version() {
  // Raise when any exported signature or struct layout changes.
  return 17;
}
