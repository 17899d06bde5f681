/*
 * djava: the fence between a local object's last local write and its first
 * flush.
 *
 * The interpreter writes a local (untagged) object with no synchronization:
 * it tests the mark, then stores (dsoInterpreter.hpp); System.arraycopy and
 * Unsafe do the same in VM state. Another thread may publish the object
 * between that test and the store (a flush of an object referencing it,
 * Thread.start). If the object's bytes then left this node before the
 * store, the write would be lost: stored into a copy this node no longer
 * holds in M, never invalidating the readers elsewhere.
 *
 * So a newly published object's first flush waits for a fence: a handshake
 * with every Java thread that began after the object was tagged. A thread
 * reaches a handshake only between bytecodes or out of VM state, so once
 * it has, every write it began on the then-local object is stored, and its
 * later tests see the tag. A thread inside a JNI critical region (its
 * native code may write a local array it holds directly) keeps the fence
 * from completing until it leaves the region.
 *
 * publish_one stamps the entry with the fence it needs (stamp()) and asks
 * for one at once (request()), so that by the time another node asks for
 * the bytes (a network round trip later) the fence is usually done. A flush
 * before then answers DJAVA_SOS_PRODUCE_LATER (a produce callback holds a
 * chunk's mutex and must not wait for other threads); when the fence
 * completes, the fence thread tells sos-client to retry at once.
 *
 * C2's code tests an object once where the interpreter and C1 test it at
 * every access: it may keep a field's or an element's outcome "local"
 * across safepoints, out of a loop (dsoBarrierSetC2.cpp). So the fence
 * also deoptimizes every frame of C2's code that holds an object awaiting
 * it; the frame goes on in the interpreter, which tests again.
 */

#ifndef SHARE_DSO_DSOFENCE_HPP
#define SHARE_DSO_DSOFENCE_HPP

#include "memory/allStatic.hpp"
#include "runtime/atomic.hpp"
#include "utilities/globalDefinitions.hpp"

class JavaThread;
class Monitor;

class DsoFence : AllStatic {
 public:
  // Starts the fence thread (a JavaThread of the VM's own). At node join.
  static void start(JavaThread* current);

  // The fence an object tagged before this call needs: a handshake begun
  // after it. Never 0.
  static uint64_t stamp();
  // Whether that fence has completed.
  static bool passed(uint64_t stamp);
  // Asks for fences until `stamp` has passed. Never waits; any thread,
  // under any lock (a produce callback's chunk mutex).
  static void request(uint64_t stamp);

  // In a produce callback, for an entry stamped `stamp`: true if its bytes
  // may leave; false (and a fence asked for, and the retry woken when it
  // completes) if the flush must answer DJAVA_SOS_PRODUCE_LATER.
  static bool flush_may_go(uint64_t stamp);

  // What the fences are doing, for a warning: fences begun, completed and
  // asked for, and the thread a handshake last found in a JNI critical
  // region. A static buffer (the last caller's); any thread.
  static const char* describe();

  // Fences completed, and flushes that waited for one (statistics).
  static uint64_t fences_run() { return _completed; }
  static uint64_t flushes_waited() { return _flushes_waited; }
  // Frames of C2's code a fence deoptimized (statistics), and whether
  // fences look for them (this node compiles with C2).
  static uint64_t frames_deoptimized() { return Atomic::load(&_frames_deoptimized); }
  static void note_frame_deoptimized() { Atomic::inc(&_frames_deoptimized); }
  static bool walks_compiled_frames() { return _walks_compiled_frames; }

 private:
  static void thread_entry(JavaThread* self, JavaThread* THREAD);
  static bool run_one(JavaThread* self);

  static volatile uint64_t _started;    // handshakes begun
  static volatile uint64_t _completed;  // the last one completed
  static volatile uint64_t _requested;  // the fence requests wait for
  static volatile uint64_t _flushes_waited;
  static volatile uint64_t _frames_deoptimized;
  static bool _walks_compiled_frames;
  static Monitor* _monitor;             // the fence thread waits on it
};

#endif // SHARE_DSO_DSOFENCE_HPP
