/*
 * djava: what Runtime.availableProcessors() answers in a program.
 *
 * A Java program sizes its parallelism by availableProcessors(): the
 * ForkJoin common pool, parallel streams, newWorkStealingPool and most
 * programs' own pools. Under djava the processors are the cluster's, not the
 * launcher's: the thread manager fixes a program's count when the launcher
 * registers it (the registered thread servers' capacities added up, or the
 * launcher's -XX:ActiveProcessorCount) and hands it to every thread server
 * with each thread it places there. Every node then answers the same count
 * to the program's threads for the program's life (docs/THREAD-MANAGER.md,
 * Sizing). Threads that belong to no program (the VM's and djava's own, a
 * thread server's event loop) see the node's own processors.
 */

#ifndef SHARE_DSO_DSOPROCESSORS_HPP
#define SHARE_DSO_DSOPROCESSORS_HPP

#include "memory/allStatic.hpp"
#include "utilities/globalDefinitions.hpp"

class JavaThread;

class DsoProcessors : AllStatic {
 public:
  // Records the processor count of `program` (a launcher's at registration,
  // a thread server's at the program's first thread); the first count
  // recorded stays.
  static void set(uint64_t program, int processors);
  // The count of `program`, or 0 if none was recorded.
  static int of(uint64_t program);
  // The program ended (a thread server forgets it).
  static void forget(uint64_t program);
  // What availableProcessors() answers to `current`: its program's count,
  // or 0 for a thread of no program (the caller then answers the node's).
  static int for_thread(JavaThread* current);
};

#endif // SHARE_DSO_DSOPROCESSORS_HPP
