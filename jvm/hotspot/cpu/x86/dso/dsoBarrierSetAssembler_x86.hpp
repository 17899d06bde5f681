/*
 * djava: the template interpreter's shared-object check, as the heap
 * accesses of DsoBarrierSet (share/dso/dsoBarrierSet.hpp) on x86_64.
 *
 * Each field, static and array access of a bytecode template gets, before
 * it:
 *
 *   cmp  qword [obj + mark], 0     a local object's mark is never negative
 *   jge  access                    (dsoMark.hpp)
 *
 * and a replica then takes, still inline, what DsoInterpreter::try_access
 * does for Zero: java.lang.Class's own fields of a mirror are node-local;
 * Thread.threadStatus goes to the slow path (a remote thread's state is
 * asked of its node); a read whose copy is S or M and not BLOCKED, or a
 * write that announces itself and finds M, proceeds. Anything else calls
 * DsoInterpreter::bytecode_read/bytecode_write through call_VM: the thread
 * may block on the network and GC may run, so
 *  - every caller-saved register (and xmm0, the float/double top of stack)
 *    is saved and restored around the call;
 *  - the four operand-stack words below the bytecode's stack pointer are
 *    cleared before the saves: the oop map of the frame's bci may count
 *    them (the slots the bytecode popped, or in fast_xaccess the receiver
 *    of the getfield whose bci it shows), and their values are dead;
 *  - the object and the reference being stored, the two oops the template
 *    holds in registers, come back from vm_result and
 *    JavaThread::_dso_vm_result_2 (both GC roots).
 * No safepoint poll lies between the check and the access.
 *
 * After a store: the thread's write slot (JavaThread::_dso_inline_write)
 * is empty unless this write announced or pinned; one compare of memory
 * with zero, then DsoInterpreter::end_write's work out of line.
 */

#ifndef CPU_X86_DSO_DSOBARRIERSETASSEMBLER_X86_HPP
#define CPU_X86_DSO_DSOBARRIERSETASSEMBLER_X86_HPP

#include "asm/macroAssembler.hpp"
#include "gc/shared/cardTableBarrierSetAssembler.hpp"

#ifdef COMPILER1
class DsoAccessStubC1;
class DsoEndWriteStubC1;
class LIR_Assembler;
class StubAssembler;
#endif

class DsoBarrierSetAssembler: public CardTableBarrierSetAssembler {
 public:
  // Emits into dst the byte offset in the object of the access being
  // checked, for an array kept in blocks (dsoReplicaTable.hpp, DsoBlocks).
  class AccessOffset {
   public:
    virtual void emit(MacroAssembler* masm, Register dst) const = 0;
  };

  virtual void load_at(MacroAssembler* masm, DecoratorSet decorators, BasicType type,
                       Register dst, Address src, Register tmp1, Register tmp_thread);
  virtual void store_at(MacroAssembler* masm, DecoratorSet decorators, BasicType type,
                        Address dst, Register val, Register tmp1, Register tmp2);

#ifdef COMPILER1
  // C1's out-of-line parts (share/dso/c1/dsoBarrierSetC1.hpp).
  static void generate_c1_access_stub(LIR_Assembler* ce, DsoAccessStubC1* stub);
  static void generate_c1_end_write_stub(LIR_Assembler* ce, DsoEndWriteStubC1* stub);
  static void generate_c1_end_pinned_write_runtime_stub(StubAssembler* sasm);
#endif

 private:
  static bool checks(DecoratorSet decorators);
  // The cached case of a replica's access (both tiers): to `done` with the
  // access begun when this node holds the copy it needs, else to `slow`.
  // offset (NULL: none) says where the access is, for an array in blocks,
  // whose state word is its element's block's.
  static void emit_cached_test(MacroAssembler* masm, Register obj, Register tmp, Register tmp2,
                               const AccessOffset* offset, bool is_write, Label& done,
                               Label& slow);
  // Gains the access before the load or store at `addr`; `val` is the
  // reference a store writes (noreg otherwise).
  void check_access(MacroAssembler* masm, Address addr, Register val, bool is_write);
  void call_slow_path(MacroAssembler* masm, Address addr, Register val, bool is_write);
  // Ends the access a store began, if it began one.
  void end_write(MacroAssembler* masm);
};

#endif // CPU_X86_DSO_DSOBARRIERSETASSEMBLER_X86_HPP
