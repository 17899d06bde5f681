/*
 * djava: the shared-object check in C1's code (see the header).
 */

#include "precompiled.hpp"
#include "c1/c1_Compilation.hpp"
#include "c1/c1_Instruction.hpp"
#include "c1/c1_LIRAssembler.hpp"
#include "c1/c1_LIRGenerator.hpp"
#include "c1/c1_MacroAssembler.hpp"
#include "c1/c1_Runtime1.hpp"
#include "c1/c1_ValueStack.hpp"
#include "ci/ciMethod.hpp"
#include "ci/ciEnv.hpp"
#include "ci/ciField.hpp"
#include "ci/ciSymbol.hpp"
#include "dso/c1/dsoBarrierSetC1.hpp"
#include "dso/dsoCompiledAccess.hpp"
#include "dso/dsoInterpreter.hpp"
#include "runtime/thread.hpp"
#include "utilities/macros.hpp"
#include CPU_HEADER(dso/dsoBarrierSetAssembler)

#ifndef PATCHED_ADDR
#define PATCHED_ADDR  (max_jint)
#endif

#ifdef ASSERT
#define __ gen->lir(__FILE__, __LINE__)->
#else
#define __ gen->lir()->
#endif

static const int no_check = DsoCompiledAccess::no_check;
static const int unsupported = -2;
// A store whose access its update's load began (below): no check, an end.
static const int begun_by_load = -3;

// Arithmetic that neither calls nor reaches a safepoint or the heap.
static bool is_arithmetic(Instruction* i) {
  return (i->as_Constant() != NULL || i->as_ArithmeticOp() != NULL || i->as_LogicOp() != NULL ||
          i->as_ShiftOp() != NULL || i->as_Convert() != NULL || i->as_NegateOp() != NULL) &&
         !i->can_trap();
}

// The load of the element a primitive store writes that the stored value
// is computed from by arithmetic alone (a[i] += x, b[i] ^= k), if any
// within a few steps.
static LoadIndexed* load_updated_by(StoreIndexed* store) {
  if (store->mismatched() || is_reference_type(store->elt_type())) {
    return NULL;
  }
  const int most = 16;
  Value todo[most];
  int n = 0;
  todo[n++] = store->value();
  for (int visited = 0; n > 0 && visited < most; visited++) {
    Value v = todo[--n];
    LoadIndexed* load = v->as_LoadIndexed();
    if (load != NULL) {
      if (load->array() == store->array() && load->index() == store->index() &&
          load->elt_type() == store->elt_type() && !load->mismatched()) {
        return load;
      }
    } else if (is_arithmetic(v)) {
      Op2* op = v->as_Op2();
      if (op != NULL && n + 2 <= most) {
        todo[n++] = op->x();
        todo[n++] = op->y();
      } else if (v->as_Convert() != NULL && n < most) {
        todo[n++] = v->as_Convert()->value();
      } else if (v->as_NegateOp() != NULL && n < most) {
        todo[n++] = v->as_NegateOp()->x();
      }
    }
  }
  return NULL;
}

// An element's update, a[i] += x or b[i] ^= k: a primitive element loaded,
// and stored back computed from it, in one block with nothing between but
// arithmetic. The load's check then gains write access, which the store
// ends: one check for the two, as one bytecode's would be. A
// deoptimization in the check's slow path re-executes the load, whose
// pending write access it ends first, as any write's. The load and the
// store agree on the pair (each asks both questions), or an access begun
// for the load would be begun again by the store. Returns the update's
// store, or NULL.
static StoreIndexed* store_of_update(LoadIndexed* load) {
  const int window = 32;
  int seen = 0;
  for (Instruction* i = load->next(); i != NULL && seen < window; i = i->next(), seen++) {
    StoreIndexed* store = i->as_StoreIndexed();
    if (store != NULL) {
      return load_updated_by(store) == load ? store : NULL;
    }
    if (!is_arithmetic(i)) {
      return NULL;
    }
  }
  return NULL;
}

static bool stores_an_update(StoreIndexed* store) {
  LoadIndexed* load = load_updated_by(store);
  return load != NULL && store_of_update(load) == store;
}

int DsoBarrierSetC1::check_kind(LIRAccess& access) {
  DecoratorSet decorators = access.decorators();
  if (!DistributedJava || (decorators & IN_HEAP) == 0 ||
      (decorators & (ON_WEAK_OOP_REF | ON_PHANTOM_OOP_REF)) != 0) {
    return no_check;  // not a Java object's field, or the disabled Reference.get intrinsic's
  }
  Compilation* compilation = access.gen()->compilation();
  Instruction* x = compilation->current_instruction();
  if (x == NULL) {
    return unsupported;
  }
  int kind = (decorators & ACCESS_WRITE) != 0 ? DsoCompiledAccess::write
                                                : DsoCompiledAccess::read;
  if ((decorators & C1_UNSAFE_ACCESS) != 0 || x->as_Intrinsic() != NULL) {
    // Unsafe's accesses and atomics (patches/0022 gives them their state).
    return x->state_before() != NULL ? kind | DsoCompiledAccess::dynamic : unsupported;
  }
  if (x->as_AccessField() == NULL && x->as_AccessIndexed() == NULL) {
    return unsupported;
  }
  AccessField* field_access = x->as_AccessField();
  if (field_access != NULL && !field_access->is_static()) {
    return DsoCompiledAccess::of_instance_field(compilation->env(), field_access->field(), kind);
  }
  // Profiled code checks the two: C2 reads each site's profile.
  if (!compilation->is_profiling()) {
    if (x->as_LoadIndexed() != NULL && store_of_update(x->as_LoadIndexed()) != NULL) {
      return DsoCompiledAccess::write;
    }
    if (x->as_StoreIndexed() != NULL && stores_an_update(x->as_StoreIndexed())) {
      return begun_by_load;
    }
  }
  return kind;
}

void DsoBarrierSetC1::patch_offset_first(LIRAccess& access) {
  LIRGenerator* gen = access.gen();
  LIR_Opr base = access.base().opr();
  LIR_Opr field = gen->new_pointer_register();
  LIR_Opr start = gen->new_pointer_register();
  __ leal(LIR_OprFact::address(new LIR_Address(base, PATCHED_ADDR, access.type())), field,
          lir_patch_normal, access.patch_emit_info());
  __ leal(LIR_OprFact::address(new LIR_Address(base, (intx)0, access.type())), start);
  __ sub(field, start, field);  // the field's offset: no pointer into the object stays live
  access.offset() = LIRAddressOpr(field);
  access.clear_decorators(C1_NEEDS_PATCHING);
}

void DsoBarrierSetC1::check(LIRAccess& access, int kind) {
  LIRGenerator* gen = access.gen();
  Instruction* x = gen->compilation()->current_instruction();
  ValueStack* state = x->state_before();
  LIR_Opr obj = access.base().opr();
  if (state == NULL || state->kind() != ValueStack::StateBefore || !obj->is_register()) {
    gen->bailout("djava: a heap access without its state before it");
    return;
  }
  // The slow path's debug state: the bytecode re-executes if the frame is
  // deoptimized while the thread waits.
  CodeEmitInfo* info = gen->state_for(x, state);
  info->set_force_reexecute();
  LabelObj* null_base = NULL;
  if ((kind & DsoCompiledAccess::dynamic) != 0) {
    // Unsafe with a null base addresses native memory.
    null_base = new LabelObj();
    __ cmp(lir_cond_equal, obj, LIR_OprFact::oopConst(NULL));
    __ branch(lir_cond_equal, null_base->label());
  }
  // The compare reads the object's header: it is the access's null check.
  CodeEmitInfo* null_check = access.access_emit_info() != NULL
                           ? new CodeEmitInfo(access.access_emit_info()) : NULL;
  __ cmp_mem_int(lir_cond_less, obj, oopDesc::mark_offset_in_bytes() + 4, 0, null_check);
  LIR_Opr offset = LIR_OprFact::illegalOpr;
  if ((kind & DsoCompiledAccess::dynamic) != 0) {
    offset = access.offset().opr();
  } else if (x->as_AccessIndexed() != NULL) {
    offset = access.offset().opr();  // the index: the address is not resolved yet
    kind |= DsoCompiledAccess::indexed;
  }
  // Profiled code tells C2 which sites replicas reach (a mirror's and
  // Unsafe's accesses are always checked in full there).
  volatile jbyte* shared_seen = NULL;
  AccessField* field_access = x->as_AccessField();
  if (gen->compilation()->is_profiling() && (kind & DsoCompiledAccess::dynamic) == 0 &&
      (x->as_AccessIndexed() != NULL || (field_access != NULL && !field_access->is_static()))) {
    shared_seen = DsoCompiledAccess::shared_seen(state->scope()->method(), state->bci(), true);
  }
  CodeStub* stub = new DsoAccessStubC1(obj, offset, gen->new_pointer_register(), kind,
                                       access.type(), info, shared_seen);
  __ branch(lir_cond_less, stub);
  __ branch_destination(stub->continuation());
  if (null_base != NULL) {
    __ branch_destination(null_base->label());
  }
}

void DsoBarrierSetC1::end_write(LIRAccess& access) {
  LIRGenerator* gen = access.gen();
  LIR_Opr began = gen->new_pointer_register();
  __ move(new LIR_Address(gen->getThreadPointer(), in_bytes(JavaThread::dso_inline_write_offset()),
                          T_LONG), began);
  __ cmp(lir_cond_notEqual, began, LIR_OprFact::longConst(0));
  CodeStub* stub = new DsoEndWriteStubC1();
  __ branch(lir_cond_notEqual, stub);
  __ branch_destination(stub->continuation());
}

int DsoBarrierSetC1::check_before(LIRAccess& access) {
  int kind = check_kind(access);
  if (kind == unsupported) {
    access.gen()->bailout("djava: an unchecked heap access");
    return no_check;
  }
  if (kind != no_check && kind != begun_by_load) {
    if ((access.decorators() & C1_NEEDS_PATCHING) != 0) {
      patch_offset_first(access);
    }
    check(access, kind);
  }
  return kind;
}

void DsoBarrierSetC1::load_at(LIRAccess& access, LIR_Opr result) {
  check_before(access);
  CardTableBarrierSetC1::load_at(access, result);
}

void DsoBarrierSetC1::store_at(LIRAccess& access, LIR_Opr value) {
  int kind = check_before(access);
  CardTableBarrierSetC1::store_at(access, value);
  if (kind != no_check) {
    end_write(access);
  }
}

// An atomic's base and offset are loaded here (the parent loads them again,
// a no-op) so that the check has the object in a register.
int DsoBarrierSetC1::check_before_atomic(LIRAccess& access) {
  if (check_kind(access) != no_check) {
    access.load_address();
  }
  return check_before(access);
}

LIR_Opr DsoBarrierSetC1::atomic_cmpxchg_at(LIRAccess& access, LIRItem& cmp_value, LIRItem& new_value) {
  int kind = check_before_atomic(access);
  LIR_Opr result = CardTableBarrierSetC1::atomic_cmpxchg_at(access, cmp_value, new_value);
  if (kind != no_check) {
    end_write(access);
  }
  return result;
}

LIR_Opr DsoBarrierSetC1::atomic_xchg_at(LIRAccess& access, LIRItem& value) {
  int kind = check_before_atomic(access);
  LIR_Opr result = CardTableBarrierSetC1::atomic_xchg_at(access, value);
  if (kind != no_check) {
    end_write(access);
  }
  return result;
}

LIR_Opr DsoBarrierSetC1::atomic_add_at(LIRAccess& access, LIRItem& value) {
  int kind = check_before_atomic(access);
  LIR_Opr result = CardTableBarrierSetC1::atomic_add_at(access, value);
  if (kind != no_check) {
    end_write(access);
  }
  return result;
}

#undef __

class DsoEndPinnedWriteStubCodeGenClosure : public StubAssemblerCodeGenClosure {
 public:
  virtual OopMapSet* generate_code(StubAssembler* sasm) {
    DsoBarrierSetAssembler::generate_c1_end_pinned_write_runtime_stub(sasm);
    return NULL;
  }
};

void DsoBarrierSetC1::generate_c1_runtime_stubs(BufferBlob* buffer_blob) {
  DsoEndPinnedWriteStubCodeGenClosure cl;
  CodeBlob* blob = Runtime1::generate_blob(buffer_blob, -1, "dso_end_pinned_write", false, &cl);
  _end_pinned_write_stub = blob->code_begin();
}

void DsoAccessStubC1::emit_code(LIR_Assembler* ce) {
  DsoBarrierSetAssembler::generate_c1_access_stub(ce, this);
}

void DsoEndWriteStubC1::emit_code(LIR_Assembler* ce) {
  DsoBarrierSetAssembler::generate_c1_end_write_stub(ce, this);
}
