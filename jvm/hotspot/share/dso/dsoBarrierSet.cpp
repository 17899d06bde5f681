/*
 * djava: the shared heap as a GC barrier set (see the header).
 */

#include "precompiled.hpp"
#include "dso/dsoBarrierSet.hpp"
#include "dso/dsoInterpreter.hpp"
#include "gc/shared/cardTable.hpp"
#include "utilities/macros.hpp"
#include "utilities/ostream.hpp"
#ifdef ZERO
#include "gc/shared/cardTableBarrierSetAssembler.hpp"
#else
#include CPU_HEADER(dso/dsoBarrierSetAssembler)
#endif
#ifdef COMPILER1
#include "dso/c1/dsoBarrierSetC1.hpp"
#endif
#ifdef COMPILER2
#include "dso/c2/dsoBarrierSetC2.hpp"
#endif

class DsoBarrierSetC1;
class DsoBarrierSetC2;

#ifdef ZERO
// Zero generates no code: its interpreter has its own hooks.
typedef CardTableBarrierSetAssembler DsoBarrierSetAssembler;
#endif

bool DsoBarrierSet::_in_bytecode = false;
int DsoBarrierSet::_mirror_statics_offset = 0;

DsoBarrierSet::DsoBarrierSet(CardTable* card_table) :
  CardTableBarrierSet(make_barrier_set_assembler<DsoBarrierSetAssembler>(),
                      make_barrier_set_c1<DsoBarrierSetC1>(),
                      make_barrier_set_c2<DsoBarrierSetC2>(),
                      card_table,
                      BarrierSet::FakeRtti(BarrierSet::DsoBarrierSet)) {}

void DsoBarrierSet::initialize() {
  CardTableBarrierSet::initialize();
  DsoInterpreter::initialize();
}

void DsoBarrierSet::print_on(outputStream* st) const {
  st->print_cr("djava shared-heap barrier set over a card table");
  CardTableBarrierSet::print_on(st);
}
