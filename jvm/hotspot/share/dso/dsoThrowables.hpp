/*
 * djava: throwables travel between nodes as serialization sends them.
 *
 * A Throwable's stack trace lives in its `backtrace`, a structure of this
 * node's class metadata (methods by number, bytecode indexes) that Java
 * turns into StackTraceElement[] only when someone asks (getStackTrace,
 * printStackTrace). No other node can read it. So `backtrace` and `depth`
 * are node-local fields (they neither leave the node nor are overwritten
 * there), and a throwable whose stack trace was never asked for carries its
 * frames on the wire in place of its `stackTrace` field: class, method,
 * file, line, module and loader of each, as StackTraceElement holds them.
 * The receiving node makes the StackTraceElement[] from them, so
 * getStackTrace, printStackTrace, getCause and getSuppressed work on every
 * node, and read as they do where the throwable was made.
 *
 * The frames are read from the backtrace while the throwable is encoded,
 * which may be where no Java object can be allocated: they are text in the
 * encoding's blob, and the objects are made on arrival.
 */

#ifndef SHARE_DSO_DSOTHROWABLES_HPP
#define SHARE_DSO_DSOTHROWABLES_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "utilities/exceptions.hpp"

class JavaThread;
class Klass;
class stringStream;

class DsoThrowables : AllStatic {
 public:
  // Whether the field at offset of an instance of k stays on its node
  // (Throwable.backtrace, Throwable.depth); *size is its size.
  static bool is_node_local_field(Klass* k, int offset, int* size);

  // Whether the reference field at offset of obj is the `stackTrace` of a
  // throwable whose trace was never materialized here: its frames travel
  // instead (describe_stack_trace). No safepoint.
  static bool travels_as_frames(oop obj, int offset);
  // The frames of throwable's backtrace as text (resource area). No
  // safepoint, no Java allocation.
  static void describe_stack_trace(oop throwable, stringStream* out);
  // The frames of `thread`'s stack now, in the same text (Thread.
  // getStackTrace asked by another node). Where its stack can be walked:
  // the thread itself, or a handshake with it.
  static void describe_thread_stack(JavaThread* thread, stringStream* out);
  // A new StackTraceElement[] from that text; NULL, with an InternalError
  // pending, if the text is malformed.
  static oop make_stack_trace(JavaThread* current, const char* frames, TRAPS);
};

#endif // SHARE_DSO_DSOTHROWABLES_HPP
