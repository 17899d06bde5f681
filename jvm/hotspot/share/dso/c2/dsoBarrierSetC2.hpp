/*
 * djava: the shared-object check in C2's code, as DsoBarrierSet's C2 part.
 *
 * Every field, static and array access a bytecode makes reaches the barrier
 * set's load_at/store_at when C2 parses it (the parser marks those accesses
 * C2_DSO_BYTECODE, patches/0031). Before the access this part puts into the
 * graph:
 *
 *   mark = LoadL [obj]              free of control (see below)
 *   if (mark < 0)                   unlikely: a replica (dsoMark.hpp)
 *     cached test                   its entry's state word, as in C1's stub
 *     if (miss)
 *       call dso_access(obj, kind, offset)  a runtime stub that may block
 *
 * The cached test is the one the other tiers run inline
 * (DsoInterpreter::try_access, emit_cached_test): a read whose copy is S or
 * M and not BLOCKED, or a write that announces itself in the thread's slot
 * and finds M; the word's load is pinned below the test's branches, so no
 * two checks share it. A miss (and a write that must pin its copy, and an
 * array in blocks) calls the stub, whose C function tries the cached test
 * once more without leaving Java state (an array's block), then gains the
 * access in the VM, where the thread may wait on the network and GC may
 * run. The call carries the state *before*
 * the bytecode, operands on the stack, with re-execution set: a frame
 * deoptimized while the thread waits re-executes the bytecode in the
 * interpreter, which checks again, and an exception (a refusal) goes to an
 * uncommon trap that does the same, so that the interpreter throws it. The
 * test's and the call's memory effects are raw only, and the check merges
 * raw memory alone: the Java slices pass through it untouched, so alias
 * analysis is not pessimized and loads of the heap may still leave loops;
 * each checked load is pinned below its own check, so it reads memory
 * after the check and is never commoned with a load above it.
 *
 * After a store of a replica (the check's mark tells): the thread's write
 * slot is empty unless the write announced or pinned (one load and
 * compare); an announcement is withdrawn inline, behind a release barrier
 * on raw memory that follows the store; a pin is ended by a leaf call.
 *
 * A field or element access site whose objects C1's profiling code (tiers
 * 2 and 3) reached and never saw shared gets a test and an uncommon trap
 * instead (DsoCompiledAccess::shared_seen): C2 speculates that the site
 * stays local, as it speculates on a branch never taken. No path comes
 * back from the trap, so the object's later tests under the same mark
 * fold into the first, the method's code is close to the stock
 * compiler's, and its compilation as quick (a full check's slow-path call
 * rejoins the code, and every value live across it is split around the
 * call: most of C2's time went to that). The trap marks the site and
 * makes the method not entrant; the recompiled method checks the site in
 * full. A site whose replicas, in C1's profiling code, all passed the
 * cached test keeps that test and traps on a miss instead of calling the
 * stub (DsoCompiledAccess::site_missed), for the same reason: no call
 * rejoins the code. That trap keeps the method's code (a deoptimization
 * per miss) until the method traps so a few times; the recompiled method
 * calls the stub at the marked sites.
 *
 * The mark of a field's or an element's object is one load for all of the
 * object's checks until memory changes (a call, a barrier), and leaves
 * loops: C2 then versions a loop whose objects are invariant, one copy for
 * local objects with no check at all. A local object may turn shared at a
 * safepoint in such a stretch (a publication's fence), which is why the
 * fence deoptimizes every frame of C2's code holding an object it
 * publishes (dsoFence.hpp); the frame goes on in the interpreter, which
 * tests again. A mirror's mark (statics become shared without a fence) and
 * Unsafe's are loaded at each access, below the test for a null base.
 * Between a check and its access no safepoint lies: the check's merge leads
 * straight to the access. Counted loops poll on a node
 * (UseCountedLoopSafepoints, strip mined, so that a fence never waits for a
 * long loop to end).
 *
 * Not checked: java.lang.Class's own fields (each node's; a mirror's
 * statics are checked); weak and phantom loads (Reference.get is compiled
 * from its bytecode on a node); a bytecode's access of an object this
 * compilation allocated with no call of a Java method since (only a
 * publication fence makes a local object a replica, and it deoptimizes a
 * frame it finds at any other safepoint holding the object: inlined
 * constructors and objects that never escape carry no check, and escape
 * analysis may replace them by their fields); Strings (which travel by
 * value) and fresh allocations with no safepoint at all since, when an
 * access that is not a bytecode's reaches the barrier set.
 * Any other access a compilation would emit unchecked keeps its method out
 * of C2 (it stays at C1), and every intrinsic not known to be safe is off on
 * a node (is_intrinsic_allowed); String's and arrays' intrinsics run only
 * when their object arguments are local (needs_local_arguments). Unsafe's
 * gets, puts and atomics (VarHandles' and the atomic classes' among them)
 * are checked with the kind told at run time: a null base is native
 * memory, and the stub
 * tells a mirror's own fields and Thread.threadStatus by the offset.
 */

#ifndef SHARE_DSO_C2_DSOBARRIERSETC2_HPP
#define SHARE_DSO_C2_DSOBARRIERSETC2_HPP

#include "classfile/vmIntrinsics.hpp"
#include "gc/shared/c2/cardTableBarrierSetC2.hpp"

class ciEnv;
class JavaThread;
class LibraryCallKit;
class oopDesc;
class TypeFunc;

// An access's kind, the stub's argument: DsoCompiledAccess::Kind.
class DsoBarrierSetC2 : public CardTableBarrierSetC2 {
 public:
  virtual Node* load_at(C2Access& access, const Type* val_type) const;
  virtual Node* store_at(C2Access& access, C2AccessValue& val) const;
  virtual Node* atomic_cmpxchg_val_at(C2AtomicParseAccess& access, Node* expected_val,
                                      Node* new_val, const Type* val_type) const;
  virtual Node* atomic_cmpxchg_bool_at(C2AtomicParseAccess& access, Node* expected_val,
                                       Node* new_val, const Type* val_type) const;
  virtual Node* atomic_xchg_at(C2AtomicParseAccess& access, Node* new_val,
                               const Type* value_type) const;
  virtual Node* atomic_add_at(C2AtomicParseAccess& access, Node* new_val,
                              const Type* value_type) const;
  virtual void clone(GraphKit* kit, Node* src, Node* dst, Node* size, bool is_array) const;

  // Whether C2 may expand intrinsic `id`: on a node, only those that touch
  // no Java object's fields or elements behind the barrier set's back.
  static bool is_intrinsic_allowed(vmIntrinsics::ID id);
  // Whether intrinsic `id` runs, on a node, only when its object arguments
  // are local (String's and arrays' intrinsics: they read and write arrays
  // directly). A predicate tests them; a replica takes the method's Java
  // code, which is checked (patches/0032).
  static bool needs_local_arguments(vmIntrinsics::ID id);
  // That predicate: leaves `kit` on the intrinsic's path (every object
  // argument null or local) and returns the control of the Java code's.
  static Node* local_arguments_predicate(LibraryCallKit* kit);
  // The dso_access stub, made with OptoRuntime's others (patches/0031).
  static bool generate_stubs(ciEnv* env);

  // The check before an access of kind `kind`: the object's mark it
  // tested (NULL: none, or some paths have none), and the end of a write
  // (`store`: the write's store, which the end follows; NULL: an atomic's,
  // which the end follows as all of memory does; `mark`: the check's, the
  // end then only for a replica).
  static Node* check(C2ParseAccess& access, int kind);
  static void end_write(C2ParseAccess& access, Node* store, Node* mark);

 private:
  // The check an access needs: a DsoCompiledAccess::Kind, no_check, or
  // unsupported (the .cpp's).
  static int check_kind(C2Access& access);
  // check_kind, and a compilation that would emit the access unchecked
  // gives up C2 for its method.
  static int check_kind_or_refuse(C2Access& access);

  // After a dynamic check: the raw address made again from the base.
  static void readdress(C2ParseAccess& access);

  static const TypeFunc* access_Type();
  static const TypeFunc* end_write_Type();
  // The stub's C function and the store's end (a leaf).
  static void access_C(oopDesc* obj, jint kind, jlong offset, JavaThread* current);
  static void end_write_C(JavaThread* current);

  static address _access_stub;
};

#endif // SHARE_DSO_C2_DSOBARRIERSETC2_HPP
