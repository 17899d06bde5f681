/*
 * djava: VM flags of the distributed heap. Declared like HotSpot's own flag
 * groups and joined into ALL_FLAGS by patches/0002.
 */

#ifndef SHARE_DSO_DSOGLOBALS_HPP
#define SHARE_DSO_DSOGLOBALS_HPP

#include "runtime/globals_shared.hpp"

#define DSO_FLAGS(develop,                                                    \
                  develop_pd,                                                 \
                  product,                                                    \
                  product_pd,                                                 \
                  notproduct,                                                 \
                  range,                                                      \
                  constraint)                                                 \
                                                                              \
  product(bool, DistributedJava, false,                                       \
          "Run this JVM as a node of a djava cluster: join the cluster "      \
          "named by DjavaCluster and share the program's heap and threads "   \
          "with the cluster's thread servers")                                \
                                                                              \
  product(ccstr, DjavaCluster, NULL,                                          \
          "host:port of the djava cluster's thread manager")                  \
                                                                              \
  product(ccstr, DjavaSecretFile, NULL,                                       \
          "The cluster secret (a file of mode 0600). Default: the "           \
          "environment's DJAVA_SECRET_FILE, else ~/.djava/cluster/secret")    \
                                                                              \
  product(ccstr, DjavaTransport, NULL,                                        \
          "How this node's connections travel: auto (UCX when the other "     \
          "end offers it too), ucx (UCX only) or tcp. Default: the "          \
          "environment's DJAVA_TRANSPORT, else auto")                         \
                                                                              \
  product(uint, DjavaThreadServer, 0,                                         \
          "Join the cluster as a thread server running this many Java "       \
          "threads at once (djava.runtime.ThreadServer is the main class; "   \
          "build/bin/thread-server starts it). 0: a program's launcher")      \
          range(0, 100000)                                                    \
                                                                              \
  product(bool, PrintDistributedStatistics, false,                            \
          "At exit, print this node's shared-heap statistics: threads "       \
          "shipped, objects published, misses, invalidations, flushes and "   \
          "bytes moved")                                                      \
                                                                              \
  product(bool, DjavaShipThreads, true, DIAGNOSTIC,                           \
          "Thread.start() of a program's thread on a cluster node runs it on "\
          "a thread server. Off: threads stay on their node, which still "    \
          "shares the heap (for testing the shared heap alone)")              \
                                                                              \
  product(bool, DjavaSpeculateCachedHits, true, DIAGNOSTIC,                  \
          "C2 tests an access site whose replicas always passed the cached "  \
          "test in C1's profiling code with that test and a trap on a miss, " \
          "instead of a call of the slow path")                               \
                                                                              \
  product(bool, DjavaMonitorLinger, true, DIAGNOSTIC,                        \
          "A thread that exits a shared monitor and enters it again at "      \
          "once, time after time, keeps it a moment after its exit "          \
          "instead of releasing it to the monitor service at once (every "    \
          "node of the cluster should agree)")                                \
                                                                              \
  product(ccstr, DjavaNodeLibrary, NULL, DIAGNOSTIC,                          \
          "The node library to load (default: lib/libdjava_node.so in "       \
          "java.home)")                                                       \
                                                                              \
  product(bool, DjavaSelfTest, false, DIAGNOSTIC,                             \
          "Run the distributed heap's self-test when the VM has started: "    \
          "shared-object tags and the replica table through young and full "  \
          "GCs, identity hashing and monitor inflation. A failure ends the "  \
          "VM with an error")                                                 \
                                                                              \
  product(uint, DjavaSelfTestObjects, 2000, DIAGNOSTIC,                       \
          "Number of objects the distributed heap's self-test shares")        \
          range(16, 1000000)                                                  \
                                                                              \
  product(uint, DjavaStressLocalWriteMillis, 0, DIAGNOSTIC,                   \
          "System.arraycopy, Unsafe.copyMemory and Array.set into a local "   \
          "array of a million elements or more pause this long between "      \
          "finding their objects local and writing, as a thread descheduled " \
          "there would: for tests of another thread making the objects "      \
          "shared meanwhile (dsoFence.hpp)")                                  \
          range(0, 10000)                                                     \
                                                                              \
  product(bool, DjavaStressAttachGC, false, DIAGNOSTIC,                      \
          "A full GC right after each fetch of an object by id alone (a "     \
          "shipped thread's Thread object), as one could happen there: for "  \
          "tests that the object made survives it")                          \
                                                                              \
  product(uint, DjavaArrayBlockBytes, 8192,                                   \
          "An array this node makes shared is kept coherent in blocks of "    \
          "this many bytes of elements, each block its own chunk, when it "   \
          "holds two blocks or more; 0 keeps every array whole. A power "     \
          "of two; other nodes follow the layout its publisher chose")       \
          range(0, 1048576)                                                   \
                                                                              \
  product(bool, DjavaCompileWithC2, false, EXPERIMENTAL,                      \
          "A node compiles hot methods with C2 as well as C1 (tiered), "      \
          "its code carrying the shared-object checks; off: C1 alone")        \

DECLARE_FLAGS(DSO_FLAGS)

#endif // SHARE_DSO_DSOGLOBALS_HPP
