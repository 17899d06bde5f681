/*
 * djava: the shared-object check in C2's code (see the header).
 */

#include "precompiled.hpp"
#include "ci/ciEnv.hpp"
#include "ci/ciField.hpp"
#include "classfile/vmClasses.hpp"
#include "dso/c2/dsoBarrierSetC2.hpp"
#include "dso/dsoBarrierSet.hpp"
#include "dso/dsoCompiledAccess.hpp"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoInterpreter.hpp"
#include "dso/dsoMark.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoThreads.hpp"
#include "interpreter/bytecodes.hpp"
#include "memory/resourceArea.hpp"
#include "oops/klass.hpp"
#include "oops/oop.inline.hpp"
#include "opto/addnode.hpp"
#include "opto/callnode.hpp"
#include "opto/castnode.hpp"
#include "opto/compile.hpp"
#include "opto/convertnode.hpp"
#include "opto/graphKit.hpp"
#include "opto/idealKit.hpp"
#include "opto/library_call.hpp"
#include "opto/mulnode.hpp"
#include "opto/node.hpp"
#include "opto/runtime.hpp"
#include "runtime/atomic.hpp"
#include "runtime/deoptimization.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/thread.hpp"

static const int no_check = DsoCompiledAccess::no_check;
static const int unsupported = -2;

address DsoBarrierSetC2::_access_stub = NULL;

// Whether the fence takes a frame stopped at safepoint `sfpt` for one at a
// Java method's call, and leaves it alone (dsoFence.cpp, at_java_call): a
// call of a Java method, or any call whose state is at an invoke's
// bytecode and does not re-execute it (an intrinsic's runtime call), or
// one at a method's entry (a synchronized method's lock), where the
// bytecode is unsure.
static bool is_java_call_for_fences(Node* sfpt) {
  if (!sfpt->is_Call()) {
    return false;  // a poll
  }
  if (sfpt->is_CallJava() && sfpt->as_CallJava()->method() != NULL) {
    return true;
  }
  JVMState* jvms = sfpt->as_Call()->jvms();
  if (jvms == NULL || !jvms->has_method() || jvms->bci() < 0) {
    return true;
  }
  return !jvms->should_reexecute() &&
         Bytecodes::is_invoke(jvms->method()->java_code_at_bci(jvms->bci()));
}

// Whether allocation `alloc` lies on every control path to `ctl` with no
// safepoint after it: a local object is published only at a fence with
// every thread of its node (docs/HEAP.md), which waits for this thread at a
// safepoint, so an object allocated since the last one is still local. A
// leaf call does not poll. Unsure (a long or unusual path): false.
//
// With `polls_allowed`, only a call the fence takes for a Java method's
// after the allocation counts: at any other safepoint (a poll, a runtime
// call: dso_access, an allocation's or a lock's slow path) the fence
// deoptimizes a frame of C2's code that holds an object it publishes
// (dsoFence.cpp), and the interpreter tests each access after it, as for
// any object whose test C2 has moved up to the allocation. At a Java
// method's call the fence leaves the frame alone.
static bool allocated_since_safepoint(Node* alloc, Node* ctl, bool polls_allowed = false) {
  ResourceMark rm;
  Unique_Node_List seen;
  Node_List work;
  work.push(ctl);
  while (work.size() > 0) {
    Node* c = work.pop();
    if (c == alloc) {
      continue;
    }
    if (c == NULL || c->is_top() || c->is_Root() || c->is_Start() || seen.size() > 1000) {
      return false;
    }
    if (c->is_SafePoint() && !c->is_CallLeaf() &&
        (!polls_allowed || is_java_call_for_fences(c))) {
      return false;
    }
    if (seen.member(c)) {
      continue;
    }
    seen.push(c);
    if (c->is_Region()) {
      for (uint i = 1; i < c->req(); i++) {
        work.push(c->in(i));
      }
    } else {
      work.push(c->in(0));
    }
  }
  return true;
}

// Whether `base` can never be a replica when an access that is not a
// bytecode's reaches it: a String (Strings travel by value: dsoHeap.hpp),
// or an object this compilation allocates with no safepoint between the
// allocation and `ctl`, the access's control. Without a control (an access
// C2 makes after parsing), any allocation of this compilation.
static bool never_shared(PhaseGVN& gvn, Node* base, Node* ctl = NULL) {
  AllocateNode* alloc = AllocateNode::Ideal_allocation(base, &gvn);
  if (alloc != NULL && (ctl == NULL || allocated_since_safepoint(alloc, ctl))) {
    return true;
  }
  const TypeInstPtr* type = gvn.type(base)->isa_instptr();
  return type != NULL && type->klass() == Compile::current()->env()->String_klass();
}

// The offset in `base` of an address made from it by AddPs (an element's:
// the header plus the scaled index), as the sum of their offsets: numbers
// only, so it stays right wherever C2 places it, across safepoints where GC
// moves the object. NULL if the address is not made from base.
static Node* offset_in_object(PhaseGVN& gvn, Node* adr, Node* base) {
  Node* offset = NULL;
  while (adr->is_AddP() && adr->in(AddPNode::Base)->uncast() == base->uncast()) {
    Node* part = adr->in(AddPNode::Offset);
    offset = offset == NULL ? part : gvn.transform(new AddXNode(offset, part));
    adr = adr->in(AddPNode::Address);
  }
  return offset != NULL && adr->uncast() == base->uncast() ? offset : NULL;
}

int DsoBarrierSetC2::check_kind(C2Access& access) {
  DecoratorSet decorators = access.decorators();
  if (!DistributedJava || (decorators & IN_NATIVE) != 0 ||
      (decorators & (ON_WEAK_OOP_REF | ON_PHANTOM_OOP_REF)) != 0) {
    return no_check;  // not a Java object's field, or the disabled Reference.get intrinsic's
  }
  LibraryCallKit* intrinsic = access.is_parse_access()
                                  ? static_cast<C2ParseAccess&>(access).kit()->is_LibraryCallKit()
                                  : NULL;
  if (intrinsic != NULL && needs_local_arguments(intrinsic->intrinsic_id())) {
    return no_check;  // its predicate found the arguments local (String.charAt's getChar)
  }
  if ((decorators & C2_UNSAFE_ACCESS) != 0 && intrinsic != NULL) {
    // Unsafe's intrinsics (the atomic classes' and VarHandles'): the base may
    // be null, and which field the offset names is told at run time.
    if (never_shared(access.gvn(), access.base(), intrinsic->control())) {
      return no_check;
    }
    return ((decorators & C2_WRITE_ACCESS) != 0 ? DsoCompiledAccess::write
                                                 : DsoCompiledAccess::read) |
           DsoCompiledAccess::dynamic;
  }
  if ((decorators & IN_HEAP) == 0) {
    return unsupported;  // neither the heap's nor native memory for sure
  }
  if ((decorators & C2_ARRAY_COPY) != 0) {
    // An array copy's element turned into a load and a store
    // (ArrayCopyNode::Ideal). On a node every copy is System.arraycopy's
    // intrinsic, whose predicate found both arrays local with no safepoint
    // before the copy, or string concatenation's from Strings' arrays
    // (Strings travel by value) into its own.
    return no_check;
  }
  if (!access.is_parse_access()) {
    return never_shared(access.gvn(), access.base()) ? no_check : unsupported;
  }
  GraphKit* kit = static_cast<C2ParseAccess&>(access).kit();
  if ((decorators & C2_DSO_BYTECODE) == 0 || kit->is_Parse() == NULL) {
    return never_shared(access.gvn(), access.base(), kit->control()) ? no_check : unsupported;
  }
  // An object this compilation allocated, with no call of a Java method
  // since: local, and should a fence publish it at a safepoint on the way,
  // the fence deoptimizes the frame. So constructors inlined after their
  // `new`, and objects that never escape, carry no check, and escape
  // analysis may replace them by their fields.
  AllocateNode* alloc = AllocateNode::Ideal_allocation(access.base(), &access.gvn());
  if (alloc != NULL && allocated_since_safepoint(alloc, kit->control(), true)) {
    return no_check;
  }
  int kind = (decorators & C2_WRITE_ACCESS) != 0 ? DsoCompiledAccess::write
                                                   : DsoCompiledAccess::read;
  switch (kit->java_bc()) {
    case Bytecodes::_getfield:
    case Bytecodes::_putfield: {
      ciField* field = kit->C->alias_type(access.addr().type())->field();
      return field != NULL ? DsoCompiledAccess::of_instance_field(kit->env(), field, kind)
                           : unsupported;
    }
    case Bytecodes::_getstatic:
    case Bytecodes::_putstatic:
      return kind;
    case Bytecodes::_iaload: case Bytecodes::_laload: case Bytecodes::_faload:
    case Bytecodes::_daload: case Bytecodes::_aaload: case Bytecodes::_baload:
    case Bytecodes::_caload: case Bytecodes::_saload:
    case Bytecodes::_iastore: case Bytecodes::_lastore: case Bytecodes::_fastore:
    case Bytecodes::_dastore: case Bytecodes::_aastore: case Bytecodes::_bastore:
    case Bytecodes::_castore: case Bytecodes::_sastore:
      return kind | DsoCompiledAccess::indexed;
    default:
      return unsupported;
  }
}

int DsoBarrierSetC2::check_kind_or_refuse(C2Access& access) {
  int kind = check_kind(access);
  if (kind == unsupported) {
    // Never compiled unchecked: the method stays at C1, whose code checks.
    Compile::current()->record_method_not_compilable("djava: an unchecked heap access");
    return no_check;
  }
  return kind;
}

// The operand slots the parser has popped for the bytecode by the time it
// reaches the access (parse2.cpp, parse3.cpp). They are still in the map,
// so raising sp by this much gives the state before the bytecode.
static int popped_slots(GraphKit* kit, BasicType type) {
  int value = type2size[type];
  switch (kit->java_bc()) {
    case Bytecodes::_getfield:  return 1;               // the receiver
    case Bytecodes::_getstatic: return 0;
    case Bytecodes::_putfield:                          // the receiver pops after
    case Bytecodes::_putstatic: return value;
    case Bytecodes::_iastore: case Bytecodes::_lastore: case Bytecodes::_fastore:
    case Bytecodes::_dastore: case Bytecodes::_aastore: case Bytecodes::_bastore:
    case Bytecodes::_castore: case Bytecodes::_sastore:
      return 2 + value;                                 // array, index, value
    default:
      return 2;                                         // an element load: array, index
  }
}

// Sets the kit's state to the one before the bytecode, operands on the
// stack, with re-execution: a frame deoptimized at the call or trap that
// follows re-executes the bytecode in the interpreter, which checks again.
// The bci first: a later sync of a stale one would reset the flag
// (JVMState::set_bci), and the frame would resume after the bytecode with
// its operands on the stack (an array's element loads and stores are not
// among the bytecodes the flag is implied for). An intrinsic's kit puts
// the call's arguments back itself (LibraryCallKit::reexecute_sp).
static void reexecute_bytecode(GraphKit* kit, BasicType type) {
  if (kit->is_LibraryCallKit() == NULL) {
    kit->set_sp(kit->sp() + popped_slots(kit, type));
  }
  kit->sync_jvms();
  kit->jvms()->set_should_reexecute(true);
}

// The cached test of a replica's access, emit_cached_test's
// (cpu/x86/dso) in the graph, on the replica's branch: 1 if this node's
// copy allows the access now (a read's copy S or M and not BLOCKED; a
// write announced in the thread's slot and finding M), else 0. NULL if
// the access has no inline test: a write that must pin its copy
// (without membarrier), a read of Thread.threadStatus (the runtime's).
// `offset`: an element's offset in its array (NULL: not an element), by
// which an array in blocks finds its block's word.
static Node* cached_test(GraphKit* kit, Node* mark, int kind, Node* offset) {
  const bool is_write = (kind & DsoCompiledAccess::write) != 0;
  // A dynamic access may be a mirror's own field or Thread.threadStatus:
  // the stub tells.
  if ((kind & (DsoCompiledAccess::thread_status | DsoCompiledAccess::dynamic)) != 0 ||
      (is_write && !DsoInterpreter::announced_writes())) {
    return NULL;
  }
  PhaseGVN& gvn = kit->gvn();
  const int raw = Compile::AliasIdxRaw;
  // The replica's entry: the mark's index bits select it in the table,
  // which is reserved once and never moves.
  Node* index = gvn.transform(new AndLNode(
      gvn.transform(new URShiftLNode(mark, kit->intcon(DsoMark::index_shift))),
      kit->longcon(DsoMark::max_index)));
  Node* entry_offset = gvn.transform(new MulLNode(index, kit->longcon(sizeof(DsoReplica))));
  Node* table = kit->makecon(TypeRawPtr::make((address)DsoReplicaTable::entries_addr()));

  IdealKit ideal(kit, true);
#define __ ideal.
  IdealVariable hit(ideal);
  IdealVariable word_of_copy(ideal);
  __ declarations_done();
  __ set(hit, __ ConI(0));
  Node* entries = __ load(__ ctrl(), table, TypeRawPtr::NOTNULL, T_ADDRESS, raw);
  Node* entry = __ AddP(__ top(), entries, entry_offset);
  __ set(word_of_copy, __ load(__ ctrl(), __ AddP(__ top(), entry, __ ConX(offset_of(DsoReplica, _word))),
                               TypeRawPtr::BOTTOM, T_ADDRESS, raw));
  if (offset != NULL) {
    // No word: no cache here (the stub refuses), or an array in blocks:
    // the word of the block holding the element, if this node has looked
    // its chunk up (DsoBlocks::set_chunk), else the stub.
    __ if_then(__ value(word_of_copy), BoolTest::eq, kit->null(), PROB_UNLIKELY_MAG(1)); {
      Node* blocks = __ load(__ ctrl(), __ AddP(__ top(), entry, __ ConX(offset_of(DsoReplica, _blocks))),
                             TypeRawPtr::BOTTOM, T_ADDRESS, raw);
      __ if_then(blocks, BoolTest::ne, kit->null(), PROB_LIKELY_MAG(1)); {
        Node* base = __ load(__ ctrl(), __ AddP(__ top(), blocks, __ ConX(offset_of(DsoBlocks, _base))),
                             TypeInt::INT, T_INT, raw);
        Node* shift = __ load(__ ctrl(), __ AddP(__ top(), blocks, __ ConX(offset_of(DsoBlocks, _byte_shift))),
                              TypeInt::INT, T_INT, raw);
        Node* count = __ load(__ ctrl(), __ AddP(__ top(), blocks, __ ConX(offset_of(DsoBlocks, _count))),
                              TypeInt::INT, T_INT, raw);
        // 32 bits: an element's offset from element 0 is below 2^31, and a
        // block holds at least two bytes, so the block's number is never
        // negative (and below _count for an element the range check let
        // through; the test keeps a wrong number from reading past _words).
        Node* from_first = __ SubI(gvn.transform(new ConvL2INode(offset)), base);
        Node* block = gvn.transform(new URShiftINode(from_first, shift));
        __ if_then(block, BoolTest::lt, count, PROB_LIKELY_MAG(3)); {
          Node* words = __ load(__ ctrl(), __ AddP(__ top(), blocks, __ ConX(offset_of(DsoBlocks, _words))),
                                TypeRawPtr::NOTNULL, T_ADDRESS, raw);
          Node* at = gvn.transform(new LShiftLNode(gvn.transform(new ConvI2LNode(block)),
                                                   kit->intcon(LogBytesPerWord)));
          __ set(word_of_copy, __ load(__ ctrl(), __ AddP(__ top(), words, at), TypeRawPtr::BOTTOM,
                                       T_ADDRESS, raw));
        } __ end_if();
      } __ end_if();
    } __ end_if();
  }
  Node* word = __ value(word_of_copy);
  __ if_then(word, BoolTest::ne, kit->null(), PROB_LIKELY_MAG(3)); {
    Node* slot = NULL;
    if (is_write) {
      // Announce the store, then test the word. The barrier keeps the
      // compiler from swapping them (both are raw memory's, so it orders
      // that slice alone); the revoker's membarrier() orders them in the
      // CPUs.
      slot = __ AddP(__ top(), __ thread(), __ ConX(in_bytes(JavaThread::dso_inline_write_offset())));
      __ store(__ ctrl(), slot, word, T_ADDRESS, raw, MemNode::unordered);
      kit->sync_kit(ideal);
      kit->insert_mem_bar_volatile(Op_MemBarCPUOrder, raw);
      __ sync_kit(kit);
    }
    // Pinned below the tests before it: never commoned with another
    // check's load of the word, which other threads change. On x86 a load
    // is an acquire load: the access, below the merge of this test, reads
    // after it.
    Node* w = __ load(__ ctrl(), word, TypeLong::LONG, T_LONG, raw, false, MemNode::unordered,
                      LoadNode::Pinned);
    Node* state = __ AndI(gvn.transform(new ConvL2INode(w)),
                          __ ConI(DJAVA_SOS_WORD_STATE_MASK | DJAVA_SOS_WORD_BLOCKED));
    if (!is_write) {
      // Readable: S or M (1 or 2), not BLOCKED; that is, bit `state` of 0b110.
      Node* readable = __ AndI(gvn.transform(new URShiftINode(__ ConI(6), state)), __ ConI(1));
      __ if_then(readable, BoolTest::ne, __ ConI(0), PROB_LIKELY_MAG(3)); {
        __ set(hit, __ ConI(1));
      } __ end_if();
    } else {
      __ if_then(state, BoolTest::eq, __ ConI(DJAVA_SOS_WORD_STATE_M), PROB_LIKELY_MAG(3)); {
        __ set(hit, __ ConI(1));
      } __ else_(); {
        __ store(__ ctrl(), slot, kit->null(), T_ADDRESS, raw, MemNode::unordered);  // withdrawn
      } __ end_if();
    }
  } __ end_if();
  Node* result = __ value(hit);
  kit->final_sync(ideal);
#undef __
  return result;
}

Node* DsoBarrierSetC2::check(C2ParseAccess& access, int kind) {
  GraphKit* kit = access.kit();
  if (kit->stopped()) {
    return NULL;
  }
  PhaseGVN& gvn = kit->gvn();
  Node* obj = access.base();
  const bool dynamic = (kind & DsoCompiledAccess::dynamic) != 0;

  // Unsafe with a null base addresses native memory: no check.
  Node* native_ctl = kit->top();
  if (dynamic && TypePtr::NULL_PTR->higher_equal(gvn.type(obj))) {
    Node* null_cmp = gvn.transform(new CmpPNode(obj, kit->null()));
    Node* is_null = gvn.transform(new BoolNode(null_cmp, BoolTest::eq));
    IfNode* null_iff = kit->create_and_map_if(kit->control(), is_null, PROB_UNLIKELY_MAG(3),
                                              COUNT_UNKNOWN);
    native_ctl = gvn.transform(new IfTrueNode(null_iff));
    kit->set_control(gvn.transform(new IfFalseNode(null_iff)));
    const Type* not_null = gvn.type(obj)->join_speculative(TypePtr::NOTNULL);
    obj = gvn.transform(new CastPPNode(obj, not_null));
    obj->init_req(0, kit->control());
  }

  // A field's or an element's check may share its load of the mark with
  // the object's other checks, and leave a loop with it (C2 then versions
  // the loop for a local object, without checks): a local object turns
  // shared only when published, and the publication's fence deoptimizes
  // every frame of C2's code holding an object it publishes (dsoFence.cpp,
  // docs/HEAP.md). Not a mirror's (a class's statics become shared at its
  // definition, with no fence) nor Unsafe's.
  const TypeInstPtr* inst = gvn.type(obj)->isa_instptr();
  const bool mirror = inst != NULL && inst->klass() == kit->env()->Class_klass();
  // Free of control (the object is not null, and its cast hangs on its
  // null check), so that one load serves every check of the object until
  // memory changes (a call, a barrier).
  const bool shareable = !dynamic && !mirror && !TypePtr::NULL_PTR->higher_equal(gvn.type(obj));
  Node* mark_adr = kit->basic_plus_adr(obj, oopDesc::mark_offset_in_bytes());
  Node* mark = kit->make_load(shareable ? NULL : kit->control(), mark_adr, TypeLong::LONG, T_LONG,
                              MemNode::unordered,
                              shareable ? LoadNode::DependsOnlyOnTest : LoadNode::Pinned);
  Node* cmp = gvn.transform(new CmpLNode(mark, kit->longcon(0)));
  // A site C1's profiling code compiled and no replica reached: C2
  // speculates that its objects are local, and tests them with a trap
  // instead of the whole check (DsoCompiledAccess::shared_seen). No path
  // comes back from the trap, so later checks of the object under the
  // same mark fold into this one, and the code stays as small as the
  // stock compiler's. The trap marks the site first: the recompiled method
  // checks it in full.
  volatile jbyte* shared_seen = shareable && kit->is_LibraryCallKit() == NULL
                                    ? DsoCompiledAccess::shared_seen(kit->method(), kit->bci(), false)
                                    : NULL;
  const jbyte seen = shared_seen != NULL ? Atomic::load(shared_seen) : -1;
  if (seen == 0 && !kit->too_many_traps(Deoptimization::Reason_dso_shared)) {
    Node* is_local = gvn.transform(new BoolNode(cmp, BoolTest::ge));
    {
      BuildCutout unless(kit, is_local, PROB_MAX);
      Node* site = kit->makecon(TypeRawPtr::make((address)shared_seen));
      kit->store_to_memory(kit->control(), site, kit->intcon(DsoCompiledAccess::site_shared),
                           T_BYTE, Compile::AliasIdxRaw, MemNode::unordered);
      reexecute_bytecode(kit, access.type());
      kit->uncommon_trap(Deoptimization::Reason_dso_shared, Deoptimization::Action_make_not_entrant);
    }
    return kit->longcon(0);  // a local object's mark (speculated_local)
  }
  Node* shared = gvn.transform(new BoolNode(cmp, BoolTest::lt));
  IfNode* iff = kit->create_and_map_if(kit->control(), shared, PROB_UNLIKELY_MAG(5), COUNT_UNKNOWN);
  Node* local_ctl = gvn.transform(new IfFalseNode(iff));
  Node* shared_ctl = gvn.transform(new IfTrueNode(iff));

  Node* offset;
  if ((kind & (DsoCompiledAccess::indexed | DsoCompiledAccess::dynamic)) != 0) {
    // The element's (or Unsafe's) offset in the object: an array kept in
    // blocks needs its block.
    offset = offset_in_object(gvn, access.addr().node(), obj);
    if (offset == NULL) {
      // An address not made from the object (Unsafe's raw one), turned
      // into numbers: the casts hang on the shared branch, whose test (a
      // pinned mark's) stays with the access, for an address turned into a
      // number must not be shared with code past a safepoint, where GC may
      // have moved the object.
      assert(!shareable, "a shareable test may leave its access");
      Node* element = gvn.transform(new CastP2XNode(shared_ctl, access.addr().node()));
      Node* start = gvn.transform(new CastP2XNode(shared_ctl, obj));
      offset = gvn.transform(new SubXNode(element, start));
    }
  } else {
    offset = kit->longcon(-1);
  }

  // Three ways to the access: a local object; a replica whose copy passed
  // the cached test; a replica after the stub. Merged: control, i_o and
  // raw memory, the only slice the test and the stub change (the stub's
  // fill of a replica is not one of the Java heap's slices: see the
  // header). Every other slice stays the one before the check, so the
  // check keeps no load of the heap in a loop, the mark's included (a
  // phi of all of memory would: IGVN does not split one per slice).
  enum { local_path = 1, cached_path, stub_path, native_path, paths };
  const int raw = Compile::AliasIdxRaw;
  Node* ctl[paths];
  Node* io[paths];
  Node* mem[paths];
  {
    PreserveJVMState replica(kit);
    kit->set_control(shared_ctl);
    Node* hit = cached_test(kit, mark, kind,
                            (kind & DsoCompiledAccess::indexed) != 0 ? offset : NULL);
    Node* miss_ctl = kit->control();
    Node* hit_ctl = kit->top();
    if (hit != NULL) {
      Node* hit_cmp = gvn.transform(new CmpINode(hit, kit->intcon(0)));
      Node* is_hit = gvn.transform(new BoolNode(hit_cmp, BoolTest::ne));
      IfNode* hit_iff = kit->create_and_map_if(kit->control(), is_hit, PROB_LIKELY_MAG(2),
                                               COUNT_UNKNOWN);
      hit_ctl = gvn.transform(new IfTrueNode(hit_iff));
      miss_ctl = gvn.transform(new IfFalseNode(hit_iff));
    }
    // A site C1's profiling code saw replicas reach, each of them passing
    // the cached test: C2 speculates that they go on passing it, and a
    // miss traps instead of calling the stub. Then no path rejoins the
    // code from a call, and C2 splits no value around one. The trap marks
    // the site first, and leaves the code in place: a rare miss costs a
    // deoptimization, not a recompilation (PerBytecodeTrapLimit such traps
    // in the method make it not entrant; the recompiled method calls the
    // stub at the marked sites).
    const bool trap_on_miss = DjavaSpeculateCachedHits && hit != NULL &&
                              seen == DsoCompiledAccess::site_shared &&
                              !kit->too_many_traps(Deoptimization::Reason_dso_miss);
    if (trap_on_miss) {
      PreserveJVMState trap(kit);
      kit->set_control(miss_ctl);
      Node* site = kit->makecon(TypeRawPtr::make((address)shared_seen));
      kit->store_to_memory(kit->control(), site,
                           kit->intcon(DsoCompiledAccess::site_shared | DsoCompiledAccess::site_missed),
                           T_BYTE, Compile::AliasIdxRaw, MemNode::unordered);
      reexecute_bytecode(kit, access.type());
      kit->uncommon_trap(Deoptimization::Reason_dso_miss, Deoptimization::Action_maybe_recompile);
      ctl[stub_path] = kit->top();
      io[stub_path] = kit->top();
      mem[stub_path] = kit->top();
    } else {
      PreserveJVMState stub(kit);
      kit->set_control(miss_ctl);
      reexecute_bytecode(kit, access.type());
      kit->kill_dead_locals();
      Node* call = kit->make_runtime_call(GraphKit::RC_NO_LEAF | GraphKit::RC_UNCOMMON,
                                          access_Type(), _access_stub, "dso_access",
                                          TypeRawPtr::BOTTOM, obj, kit->intcon(kind), offset,
                                          kit->top());
      // A refusal deoptimizes: the interpreter re-executes the bytecode and throws.
      kit->make_slow_call_ex(call, kit->env()->Throwable_klass(), false, /* deoptimize */ true);
      ctl[stub_path] = kit->control();
      io[stub_path] = kit->i_o();
      mem[stub_path] = kit->memory(raw);
    }
    ctl[cached_path] = hit_ctl;
    io[cached_path] = hit != NULL ? kit->i_o() : kit->top();
    mem[cached_path] = hit != NULL ? kit->memory(raw) : kit->top();
  }
  ctl[local_path] = local_ctl;
  io[local_path] = kit->i_o();
  mem[local_path] = kit->memory(raw);
  // Native memory's path left before the mark's load: as the local one.
  ctl[native_path] = native_ctl;
  io[native_path] = native_ctl != kit->top() ? io[local_path] : kit->top();
  mem[native_path] = native_ctl != kit->top() ? mem[local_path] : kit->top();

  // Only the paths there are: GVN would turn a dead one into a null
  // input, which a walk up the control (allocated_since_safepoint) cannot
  // tell from a loop's back edge the parser has not merged yet.
  int live = 1;
  for (int i = local_path; i < paths; i++) {
    live += ctl[i] != kit->top() ? 1 : 0;
  }
  RegionNode* region = new RegionNode(live);
  kit->record_for_igvn(region);
  PhiNode* io_phi = new PhiNode(region, Type::ABIO);
  PhiNode* raw_phi = new PhiNode(region, Type::MEMORY, TypeRawPtr::BOTTOM);
  for (int i = local_path, j = 1; i < paths; i++) {
    if (ctl[i] != kit->top()) {
      region->init_req(j, ctl[i]);
      io_phi->init_req(j, io[i]);
      raw_phi->init_req(j, mem[i]);
      j++;
    }
  }
  kit->set_control(gvn.transform(region));
  kit->set_i_o(gvn.transform(io_phi));
  kit->set_memory(gvn.transform(raw_phi), raw);
  if (dynamic) {
    readdress(access);
  }
  // A native path has no mark.
  return native_ctl == kit->top() ? mark : NULL;
}

// An Unsafe access whose base may be null or an object addresses raw memory:
// C2 made its address (make_unsafe_address) from the base cast to a raw
// pointer, before the check. A raw pointer is no oop, so GC does not update
// it, and the stub may let GC move the object: past the check the address
// is made again from the base, which GC does update. (An address made from
// the base itself is a derived pointer, which GC updates.)
void DsoBarrierSetC2::readdress(C2ParseAccess& access) {
  GraphKit* kit = access.kit();
  Node* adr = access.addr().node();
  GrowableArray<Node*> offsets;
  while (adr->is_AddP() && adr->in(AddPNode::Base)->is_top()) {
    offsets.push(adr->in(AddPNode::Offset));
    adr = adr->in(AddPNode::Address);
  }
  if (offsets.is_empty()) {
    return;  // derived from the base
  }
  if (!adr->is_CheckCastPP() || adr->in(1) != access.base()) {
    kit->C->record_method_not_compilable("djava: an Unsafe address of unknown shape");
    return;
  }
  Node* raw = kit->gvn().transform(new CheckCastPPNode(kit->control(), access.base(),
                                                       TypeRawPtr::BOTTOM));
  for (int i = offsets.length() - 1; i >= 0; i--) {
    raw = kit->basic_plus_adr(kit->top(), raw, offsets.at(i));
  }
  access.addr().set_node(raw);
}

// After a store: the thread's write slot is empty unless the write
// announced itself (withdrawn here, after the store) or pinned its copy
// (the leaf unpins it).
void DsoBarrierSetC2::end_write(C2ParseAccess& access, Node* store, Node* mark) {
  GraphKit* kit = access.kit();
  if (kit->stopped()) {
    return;
  }
  PhaseGVN& gvn = kit->gvn();
  IdealKit ideal(kit, true);
#define __ ideal.
  // Only a replica's write announces or pins (the check's mark tells):
  // code versioned for a local object keeps no test of the slot.
  if (mark != NULL) {
    __ if_then(mark, BoolTest::lt, kit->longcon(0), PROB_UNLIKELY_MAG(5));
  }
  Node* thread = __ thread();
  Node* slot = __ AddP(__ top(), thread, __ ConX(in_bytes(JavaThread::dso_inline_write_offset())));
  Node* began = __ load(__ ctrl(), slot, TypeX_X, TypeX_X->basic_type(), Compile::AliasIdxRaw);
  __ if_then(began, BoolTest::ne, __ ConX(0), PROB_UNLIKELY_MAG(4)); {
    Node* pinned = gvn.transform(new AndXNode(began, __ ConX(DsoInterpreter::pinned_mark)));
    __ if_then(pinned, BoolTest::eq, __ ConX(0), PROB_LIKELY_MAG(1)); {
      // Withdrawn after the store: the barrier keeps the compiler from
      // moving it up (x86 keeps stores in order). With the store as its
      // precedent it orders raw memory alone, so that no other slice
      // changes in a loop with a checked store.
      kit->sync_kit(ideal);
      if (store != NULL) {
        kit->insert_mem_bar_volatile(Op_MemBarRelease, Compile::AliasIdxRaw, store);
      } else {
        kit->insert_mem_bar(Op_MemBarRelease);
      }
      __ sync_kit(kit);
      __ store(__ ctrl(), slot, __ ConX(0), TypeX_X->basic_type(), Compile::AliasIdxRaw,
               MemNode::unordered);
    } __ else_(); {
      // The leaf's memory input is all of memory, the store's slice
      // included: it comes after the store in any schedule.
      kit->sync_kit(ideal);
      kit->make_runtime_call(GraphKit::RC_LEAF, end_write_Type(),
                             CAST_FROM_FN_PTR(address, DsoBarrierSetC2::end_write_C),
                             "dso_end_write", TypeRawPtr::BOTTOM, thread);
      __ sync_kit(kit);
    } __ end_if();
  } __ end_if();
  if (mark != NULL) {
    __ end_if();
  }
  kit->final_sync(ideal);
#undef __
}

// Whether check() speculated the object local (a trap, not the check): its
// load need not be pinned, and its store has no end.
static bool speculated_local(Node* mark) {
  return mark != NULL && mark->is_Con();
}

Node* DsoBarrierSetC2::load_at(C2Access& access, const Type* val_type) const {
  int kind = check_kind_or_refuse(access);
  if (kind >= 0) {
    Node* mark = check(static_cast<C2ParseAccess&>(access), kind);
    // The load stays below its own check (never above it, never commoned
    // with a load above it).
    if (speculated_local(mark)) {
      access.add_decorators(C2_CONTROL_DEPENDENT_LOAD);
    } else {
      access.add_decorators(C2_CONTROL_DEPENDENT_LOAD | C2_PINNED_LOAD);
    }
  }
  return CardTableBarrierSetC2::load_at(access, val_type);
}

Node* DsoBarrierSetC2::store_at(C2Access& access, C2AccessValue& val) const {
  int kind = check_kind_or_refuse(access);
  Node* mark = NULL;
  if (kind >= 0) {
    mark = check(static_cast<C2ParseAccess&>(access), kind);
  }
  Node* store = CardTableBarrierSetC2::store_at(access, val);
  if (kind >= 0 && !speculated_local(mark)) {
    end_write(static_cast<C2ParseAccess&>(access), store, mark);
  }
  return store;
}

// Atomics come from Unsafe's intrinsics (VarHandles' and the atomic
// classes' among them): checked as a write, whether or not it stores.
template <typename Op>
static Node* checked_atomic(C2AtomicParseAccess& access, int kind, Op op) {
  if (kind >= 0) {
    DsoBarrierSetC2::check(access, kind);
  }
  Node* result = op();
  if (kind >= 0) {
    // The value is the kit's after the end: it is the atomic's result.
    DsoBarrierSetC2::end_write(access, NULL, NULL);
  }
  return result;
}

Node* DsoBarrierSetC2::atomic_cmpxchg_val_at(C2AtomicParseAccess& access, Node* expected_val,
                                             Node* new_val, const Type* val_type) const {
  return checked_atomic(access, check_kind_or_refuse(access), [&] {
    return CardTableBarrierSetC2::atomic_cmpxchg_val_at(access, expected_val, new_val, val_type);
  });
}

Node* DsoBarrierSetC2::atomic_cmpxchg_bool_at(C2AtomicParseAccess& access, Node* expected_val,
                                              Node* new_val, const Type* val_type) const {
  return checked_atomic(access, check_kind_or_refuse(access), [&] {
    return CardTableBarrierSetC2::atomic_cmpxchg_bool_at(access, expected_val, new_val, val_type);
  });
}

Node* DsoBarrierSetC2::atomic_xchg_at(C2AtomicParseAccess& access, Node* new_val,
                                      const Type* value_type) const {
  return checked_atomic(access, check_kind_or_refuse(access), [&] {
    return CardTableBarrierSetC2::atomic_xchg_at(access, new_val, value_type);
  });
}

Node* DsoBarrierSetC2::atomic_add_at(C2AtomicParseAccess& access, Node* new_val,
                                     const Type* value_type) const {
  return checked_atomic(access, check_kind_or_refuse(access), [&] {
    return CardTableBarrierSetC2::atomic_add_at(access, new_val, value_type);
  });
}

void DsoBarrierSetC2::clone(GraphKit* kit, Node* src, Node* dst, Node* size, bool is_array) const {
  // Object.clone's intrinsic is off on a node (is_intrinsic_allowed): clone
  // is compiled as its native call, which is checked.
  if (DistributedJava && !never_shared(kit->gvn(), src, kit->control())) {
    kit->C->record_method_not_compilable("djava: an unchecked clone");
  }
  CardTableBarrierSetC2::clone(kit, src, dst, size, is_array);
}

bool DsoBarrierSetC2::is_intrinsic_allowed(vmIntrinsics::ID id) {
  if (!DistributedJava) {
    return true;
  }
  switch (id) {
    // Arithmetic, bits and conversions: no heap.
    case vmIntrinsics::_dabs: case vmIntrinsics::_fabs: case vmIntrinsics::_iabs:
    case vmIntrinsics::_labs: case vmIntrinsics::_dsin: case vmIntrinsics::_dcos:
    case vmIntrinsics::_dtan: case vmIntrinsics::_datan2: case vmIntrinsics::_dsqrt:
    case vmIntrinsics::_dlog: case vmIntrinsics::_dlog10: case vmIntrinsics::_dpow:
    case vmIntrinsics::_dexp: case vmIntrinsics::_floor: case vmIntrinsics::_ceil:
    case vmIntrinsics::_rint: case vmIntrinsics::_min: case vmIntrinsics::_max:
    case vmIntrinsics::_minF: case vmIntrinsics::_maxF: case vmIntrinsics::_minD:
    case vmIntrinsics::_maxD: case vmIntrinsics::_fmaD: case vmIntrinsics::_fmaF:
    case vmIntrinsics::_dcopySign: case vmIntrinsics::_fcopySign:
    case vmIntrinsics::_dsignum: case vmIntrinsics::_fsignum:
    case vmIntrinsics::_addExactI: case vmIntrinsics::_addExactL:
    case vmIntrinsics::_decrementExactI: case vmIntrinsics::_decrementExactL:
    case vmIntrinsics::_incrementExactI: case vmIntrinsics::_incrementExactL:
    case vmIntrinsics::_multiplyExactI: case vmIntrinsics::_multiplyExactL:
    case vmIntrinsics::_multiplyHigh: case vmIntrinsics::_negateExactI:
    case vmIntrinsics::_negateExactL: case vmIntrinsics::_subtractExactI:
    case vmIntrinsics::_subtractExactL:
    case vmIntrinsics::_floatToRawIntBits: case vmIntrinsics::_floatToIntBits:
    case vmIntrinsics::_intBitsToFloat: case vmIntrinsics::_doubleToRawLongBits:
    case vmIntrinsics::_doubleToLongBits: case vmIntrinsics::_longBitsToDouble:
    case vmIntrinsics::_numberOfLeadingZeros_i: case vmIntrinsics::_numberOfLeadingZeros_l:
    case vmIntrinsics::_numberOfTrailingZeros_i: case vmIntrinsics::_numberOfTrailingZeros_l:
    case vmIntrinsics::_bitCount_i: case vmIntrinsics::_bitCount_l:
    case vmIntrinsics::_reverseBytes_i: case vmIntrinsics::_reverseBytes_l:
    case vmIntrinsics::_reverseBytes_c: case vmIntrinsics::_reverseBytes_s:
    // An object's header, its class and its length: the same on every node
    // (a replica's identity hash is the cluster's, in the usual bits).
    case vmIntrinsics::_hashCode: case vmIntrinsics::_identityHashCode:
    case vmIntrinsics::_getClass: case vmIntrinsics::_getLength:
    case vmIntrinsics::_isInstance: case vmIntrinsics::_isAssignableFrom:
    case vmIntrinsics::_Class_cast: case vmIntrinsics::_getModifiers:
    case vmIntrinsics::_isInterface: case vmIntrinsics::_isArray:
    case vmIntrinsics::_isPrimitive: case vmIntrinsics::_isHidden:
    case vmIntrinsics::_getSuperclass: case vmIntrinsics::_getClassAccessFlags:
    // Allocation, the thread, time, fences and compiler hints.
    case vmIntrinsics::_newArray: case vmIntrinsics::_allocateInstance:
    case vmIntrinsics::_allocateUninitializedArray: case vmIntrinsics::_Object_init:
    case vmIntrinsics::_currentThread: case vmIntrinsics::_getCallerClass:
    case vmIntrinsics::_currentTimeMillis: case vmIntrinsics::_nanoTime:
    case vmIntrinsics::_onSpinWait: case vmIntrinsics::_loadFence:
    case vmIntrinsics::_storeFence: case vmIntrinsics::_storeStoreFence:
    case vmIntrinsics::_fullFence: case vmIntrinsics::_Preconditions_checkIndex:
    case vmIntrinsics::_Preconditions_checkLongIndex: case vmIntrinsics::_profileBoolean:
    case vmIntrinsics::_isCompileConstant: case vmIntrinsics::_blackhole:
    // Unsafe's gets, puts and atomics (VarHandles' and the atomic classes'
    // among them): checked with the kind told at run time
    // (DsoCompiledAccess::dynamic).
    case vmIntrinsics::_getReference: case vmIntrinsics::_getBoolean: case vmIntrinsics::_getByte:
    case vmIntrinsics::_getShort: case vmIntrinsics::_getChar: case vmIntrinsics::_getInt:
    case vmIntrinsics::_getLong: case vmIntrinsics::_getFloat: case vmIntrinsics::_getDouble:
    case vmIntrinsics::_putReference: case vmIntrinsics::_putBoolean: case vmIntrinsics::_putByte:
    case vmIntrinsics::_putShort: case vmIntrinsics::_putChar: case vmIntrinsics::_putInt:
    case vmIntrinsics::_putLong: case vmIntrinsics::_putFloat: case vmIntrinsics::_putDouble:
    case vmIntrinsics::_getReferenceVolatile: case vmIntrinsics::_getBooleanVolatile:
    case vmIntrinsics::_getByteVolatile: case vmIntrinsics::_getShortVolatile:
    case vmIntrinsics::_getCharVolatile: case vmIntrinsics::_getIntVolatile:
    case vmIntrinsics::_getLongVolatile: case vmIntrinsics::_getFloatVolatile:
    case vmIntrinsics::_getDoubleVolatile: case vmIntrinsics::_putReferenceVolatile:
    case vmIntrinsics::_putBooleanVolatile: case vmIntrinsics::_putByteVolatile:
    case vmIntrinsics::_putShortVolatile: case vmIntrinsics::_putCharVolatile:
    case vmIntrinsics::_putIntVolatile: case vmIntrinsics::_putLongVolatile:
    case vmIntrinsics::_putFloatVolatile: case vmIntrinsics::_putDoubleVolatile:
    case vmIntrinsics::_getReferenceOpaque: case vmIntrinsics::_getBooleanOpaque:
    case vmIntrinsics::_getByteOpaque: case vmIntrinsics::_getShortOpaque:
    case vmIntrinsics::_getCharOpaque: case vmIntrinsics::_getIntOpaque:
    case vmIntrinsics::_getLongOpaque: case vmIntrinsics::_getFloatOpaque:
    case vmIntrinsics::_getDoubleOpaque: case vmIntrinsics::_putReferenceOpaque:
    case vmIntrinsics::_putBooleanOpaque: case vmIntrinsics::_putByteOpaque:
    case vmIntrinsics::_putShortOpaque: case vmIntrinsics::_putCharOpaque:
    case vmIntrinsics::_putIntOpaque: case vmIntrinsics::_putLongOpaque:
    case vmIntrinsics::_putFloatOpaque: case vmIntrinsics::_putDoubleOpaque:
    case vmIntrinsics::_getReferenceAcquire: case vmIntrinsics::_getBooleanAcquire:
    case vmIntrinsics::_getByteAcquire: case vmIntrinsics::_getShortAcquire:
    case vmIntrinsics::_getCharAcquire: case vmIntrinsics::_getIntAcquire:
    case vmIntrinsics::_getLongAcquire: case vmIntrinsics::_getFloatAcquire:
    case vmIntrinsics::_getDoubleAcquire: case vmIntrinsics::_putReferenceRelease:
    case vmIntrinsics::_putBooleanRelease: case vmIntrinsics::_putByteRelease:
    case vmIntrinsics::_putShortRelease: case vmIntrinsics::_putCharRelease:
    case vmIntrinsics::_putIntRelease: case vmIntrinsics::_putLongRelease:
    case vmIntrinsics::_putFloatRelease: case vmIntrinsics::_putDoubleRelease:
    case vmIntrinsics::_getShortUnaligned: case vmIntrinsics::_getCharUnaligned:
    case vmIntrinsics::_getIntUnaligned: case vmIntrinsics::_getLongUnaligned:
    case vmIntrinsics::_putShortUnaligned: case vmIntrinsics::_putCharUnaligned:
    case vmIntrinsics::_putIntUnaligned: case vmIntrinsics::_putLongUnaligned:
    case vmIntrinsics::_compareAndSetReference: case vmIntrinsics::_compareAndExchangeReference:
    case vmIntrinsics::_compareAndExchangeReferenceAcquire:
    case vmIntrinsics::_compareAndExchangeReferenceRelease: case vmIntrinsics::_compareAndSetLong:
    case vmIntrinsics::_compareAndExchangeLong: case vmIntrinsics::_compareAndExchangeLongAcquire:
    case vmIntrinsics::_compareAndExchangeLongRelease: case vmIntrinsics::_compareAndSetInt:
    case vmIntrinsics::_compareAndExchangeInt: case vmIntrinsics::_compareAndExchangeIntAcquire:
    case vmIntrinsics::_compareAndExchangeIntRelease: case vmIntrinsics::_compareAndSetByte:
    case vmIntrinsics::_compareAndExchangeByte: case vmIntrinsics::_compareAndExchangeByteAcquire:
    case vmIntrinsics::_compareAndExchangeByteRelease: case vmIntrinsics::_compareAndSetShort:
    case vmIntrinsics::_compareAndExchangeShort:
    case vmIntrinsics::_compareAndExchangeShortAcquire:
    case vmIntrinsics::_compareAndExchangeShortRelease:
    case vmIntrinsics::_weakCompareAndSetReferencePlain:
    case vmIntrinsics::_weakCompareAndSetReferenceAcquire:
    case vmIntrinsics::_weakCompareAndSetReferenceRelease:
    case vmIntrinsics::_weakCompareAndSetReference:
    case vmIntrinsics::_weakCompareAndSetLongPlain:
    case vmIntrinsics::_weakCompareAndSetLongAcquire:
    case vmIntrinsics::_weakCompareAndSetLongRelease: case vmIntrinsics::_weakCompareAndSetLong:
    case vmIntrinsics::_weakCompareAndSetIntPlain:
    case vmIntrinsics::_weakCompareAndSetIntAcquire:
    case vmIntrinsics::_weakCompareAndSetIntRelease: case vmIntrinsics::_weakCompareAndSetInt:
    case vmIntrinsics::_weakCompareAndSetBytePlain:
    case vmIntrinsics::_weakCompareAndSetByteAcquire:
    case vmIntrinsics::_weakCompareAndSetByteRelease: case vmIntrinsics::_weakCompareAndSetByte:
    case vmIntrinsics::_weakCompareAndSetShortPlain:
    case vmIntrinsics::_weakCompareAndSetShortAcquire:
    case vmIntrinsics::_weakCompareAndSetShortRelease: case vmIntrinsics::_weakCompareAndSetShort:
    case vmIntrinsics::_getAndAddInt: case vmIntrinsics::_getAndAddLong:
    case vmIntrinsics::_getAndAddByte: case vmIntrinsics::_getAndAddShort:
    case vmIntrinsics::_getAndSetInt: case vmIntrinsics::_getAndSetLong:
    case vmIntrinsics::_getAndSetByte: case vmIntrinsics::_getAndSetShort:
    case vmIntrinsics::_getAndSetReference:
    // Method handles' linkers: calls, no heap access of their own.
    case vmIntrinsics::_invoke: case vmIntrinsics::_invokeGeneric:
    case vmIntrinsics::_invokeBasic: case vmIntrinsics::_linkToVirtual:
    case vmIntrinsics::_linkToStatic: case vmIntrinsics::_linkToSpecial:
    case vmIntrinsics::_linkToInterface: case vmIntrinsics::_compiledLambdaForm:
      return true;
    default:
      // String's and arrays' loops run behind a test of their arguments.
      // Arrays' copies and mismatch, Unsafe's bulk operations, the vector
      // API's, checksums' and ciphers' intrinsics read or write Java
      // arrays and objects directly; Object.notify's would skip a
      // replica's cluster monitor when its mark looks stack-locked.
      // Anything new is off until shown safe.
      return needs_local_arguments(id);
  }
}

bool DsoBarrierSetC2::needs_local_arguments(vmIntrinsics::ID id) {
  if (!DistributedJava) {
    return false;
  }
  switch (id) {
    // String's, StringBuilder's and Arrays' loops over byte[] and char[]
    // (a builder's array may be a replica; a String's never is, as Strings
    // travel by value, but its methods are called with builders' too).
    case vmIntrinsics::_compareToL: case vmIntrinsics::_compareToU:
    case vmIntrinsics::_compareToLU: case vmIntrinsics::_compareToUL:
    case vmIntrinsics::_equalsL: case vmIntrinsics::_equalsU:
    case vmIntrinsics::_indexOfL: case vmIntrinsics::_indexOfU:
    case vmIntrinsics::_indexOfUL: case vmIntrinsics::_indexOfIL:
    case vmIntrinsics::_indexOfIU: case vmIntrinsics::_indexOfIUL:
    case vmIntrinsics::_indexOfU_char: case vmIntrinsics::_indexOfL_char:
    case vmIntrinsics::_hasNegatives: case vmIntrinsics::_equalsB:
    case vmIntrinsics::_equalsC: case vmIntrinsics::_toBytesStringU:
    case vmIntrinsics::_getCharsStringU: case vmIntrinsics::_getCharStringU:
    case vmIntrinsics::_putCharStringU: case vmIntrinsics::_encodeISOArray:
    case vmIntrinsics::_encodeByteISOArray: case vmIntrinsics::_encodeAsciiArray:
    // System.arraycopy: a replica takes the native method, which is checked
    // (as is the intrinsic's slow path, SharedRuntime::slow_arraycopy_C:
    // patches/0033).
    case vmIntrinsics::_arraycopy:
      return true;
    default:
      // Not compress and inflate: they fill an array allocated just before,
      // and with the test between them C2 built a bad graph for
      // String(char[]) (its compilation gave up).
      return false;
  }
}

// The test is the shared-object check's (the mark's sign), once for the
// whole intrinsic: no safepoint poll falls between it and the intrinsic's
// accesses, so no publication fence makes an argument a replica meanwhile
// (the fence argument of docs/HEAP.md).
Node* DsoBarrierSetC2::local_arguments_predicate(LibraryCallKit* kit) {
  PhaseGVN& gvn = kit->gvn();
  ciMethod* callee = kit->callee();
  ciSignature* signature = callee->signature();
  RegionNode* java_code = new RegionNode(1);
  int slot = callee->is_static() ? 0 : 1;
  for (int i = callee->is_static() ? 0 : -1; i < signature->count() && !kit->stopped(); i++) {
    Node* arg;
    if (i < 0) {
      arg = kit->argument(0);
    } else {
      ciType* type = signature->type_at(i);
      arg = type->is_primitive_type() ? NULL : kit->argument(slot);
      slot += type->size();
    }
    if (arg == NULL || gvn.type(arg) == TypePtr::NULL_PTR ||
        never_shared(gvn, arg, kit->control())) {
      // A number, null (the intrinsic fails as its method would), or an
      // array this compilation allocates (String's compress fills one).
      continue;
    }
    Node* null_ctl = NULL;
    Node* obj = arg;
    if (TypePtr::NULL_PTR->higher_equal(gvn.type(arg))) {
      Node* is_null = gvn.transform(new BoolNode(gvn.transform(new CmpPNode(arg, kit->null())),
                                                 BoolTest::eq));
      IfNode* iff = kit->create_and_map_if(kit->control(), is_null, PROB_UNLIKELY_MAG(3),
                                           COUNT_UNKNOWN);
      null_ctl = gvn.transform(new IfTrueNode(iff));
      kit->set_control(gvn.transform(new IfFalseNode(iff)));
      obj = new CastPPNode(arg, gvn.type(arg)->join_speculative(TypePtr::NOTNULL));
      obj->init_req(0, kit->control());
      obj = gvn.transform(obj);
    }
    Node* mark = kit->make_load(kit->control(),
                                kit->basic_plus_adr(obj, oopDesc::mark_offset_in_bytes()),
                                TypeLong::LONG, T_LONG, MemNode::unordered, LoadNode::Pinned);
    Node* shared = gvn.transform(new BoolNode(gvn.transform(new CmpLNode(mark, kit->longcon(0))),
                                              BoolTest::lt));
    IfNode* iff = kit->create_and_map_if(kit->control(), shared, PROB_UNLIKELY_MAG(5),
                                         COUNT_UNKNOWN);
    java_code->add_req(gvn.transform(new IfTrueNode(iff)));
    Node* local_ctl = gvn.transform(new IfFalseNode(iff));
    if (null_ctl != NULL) {
      RegionNode* either = new RegionNode(3);
      either->init_req(1, null_ctl);
      either->init_req(2, local_ctl);
      local_ctl = gvn.transform(either);
    }
    kit->set_control(local_ctl);
  }
  if (java_code->req() == 1) {
    return NULL;  // no object argument: the intrinsic always runs
  }
  return gvn.transform(java_code);
}

const TypeFunc* DsoBarrierSetC2::access_Type() {
  const Type** fields = TypeTuple::fields(4);
  fields[TypeFunc::Parms + 0] = TypeInstPtr::NOTNULL;  // the object
  fields[TypeFunc::Parms + 1] = TypeInt::INT;          // the kind
  fields[TypeFunc::Parms + 2] = TypeLong::LONG;        // an element's offset, or -1
  fields[TypeFunc::Parms + 3] = Type::HALF;
  const TypeTuple* domain = TypeTuple::make(TypeFunc::Parms + 4, fields);
  fields = TypeTuple::fields(0);
  const TypeTuple* range = TypeTuple::make(TypeFunc::Parms + 0, fields);
  return TypeFunc::make(domain, range);
}

const TypeFunc* DsoBarrierSetC2::end_write_Type() {
  const Type** fields = TypeTuple::fields(1);
  fields[TypeFunc::Parms + 0] = TypeRawPtr::NOTNULL;   // the JavaThread
  const TypeTuple* domain = TypeTuple::make(TypeFunc::Parms + 1, fields);
  fields = TypeTuple::fields(0);
  const TypeTuple* range = TypeTuple::make(TypeFunc::Parms + 0, fields);
  return TypeFunc::make(domain, range);
}

bool DsoBarrierSetC2::generate_stubs(ciEnv* env) {
  if (!DistributedJava) {
    return true;
  }
  _access_stub = OptoRuntime::generate_stub(env, access_Type,
                                            CAST_FROM_FN_PTR(address, DsoBarrierSetC2::access_C),
                                            "dso_access", 0, false, false);
  return _access_stub != NULL;
}

// Called in Java state, as OptoRuntime::monitor_notify_C is: the cached case
// returns at once; a miss gains the access in the VM (compiled_access makes
// the transition), where the thread may block and GC may run.
JRT_BLOCK_ENTRY(void, DsoBarrierSetC2::access_C(oopDesc* obj, jint kind, jlong offset,
                                                JavaThread* current))
  if ((kind & DsoCompiledAccess::dynamic) != 0) {
    // What the compiler could not tell: a mirror's fields below its statics
    // are java.lang.Class's own, each node's; a read at Thread.threadStatus's
    // offset in a Thread asks the thread's node.
    if (obj->klass() == vmClasses::Class_klass() &&
        offset < *DsoBarrierSet::mirror_statics_offset_addr()) {
      return;
    }
    if ((kind & DsoCompiledAccess::write) == 0 && offset == DsoThreads::thread_status_offset() &&
        obj->klass()->is_subclass_of(vmClasses::Thread_klass())) {
      kind |= DsoCompiledAccess::thread_status;
    }
  }
  if ((kind & DsoCompiledAccess::thread_status) == 0) {
    bool is_write = (kind & DsoCompiledAccess::write) != 0;
    if ((kind & DsoCompiledAccess::indexed) == 0) {
      // (An array in blocks has no word: a dynamic access of one, which
      // may straddle two blocks, goes on to the VM.)
      if (DsoInterpreter::try_access(current, obj, is_write)) {
        return;
      }
    } else {
      jint lh = obj->klass()->layout_helper();
      jint index = (jint)((offset - Klass::layout_helper_header_size(lh)) >>
                          Klass::layout_helper_log2_element_size(lh));
      if (DsoInterpreter::try_access_element(current, (arrayOopDesc*)obj, index, is_write)) {
        return;
      }
    }
  }
  DsoInterpreter::compiled_access(current, obj, kind, offset);
JRT_END

JRT_LEAF(void, DsoBarrierSetC2::end_write_C(JavaThread* current))
  DsoInterpreter::end_write(current);
JRT_END
