/*
 * djava: the Access API's barriers of DsoBarrierSet (dsoBarrierSet.hpp):
 * the card table's.
 */

#ifndef SHARE_DSO_DSOBARRIERSET_INLINE_HPP
#define SHARE_DSO_DSOBARRIERSET_INLINE_HPP

#include "dso/dsoBarrierSet.hpp"

#include "gc/shared/cardTableBarrierSet.inline.hpp"

#endif // SHARE_DSO_DSOBARRIERSET_INLINE_HPP
