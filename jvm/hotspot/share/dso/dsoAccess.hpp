/*
 * djava: shared objects on the VM's paths other than the bytecode
 * interpreter that read or write an object's fields or array elements:
 * jdk.internal.misc.Unsafe (get/put of every kind, CAS, copyMemory,
 * setMemory), System.arraycopy, Object.clone, JNI's field and array
 * functions, and reflection on arrays and boxes (patches/0010).
 *
 * Each such access to a replica is bracketed like the interpreter's
 * (dsoInterpreter.hpp): DsoHeap::begin_access for read (S or M) or write (M;
 * also every compare-and-set, which is a write whether it succeeds or not),
 * the raw access, then DsoHeap::end_access, after the store for a write, so
 * that a flush never loses it. A foreign object (one its node cannot share)
 * is refused with an IllegalStateException naming its class, its node and
 * the reason; a replica with no chunk (a VM that is not a cluster node: the
 * self-test's replicas) with an InternalError that names the object's id
 * and class; so is a failed access (lost chunk,
 * disconnected cluster), with the cache's reason. A replica's bytes are never
 * read or written without coherence.
 *
 * The hooks in OpenJDK files are one or two lines each. For a local object a
 * hook costs one load of the mark word and a sign test (for two objects, one
 * each): DSO_ACCESS declares a DsoAccessMark, which does nothing unless the
 * object is a replica, and ends the access when it goes out of scope.
 *
 * GC may run while an access begins (a miss waits for the network in native
 * state): the object variable the hook names is updated; any other raw oop
 * the caller holds must be resolved after the hook.
 *
 * No access is ever held while another begins: a thread that holds one
 * chunk and waits for another can deadlock with a node doing the opposite.
 * An object tested local before an access to another object began is
 * tested again once it is held: the access may have waited for the network,
 * and another thread may have made the object shared meanwhile (a local
 * object is written without coherence only between a test and a store that
 * no safepoint or wait separates; dsoFence.hpp).
 * A copy between two distinct replicas goes through a buffer (a C-heap one
 * for primitive bytes, a local array for references): read the source,
 * end, then write the destination. JNI's GetPrimitiveArrayCritical gives a
 * replica's native code a copy, taken under a read access and written back
 * under a write access by ReleasePrimitiveArrayCritical (the JNI
 * specification allows a copy; the array is never pinned).
 */

#ifndef SHARE_DSO_DSOACCESS_HPP
#define SHARE_DSO_DSOACCESS_HPP

#include "dso/dsoGlobals.hpp"
#include "dso/dsoMark.hpp"
#include "jni.h"
#include "memory/allocation.hpp"
#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"
#include "runtime/handles.hpp"

class JavaThread;

// One access to one replica; ends when the mark goes out of scope, or at
// end(). A mark that began nothing costs nothing at its end.
class DsoAccessMark : public StackObj {
 public:
  DsoAccessMark() {}
  ~DsoAccessMark() {
    if (_obj.not_null()) {
      end();
    }
  }

  // For a replica only (the caller has tested DsoMark::is_shared): begins
  // a read or write access. obj is updated, as GC may move it meanwhile.
  // Returns false, with an exception pending and no access held, when the
  // access is refused or fails. An exception already pending (JNI's
  // Release functions may be called with one) stays pending on success.
  template <typename T>
  bool begin(JavaThread* current, T& obj, bool write) {
    return begin_range(current, obj, 0, max_jlong, write);
  }
  // The same for the bytes [from, to) of obj only (offsets in the object):
  // of an array kept in blocks, the blocks holding them (DsoHeap).
  template <typename T>
  bool begin_range(JavaThread* current, T& obj, jlong from, jlong to, bool write) {
    oop o = obj;
    bool ok = begin_oop(current, o, from, to, write);
    obj = (T)o;
    return ok;
  }
  bool begin_range(JavaThread* current, Handle& obj, jlong from, jlong to, bool write) {
    oop o = obj();
    return begin_oop(current, o, from, to, write);
  }
  // Unsafe's access at offset: at most 8 bytes, which may straddle two
  // blocks of an unaligned access.
  template <typename T>
  bool begin_at(JavaThread* current, T& obj, jlong offset, bool write) {
    return begin_range(current, obj, offset, offset + 8, write);
  }

  // Ends the access now (a no-op if none is held). In VM state: ending the
  // last access may write the replica's bytes back for another node.
  void end();

 private:
  bool begin_oop(JavaThread* current, oop& obj, jlong from, jlong to, bool write);

  Handle _obj;  // the replica while an access is held
  jlong _from;  // the bytes it covers
  jlong _to;
};

// Declares DsoAccessMark `name` and, if obj (an oop variable or a Handle)
// is a replica, begins a read or write access to it; on failure runs the
// remaining arguments (e.g. `return NULL`) with the exception pending.
#define DSO_ACCESS(name, current, obj, write, ...)                              \
  DsoAccessMark name;                                                           \
  if (DsoMark::is_shared((obj)->mark()) && !name.begin((current), (obj), (write))) { \
    __VA_ARGS__;                                                                \
  }

// The same where obj may be NULL (Unsafe's absolute addresses).
#define DSO_ACCESS_OR_NULL(name, current, obj, write, ...)                      \
  DsoAccessMark name;                                                           \
  if ((obj) != NULL && DsoMark::is_shared((obj)->mark()) &&                     \
      !name.begin((current), (obj), (write))) {                                 \
    __VA_ARGS__;                                                                \
  }

// The same for an access at a byte offset (Unsafe's): java.lang.Class's
// own fields, below a mirror's static fields, are each node's (as for the
// interpreter, DSO_COHERENT), so an access to them takes none. One would
// ask the cache for the class's statics chunk, and inside the decode of
// that very chunk (a VarHandle arriving in the statics is looked up again
// by reflection, which caches in Class.reflectionData) wait for itself.
#define DSO_ACCESS_AT(name, current, obj, offset, write, ...)                   \
  DsoAccessMark name;                                                           \
  if (DsoMark::is_shared((obj)->mark()) && !DsoAccess::is_class_own_field((obj), (offset)) && \
      !name.begin_at((current), (obj), (offset), (write))) {                    \
    __VA_ARGS__;                                                                \
  }
#define DSO_ACCESS_OR_NULL_AT(name, current, obj, offset, write, ...)           \
  DsoAccessMark name;                                                           \
  if ((obj) != NULL && DsoMark::is_shared((obj)->mark()) &&                     \
      !DsoAccess::is_class_own_field((obj), (offset)) &&                        \
      !name.begin_at((current), (obj), (offset), (write))) {                    \
    __VA_ARGS__;                                                                \
  }

// The same for the bytes [from, to) of obj only (an array in blocks: the
// blocks holding them; DsoAccessMark::begin_range).
#define DSO_ACCESS_RANGE(name, current, obj, from, to, write, ...)              \
  DsoAccessMark name;                                                           \
  if (DsoMark::is_shared((obj)->mark()) &&                                      \
      !name.begin_range((current), (obj), (from), (to), (write))) {             \
    __VA_ARGS__;                                                                \
  }
#define DSO_ACCESS_OR_NULL_RANGE(name, current, obj, from, to, write, ...)      \
  DsoAccessMark name;                                                           \
  if ((obj) != NULL && DsoMark::is_shared((obj)->mark()) &&                     \
      !name.begin_range((current), (obj), (from), (to), (write))) {             \
    __VA_ARGS__;                                                                \
  }
// Elements [first, first + count) of array obj (JNI's and reflection's).
#define DSO_ACCESS_ELEMENTS(name, current, array, first, count, write, ...)     \
  DSO_ACCESS_RANGE(name, current, array, DsoAccess::element_offset((array), (first)),   \
                   DsoAccess::element_offset((array), (jlong)(first) + (count)), write, \
                   __VA_ARGS__)

class DsoAccess : AllStatic {
 public:
  // The offset in array of its element `index` (of its end, for its length).
  static jlong element_offset(oop array, jlong index);

  // Whether offset in obj is a field of java.lang.Class itself (obj a mirror).
  static bool is_class_own_field(oop obj, jlong offset);

  static bool is_shared_or_null(oop obj) {
    return obj != NULL && DsoMark::is_shared(obj->mark());
  }
  // Two objects, each of which may be NULL: is either a replica?
  static bool either_shared(oop a, oop b) {
    if (is_shared_or_null(a) || is_shared_or_null(b)) {
      return true;
    }
    if (DjavaStressLocalWriteMillis > 0) {
      stress_local_write(b);
    }
    return false;
  }

  // System.arraycopy (JVM_ArrayCopy) when s or d is a replica: the same
  // checks, exceptions and partial copies as Klass::copy_array, with the
  // source read and the destination written under accesses. Exceptions are
  // left pending.
  static void arraycopy(JavaThread* current, arrayOop s, int src_pos, arrayOop d, int dst_pos,
                        int length);

  // Unsafe.copyMemory0 (elem_size 0) and copySwapMemory0 (elem_size > 0)
  // when a heap base is a replica. A NULL base is an absolute address.
  static void copy_memory(JavaThread* current, oop src_base, jlong src_offset, oop dst_base,
                          jlong dst_offset, size_t size, size_t elem_size);

  // JNI Get/ReleasePrimitiveArrayCritical on a replica: a copy in the C
  // heap instead of the array's own elements (see the file's comment). A
  // reference array (which JNI does not allow here, but HotSpot serves) is
  // refused with an InternalError naming it.
  static void* critical_copy(JavaThread* current, jarray array, jboolean* is_copy);
  // ReleasePrimitiveArrayCritical on a replica: if carray is such a copy,
  // writes it back (unless mode is JNI_ABORT) under a write access, frees
  // it (unless mode is JNI_COMMIT) and returns true. Returns false if
  // carray is the array's own elements (the array was published after
  // GetPrimitiveArrayCritical): the GC lock is then released as usual.
  static bool release_critical_copy(JavaThread* current, jarray array, void* carray, jint mode);

  // java.lang.reflect.Array.set (JVM_SetArrayElement) when the array or the
  // value is a replica: the value, if it must be unboxed, is read first (its
  // own access if it is a replica), then the element is stored, under a
  // write access if the array is a replica by then.
  static void set_array_element(JavaThread* current, jobject array, jint index, jobject value);

  // -XX:DjavaStressLocalWriteMillis: the pause before a write into dst, if
  // an array of a million elements or more, in VM state (so that no
  // safepoint or handshake passes this thread meanwhile).
  static void stress_local_write(oop dst);

  // Throws InternalError: "djava: cannot <what> shared object 0x<id> (<class>)
  // on this node: <why>"; for a foreign object IllegalStateException: "djava:
  // cannot <what> a <class> of node <n> on this node: <why it is unshareable>".
  static void refuse(JavaThread* current, oop obj, const char* what, const char* why);
};

#endif // SHARE_DSO_DSOACCESS_HPP
