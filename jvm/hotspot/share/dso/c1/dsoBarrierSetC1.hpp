/*
 * djava: the shared-object check in C1's code, as DsoBarrierSet's C1 part.
 *
 * Every field, static and array access C1 emits reaches the barrier set's
 * load_at/store_at (LIRGenerator::access_*). Before the access this part
 * emits, with only the object in a register (no derived pointer is live):
 *
 *   cmp  dword [obj + mark + 4], 0    the mark's sign: a replica's is
 *   jl   stub                         negative (dsoMark.hpp); also the
 *                                     access's implicit null check
 *
 * The stub, out of line, does what the template interpreter does inline
 * (cpu/x86/dso): a read whose copy is S or M and not BLOCKED, or a write
 * that announces itself and finds M, goes back to the access. Otherwise it
 * calls Runtime1's dso_access blob, which saves every register under an
 * oop map and calls DsoInterpreter::compiled_access: the thread may block
 * on the network and GC may run, and the compiled frame's registers come
 * back updated. The call's debug state is the state *before* the bytecode,
 * operands on the stack, with re-execution forced (patches/0022 gives every
 * field and array access that state): a frame deoptimized while the thread
 * waits re-executes the bytecode in the interpreter, which checks again;
 * deoptimization ends the compiled write's pending access first.
 *
 * Profiled code (tiers 2 and 3) also marks, in the stub, the site's byte
 * of the profile C2 reads (DsoCompiledAccess::shared_seen): a replica
 * reached this field or element access.
 *
 * After a store: the thread's write slot is empty unless the write
 * announced or pinned (one load and compare); the stub withdraws the
 * announcement, or unpins through a leaf blob that saves every register.
 *
 * An element's update (a[i] += x, b[i] ^= k: a primitive element loaded,
 * and stored back computed from it, in one block with only arithmetic
 * between, which neither calls nor polls nor touches the heap) is checked
 * once, at the load, for writing; the store has no check of its own, only
 * its end (not in profiled code, whose sites C2 reads one by one).
 *
 * No safepoint lies between a check and its access: C1 polls only at
 * block ends and calls, and the check's continuation leads straight to
 * the access (with at most register moves, a boolean mask and a membar).
 *
 * Not checked: java.lang.Class's own fields (each node's; a mirror's
 * statics are checked), and a weak or phantom load, which only the
 * Reference.get intrinsic emits and a node disables (Dso::adjust_vm_flags:
 * Reference.get is compiled from its bytecode, whose getfield is checked).
 * Thread.threadStatus of a replica always takes the slow path (a remote
 * thread's state is asked of its node). Unsafe's accesses and atomics
 * (Unsafe, VarHandles, java.util.concurrent) are checked too, with what
 * only run time knows: a null base (native memory) is not checked, a
 * mirror's offset below its statics is java.lang.Class's own field, and an
 * offset equal to threadStatus's takes the slow path (the runtime then
 * asks whether the object is a Thread). An access C1 emits from anywhere
 * else is not compiled (a bailout), never compiled unchecked.
 */

#ifndef SHARE_DSO_C1_DSOBARRIERSETC1_HPP
#define SHARE_DSO_C1_DSOBARRIERSETC1_HPP

#include "c1/c1_CodeStubs.hpp"
#include "gc/shared/c1/cardTableBarrierSetC1.hpp"

// An access's kind, the stub's argument: DsoCompiledAccess::Kind.
class DsoBarrierSetC1 : public CardTableBarrierSetC1 {
 public:
  DsoBarrierSetC1() : _end_pinned_write_stub(NULL) {}

  virtual void load_at(LIRAccess& access, LIR_Opr result);
  virtual void store_at(LIRAccess& access, LIR_Opr value);
  virtual LIR_Opr atomic_cmpxchg_at(LIRAccess& access, LIRItem& cmp_value, LIRItem& new_value);
  virtual LIR_Opr atomic_xchg_at(LIRAccess& access, LIRItem& value);
  virtual LIR_Opr atomic_add_at(LIRAccess& access, LIRItem& value);

  virtual void generate_c1_runtime_stubs(BufferBlob* buffer_blob);
  address end_pinned_write_stub() const { return _end_pinned_write_stub; }

 private:
  // Whether the access gets a check, and which: a DsoCompiledAccess::Kind,
  // or no_check.
  static int check_kind(LIRAccess& access);
  // Resolves a field offset C1 must patch, before the check (the patching
  // call is a safepoint and may not fall between check and access).
  static void patch_offset_first(LIRAccess& access);
  static void check(LIRAccess& access, int kind);
  // Emits what an access needs before it; returns its kind (-1: unchecked).
  static int check_before(LIRAccess& access);
  static int check_before_atomic(LIRAccess& access);
  static void end_write(LIRAccess& access);

  address _end_pinned_write_stub;
};

// The out-of-line part of a check.
class DsoAccessStubC1 : public CodeStub {
 public:
  DsoAccessStubC1(LIR_Opr obj, LIR_Opr offset, LIR_Opr tmp, int kind, BasicType type,
                  CodeEmitInfo* info, volatile jbyte* shared_seen) :
    _obj(obj), _offset(offset), _tmp(tmp), _kind(kind), _type(type), _info(info),
    _shared_seen(shared_seen) {}

  LIR_Opr obj() const    { return _obj; }
  // A dynamic access's offset, an indexed one's index (register or constant).
  LIR_Opr offset() const { return _offset; }
  BasicType type() const { return _type; }    // an indexed access's element type
  LIR_Opr tmp() const    { return _tmp; }
  int kind() const       { return _kind; }
  // Profiled code's byte of the site (DsoCompiledAccess::shared_seen),
  // set by the stub; NULL: none.
  volatile jbyte* shared_seen() const { return _shared_seen; }

  virtual void emit_code(LIR_Assembler* ce);
  virtual CodeEmitInfo* info() const { return _info; }
  virtual void visit(LIR_OpVisitState* visitor) {
    visitor->do_slow_case(_info);
    visitor->do_input(_obj);
    if (_offset->is_register()) {
      visitor->do_input(_offset);
    }
    visitor->do_temp(_tmp);
  }
#ifndef PRODUCT
  virtual void print_name(outputStream* out) const { out->print("DsoAccessStubC1"); }
#endif

 private:
  LIR_Opr _obj;
  LIR_Opr _offset;
  LIR_Opr _tmp;
  int _kind;
  BasicType _type;
  CodeEmitInfo* _info;
  volatile jbyte* _shared_seen;
};

// The out-of-line part of a store's end: the write announced or pinned.
class DsoEndWriteStubC1 : public CodeStub {
 public:
  virtual void emit_code(LIR_Assembler* ce);
  virtual void visit(LIR_OpVisitState* visitor) { visitor->do_slow_case(); }
#ifndef PRODUCT
  virtual void print_name(outputStream* out) const { out->print("DsoEndWriteStubC1"); }
#endif
};

#endif // SHARE_DSO_C1_DSOBARRIERSETC1_HPP
