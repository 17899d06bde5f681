/*
 * djava: the template interpreter's shared-object check (see the header).
 */

#include "precompiled.hpp"
#include "asm/macroAssembler.inline.hpp"
#include "classfile/vmClasses.hpp"
#include "dso/abi/sos_client.h"
#ifdef COMPILER1
#include "c1/c1_LIRAssembler.hpp"
#include "c1/c1_MacroAssembler.hpp"
#include "c1/c1_Runtime1.hpp"
#include "dso/c1/dsoBarrierSetC1.hpp"
#include "dso/dsoCompiledAccess.hpp"
#endif
#include "dso/dsoBarrierSet.hpp"
#include "dso/dsoBarrierSetAssembler_x86.hpp"
#include "dso/dsoInterpreter.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoThreads.hpp"
#include "oops/arrayOop.hpp"
#include "oops/oop.hpp"
#include "runtime/thread.hpp"

#define __ masm->

#ifdef _LP64

// Registers the caller of the VM must save: the C ABI's caller-saved ones.
// rbx, rbp and r12-r15 survive the call (and call_VM restores bcp and locals).
static const Register saved_registers[] = { rax, rcx, rdx, rsi, rdi, r8, r9, r10, r11 };
static const int saved_count = sizeof(saved_registers) / sizeof(saved_registers[0]);
// The operand-stack words just above the stack pointer: those a bytecode
// popped before its access (at most a long or double value and its object,
// or an index and its array) and, in fast_xaccess (aload_0 and getfield in
// one), the receiver's slot of the getfield whose bci the frame then shows.
// GC reads them as this bci's oop map says; they are dead (the template
// holds their values in registers), so the slow path clears them.
static const int popped_slots = 4;

// Around a call from a template: the caller-saved registers and xmm0.
static void save_caller_saved(MacroAssembler* masm) {
  for (int i = 0; i < saved_count; i++) {
    __ push(saved_registers[i]);
  }
  __ subptr(rsp, 2 * wordSize);
  __ movdbl(Address(rsp, 0), xmm0);
}

static void restore_caller_saved(MacroAssembler* masm) {
  __ movdbl(xmm0, Address(rsp, 0));
  __ addptr(rsp, 2 * wordSize);
  for (int i = saved_count - 1; i >= 0; i--) {
    __ pop(saved_registers[i]);
  }
}

bool DsoBarrierSetAssembler::checks(DecoratorSet decorators) {
  return (decorators & IN_HEAP) != 0 && DsoBarrierSet::in_bytecode();
}

void DsoBarrierSetAssembler::load_at(MacroAssembler* masm, DecoratorSet decorators, BasicType type,
                                     Register dst, Address src, Register tmp1, Register tmp_thread) {
  if (checks(decorators)) {
    check_access(masm, src, noreg, false);
  }
  CardTableBarrierSetAssembler::load_at(masm, decorators, type, dst, src, tmp1, tmp_thread);
}

void DsoBarrierSetAssembler::store_at(MacroAssembler* masm, DecoratorSet decorators, BasicType type,
                                      Address dst, Register val, Register tmp1, Register tmp2) {
  if (!checks(decorators)) {
    CardTableBarrierSetAssembler::store_at(masm, decorators, type, dst, val, tmp1, tmp2);
    return;
  }
  check_access(masm, dst, is_reference_type(type) ? val : noreg, true);
  CardTableBarrierSetAssembler::store_at(masm, decorators, type, dst, val, tmp1, tmp2);
  end_write(masm);
}

void DsoBarrierSetAssembler::check_access(MacroAssembler* masm, Address addr, Register val,
                                          bool is_write) {
  const Register obj = addr.base();
  // r10 and r11 (rscratch1/2) are the check's: the templates keep nothing
  // in them across an access.
  const Register tmp = rscratch1;
  const Register tmp2 = rscratch2;
  assert_different_registers(obj, addr.index(), val, tmp, tmp2);
  assert(obj != noreg && obj != rsp, "a heap access has its object in a register");

  Label done, coherent, slow;
  __ cmpptr(Address(obj, oopDesc::mark_offset_in_bytes()), 0);
  __ jcc(Assembler::greaterEqual, done);

  // A replica. A mirror's fields below its statics are java.lang.Class's
  // own, each node's (DSO_COHERENT in dsoInterpreter.hpp).
  __ load_klass(tmp, obj, tmp2);
  __ movptr(tmp2, ExternalAddress((address)vmClasses::klass_addr_at(VM_CLASS_ID(Class_klass))), tmp2);
  __ cmpptr(tmp, tmp2);
  __ jcc(Assembler::notEqual, coherent);
  __ lea(tmp, addr);
  __ subptr(tmp, obj);
  __ lea(tmp2, ExternalAddress((address)DsoBarrierSet::mirror_statics_offset_addr()));
  __ cmpl(tmp, Address(tmp2, 0));
  __ jcc(Assembler::less, done);
  __ bind(coherent);

  if (!is_write) {
    // Thread.threadStatus of a thread that may run elsewhere.
    __ lea(tmp, addr);
    __ subptr(tmp, obj);
    __ lea(tmp2, ExternalAddress((address)DsoThreads::thread_status_offset_addr()));
    __ cmpl(tmp, Address(tmp2, 0));
    __ jcc(Assembler::equal, slow);
  }

  class AddressOffset : public AccessOffset {
   public:
    AddressOffset(Address addr) : _addr(addr) {}
    virtual void emit(MacroAssembler* masm, Register dst) const {
      __ lea(dst, _addr);
      __ subptr(dst, _addr.base());
    }
   private:
    Address _addr;
  } offset(addr);
  emit_cached_test(masm, obj, tmp, tmp2, &offset, is_write, done, slow);

  __ bind(slow);
  call_slow_path(masm, addr, val, is_write);
  __ bind(done);
}

// The cached case of a replica's access: to `done` with the access
// begun (a read's already ended) when this node holds the copy it needs,
// else to `slow`. Clobbers tmp and tmp2.
void DsoBarrierSetAssembler::emit_cached_test(MacroAssembler* masm, Register obj, Register tmp,
                                              Register tmp2, const AccessOffset* offset,
                                              bool is_write, Label& done, Label& slow) {
  // The replica's entry: the mark's index bits select it in the table.
  Label have_word;
  __ movptr(tmp, Address(obj, oopDesc::mark_offset_in_bytes()));
  __ shrptr(tmp, DsoMark::index_shift);
  __ andptr(tmp, (int32_t)DsoMark::max_index);
  __ imulq(tmp, tmp, (int)sizeof(DsoReplica));
  __ movptr(tmp2, ExternalAddress((address)DsoReplicaTable::entries_addr()), tmp2);
  __ addptr(tmp, tmp2);
  __ movptr(tmp2, Address(tmp, offset_of(DsoReplica, _word)));
  __ testptr(tmp2, tmp2);
  __ jcc(Assembler::notZero, have_word);
  if (offset == NULL) {
    __ jmp(slow);  // no cache here (the slow path refuses), or an array in blocks
  } else {
    // An array in blocks: the word of the block holding the access, if
    // this node has looked its chunk up; else (or no cache) the slow path.
    __ movptr(tmp, Address(tmp, offset_of(DsoReplica, _blocks)));
    __ testptr(tmp, tmp);
    __ jcc(Assembler::zero, slow);
    offset->emit(masm, tmp2);
    // 32 bits (_base is an int): an element's offset from element 0 is
    // below 2^31, and the subtraction clears the upper half.
    __ subl(tmp2, Address(tmp, offset_of(DsoBlocks, _base)));
    // The block: by cl (rcx may be tmp, which the push keeps).
    __ push(rcx);
    __ movl(rcx, Address(tmp, offset_of(DsoBlocks, _byte_shift)));
    __ shrptr(tmp2);
    __ pop(rcx);
    __ cmpl(tmp2, Address(tmp, offset_of(DsoBlocks, _count)));
    __ jcc(Assembler::aboveEqual, slow);  // no element (unsigned)
    __ movptr(tmp, Address(tmp, offset_of(DsoBlocks, _words)));
    __ movptr(tmp2, Address(tmp, tmp2, Address::times_8));
    __ testptr(tmp2, tmp2);
    __ jcc(Assembler::zero, slow);
  }
  __ bind(have_word);
  __ movptr(tmp, tmp2);
  if (!is_write) {
    // An acquire load is a plain load on x86: readable in S or M, not BLOCKED.
    __ movptr(tmp, Address(tmp, 0));
    __ testl(tmp, DJAVA_SOS_WORD_BLOCKED);
    __ jcc(Assembler::notZero, slow);
    __ testl(tmp, DJAVA_SOS_WORD_STATE_MASK);
    __ jcc(Assembler::notZero, done);
  } else if (DsoInterpreter::announced_writes()) {
    // Announce the store, then test the word. The store and the load may
    // pass each other in this CPU; the revoker's membarrier() orders them.
    const Address slot(r15_thread, JavaThread::dso_inline_write_offset());
    __ movptr(slot, tmp);
    __ movptr(tmp, Address(tmp, 0));
    __ andl(tmp, DJAVA_SOS_WORD_STATE_MASK | DJAVA_SOS_WORD_BLOCKED);
    __ cmpl(tmp, DJAVA_SOS_WORD_STATE_M);
    __ jcc(Assembler::equal, done);
    __ movptr(slot, NULL_WORD);
  }
  // Without membarrier a write pins its copy; the slow path does that.
  __ jmp(slow);
}

void DsoBarrierSetAssembler::call_slow_path(MacroAssembler* masm, Address addr, Register val,
                                            bool is_write) {
  const Register obj = addr.base();
  for (int i = 0; i < popped_slots; i++) {
    __ push((int32_t)NULL_WORD);
  }
  save_caller_saved(masm);

  // The arguments, in an order that clobbers none before it is read.
  __ lea(rscratch1, addr);
  if (val != noreg) {
    __ movptr(rscratch2, val);
  } else {
    __ xorptr(rscratch2, rscratch2);
  }
  __ movptr(c_rarg1, obj);
  __ movptr(c_rarg2, rscratch1);
  __ movptr(c_rarg3, rscratch2);
  address entry = is_write ? CAST_FROM_FN_PTR(address, DsoInterpreter::bytecode_write)
                           : CAST_FROM_FN_PTR(address, DsoInterpreter::bytecode_read);
  // The interpreter's call_VM: records bcp, sets the last Java frame, and
  // forwards an exception (the bytecode then throws it).
  __ call_VM(noreg, entry, c_rarg1, c_rarg2, c_rarg3);

  restore_caller_saved(masm);
  __ addptr(rsp, popped_slots * wordSize);
  // GC may have moved the object and the reference being stored.
  const Address result(r15_thread, JavaThread::vm_result_offset());
  const Address result_2(r15_thread, JavaThread::dso_vm_result_2_offset());
  __ movptr(obj, result);
  __ movptr(result, NULL_WORD);
  if (val != noreg) {
    __ movptr(val, result_2);
  }
  __ movptr(result_2, NULL_WORD);
}

void DsoBarrierSetAssembler::end_write(MacroAssembler* masm) {
  const Address slot(r15_thread, JavaThread::dso_inline_write_offset());
  Label done, pinned;
  __ cmpptr(slot, NULL_WORD);
  __ jcc(Assembler::equal, done);
  __ testb(slot, 1);  // DsoInterpreter::note_pinned's mark
  __ jcc(Assembler::notZero, pinned);
  // An announced write: withdraw the announcement (a release store).
  __ movptr(slot, NULL_WORD);
  __ jmp(done);

  __ bind(pinned);
  save_caller_saved(masm);
  __ call_VM_leaf(CAST_FROM_FN_PTR(address, DsoInterpreter::end_pinned_write), r15_thread);
  restore_caller_saved(masm);
  __ bind(done);
}

#ifdef COMPILER1

#undef __
#define __ ce->masm()->

// A dynamic access's offset, into `dst`.
static void load_offset(LIR_Assembler* ce, LIR_Opr offset, Register dst) {
  if (offset->is_constant()) {
    __ mov64(dst, offset->type() == T_LONG ? offset->as_jlong() : (jlong)offset->as_jint());
  } else {
    __ movptr(dst, offset->as_pointer_register());
  }
}

// An indexed access's element offset in its array, into dst.
static void emit_c1_element_offset(MacroAssembler* masm, DsoAccessStubC1* stub, Register dst) {
  LIR_Opr index = stub->offset();
  int shift = exact_log2(type2aelembytes(stub->type()));
  int base = arrayOopDesc::base_offset_in_bytes(stub->type());
  if (index->is_constant()) {
    masm->mov64(dst, (jlong)base + ((jlong)index->as_jint() << shift));
  } else {
    masm->movl(dst, index->as_register());  // a checked index: not negative
    masm->shlptr(dst, shift);
    masm->addptr(dst, base);
  }
}

static void call_c1_slow_path(LIR_Assembler* ce, DsoAccessStubC1* stub, int kind) {
  // The access's offset in the object: an element's, an Unsafe access's;
  // -1 for a field's (compiled_access).
  LIR_Opr offset = stub->offset();
  if ((kind & DsoCompiledAccess::indexed) != 0) {
    emit_c1_element_offset(ce->masm(), stub, rscratch1);
  } else if ((kind & DsoCompiledAccess::dynamic) != 0) {
    load_offset(ce, offset, rscratch1);
  } else {
    __ mov64(rscratch1, -1);
  }
  ce->store_parameter(rscratch1, 2);
  ce->store_parameter(stub->obj()->as_register(), 1);
  ce->store_parameter(kind, 0);
  __ call(RuntimeAddress(Runtime1::entry_for(Runtime1::dso_access_id)));
  ce->add_call_info_here(stub->info());
  ce->verify_oop_map(stub->info());
  __ jmp(*stub->continuation());
}

void DsoBarrierSetAssembler::generate_c1_access_stub(LIR_Assembler* ce, DsoAccessStubC1* stub) {
  const Register obj = stub->obj()->as_register();
  const Register tmp = stub->tmp()->as_pointer_register();
  const int kind = stub->kind();
  const bool is_write = (kind & DsoCompiledAccess::write) != 0;
  Label seen, slow, thread_status;
  __ bind(*stub->entry());
  if (stub->shared_seen() != NULL) {
    // Profiled code: a replica reached this site (r10, rscratch1, is never
    // allocated by C1). Set only while clear, so that it does not take back
    // site_missed (two threads racing may, once: that costs C2 a trap).
    __ mov64(rscratch1, (int64_t)stub->shared_seen());
    __ cmpb(Address(rscratch1, 0), 0);
    __ jcc(Assembler::notEqual, seen);
    __ movb(Address(rscratch1, 0), DsoCompiledAccess::site_shared);
    __ bind(seen);
  }
  if ((kind & DsoCompiledAccess::dynamic) != 0) {
    // What the compiler could not tell (r10, rscratch1, is never allocated
    // by C1). A mirror's fields below its statics are java.lang.Class's
    // own, each node's.
    Label not_mirror;
    __ load_klass(tmp, obj, rscratch1);
    __ movptr(rscratch1, ExternalAddress((address)vmClasses::klass_addr_at(VM_CLASS_ID(Class_klass))),
              rscratch1);
    __ cmpptr(tmp, rscratch1);
    __ jcc(Assembler::notEqual, not_mirror);
    load_offset(ce, stub->offset(), tmp);
    __ lea(rscratch1, ExternalAddress((address)DsoBarrierSet::mirror_statics_offset_addr()));
    __ movslq(rscratch1, Address(rscratch1, 0));
    __ cmpptr(tmp, rscratch1);
    __ jcc(Assembler::less, *stub->continuation());
    __ bind(not_mirror);
    if (!is_write) {
      // A read at Thread.threadStatus's offset: the runtime asks whether
      // the object is a Thread.
      load_offset(ce, stub->offset(), tmp);
      __ lea(rscratch1, ExternalAddress((address)DsoThreads::thread_status_offset_addr()));
      __ movslq(rscratch1, Address(rscratch1, 0));
      __ cmpptr(tmp, rscratch1);
      __ jcc(Assembler::equal, thread_status);
    }
  }
  if ((kind & DsoCompiledAccess::thread_status) == 0) {
    // An element's offset, for an array in blocks (an Unsafe access, which
    // may straddle two blocks, takes the slow path there).
    class IndexOffset : public AccessOffset {
     public:
      IndexOffset(DsoAccessStubC1* stub) : _stub(stub) {}
      virtual void emit(MacroAssembler* masm, Register dst) const {
        emit_c1_element_offset(masm, _stub, dst);
      }
     private:
      DsoAccessStubC1* _stub;
    } offset(stub);
    bool indexed = (kind & DsoCompiledAccess::indexed) != 0;
    emit_cached_test(ce->masm(), obj, tmp, rscratch1, indexed ? &offset : NULL, is_write,
                     *stub->continuation(), slow);
  }
  __ bind(slow);
  if (stub->shared_seen() != NULL) {
    // And failed the cached test: C2 calls the slow path here too.
    __ mov64(rscratch1, (int64_t)stub->shared_seen());
    __ movb(Address(rscratch1, 0), DsoCompiledAccess::site_shared | DsoCompiledAccess::site_missed);
  }
  call_c1_slow_path(ce, stub, kind);
  if ((kind & DsoCompiledAccess::dynamic) != 0 && !is_write) {
    __ bind(thread_status);
    call_c1_slow_path(ce, stub, kind | DsoCompiledAccess::thread_status);
  }
}

void DsoBarrierSetAssembler::generate_c1_end_write_stub(LIR_Assembler* ce, DsoEndWriteStubC1* stub) {
  const Address slot(r15_thread, JavaThread::dso_inline_write_offset());
  Label pinned;
  __ bind(*stub->entry());
  __ testb(slot, 1);  // DsoInterpreter::note_pinned's mark
  __ jcc(Assembler::notZero, pinned);
  // An announced write: withdraw the announcement (a release store).
  __ movptr(slot, NULL_WORD);
  __ jmp(*stub->continuation());
  __ bind(pinned);
  DsoBarrierSetC1* bs = (DsoBarrierSetC1*)BarrierSet::barrier_set()->barrier_set_c1();
  __ call(RuntimeAddress(bs->end_pinned_write_stub()));
  __ jmp(*stub->continuation());
}

#undef __
#define __ sasm->

// A leaf: no safepoint, so no oop map; every register the compiled code
// may hold a value in is saved.
void DsoBarrierSetAssembler::generate_c1_end_pinned_write_runtime_stub(StubAssembler* sasm) {
  __ enter();
  __ save_live_registers_no_oop_map(true /* save_fpu_registers */);
  __ call_VM_leaf(CAST_FROM_FN_PTR(address, DsoInterpreter::end_pinned_write), r15_thread);
  __ restore_live_registers(true /* restore_fpu_registers */);
  __ leave();
  __ ret(0);
}

#undef __
#define __ masm->

#endif // COMPILER1

#else

// 32-bit x86 has no unused header bits for the shared tag (dsoMark.hpp).
void DsoBarrierSetAssembler::load_at(MacroAssembler* masm, DecoratorSet decorators, BasicType type,
                                     Register dst, Address src, Register tmp1, Register tmp_thread) {
  Unimplemented();
}

void DsoBarrierSetAssembler::store_at(MacroAssembler* masm, DecoratorSet decorators, BasicType type,
                                      Address dst, Register val, Register tmp1, Register tmp2) {
  Unimplemented();
}

#endif // _LP64
