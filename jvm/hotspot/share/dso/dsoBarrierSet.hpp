/*
 * djava: the shared heap as a GC barrier set.
 *
 * HotSpot routes every heap access of its engines through the barrier set
 * of the running collector: the template interpreter's field, static and
 * array bytecodes call BarrierSetAssembler::load_at/store_at for every
 * type, C1 and C2 emit theirs through BarrierSetC1/BarrierSetC2, and the
 * runtime's C++ accesses go through the Access API. A cluster node
 * (-XX:+DistributedJava) runs serial GC with this barrier set: the card
 * table's, which it extends, plus djava's check on each access of an
 * object whose header carries the shared tag (dsoMark.hpp).
 *
 * What each part adds:
 *  - cpu/x86/dso/dsoBarrierSetAssembler_x86: the template interpreter's
 *    bytecodes test the object's mark (one compare of memory with zero for
 *    a local object); a replica's cached case is inline, its slow path
 *    calls DsoInterpreter (dsoInterpreter.hpp) like Zero's hooks. Only the
 *    accesses of bytecode templates carry the check (BytecodeScope): they
 *    run in an interpreter frame whose oop map describes the operand stack,
 *    so the slow path may block and GC may run. The interpreter's other
 *    code (method entries) and the stubs touch no shared object; a node
 *    runs Reference.get as bytecode, not through its special entry (a
 *    shared reference's referent is a coherent field, dsoReferences.hpp).
 *  - dso/c1/dsoBarrierSetC1: C1's code tests the mark the same way and
 *    calls the same slow path out of line (see there).
 *  - C2 and the runtime's Access API: the card table's, unchanged. Until
 *    C2 carries the check, a node on the server VM compiles with C1 alone
 *    (Dso::adjust_vm_flags), and the runtime paths keep their own hooks.
 *  - Zero: its interpreter keeps its hooks (bytecodeInterpreter.cpp,
 *    patches/0004); it has no BarrierSetAssembler.
 */

#ifndef SHARE_DSO_DSOBARRIERSET_HPP
#define SHARE_DSO_DSOBARRIERSET_HPP

#include "gc/shared/cardTableBarrierSet.hpp"
#include "memory/allocation.hpp"

class DsoBarrierSet: public CardTableBarrierSet {
 public:
  DsoBarrierSet(CardTable* card_table);

  // Before the interpreter is generated: its inline writes depend on how
  // writers make themselves known (DsoInterpreter::initialize).
  virtual void initialize();
  virtual void print_on(outputStream* st) const;

  // While a bytecode template of the template interpreter is generated
  // (Template::generate): its heap accesses get the shared-object check.
  class BytecodeScope : public StackObj {
   public:
    BytecodeScope()  { _in_bytecode = true; }
    ~BytecodeScope() { _in_bytecode = false; }
  };
  static bool in_bytecode() { return _in_bytecode; }

  // Where java.lang.Class's instance fields end and a mirror's statics
  // begin: a replica of a mirror carries its class's statics, coherent;
  // java.lang.Class's own fields are each node's (dsoStatics.hpp).
  static int* mirror_statics_offset_addr() { return &_mirror_statics_offset; }
  static void set_mirror_statics_offset(int offset) { _mirror_statics_offset = offset; }

  template <DecoratorSet decorators, typename BarrierSetT = DsoBarrierSet>
  class AccessBarrier: public CardTableBarrierSet::AccessBarrier<decorators, BarrierSetT> {};

 private:
  static bool _in_bytecode;
  static int _mirror_statics_offset;
};

template<>
struct BarrierSet::GetName<DsoBarrierSet> {
  static const BarrierSet::Name value = BarrierSet::DsoBarrierSet;
};

template<>
struct BarrierSet::GetType<BarrierSet::DsoBarrierSet> {
  typedef ::DsoBarrierSet type;
};

#endif // SHARE_DSO_DSOBARRIERSET_HPP
