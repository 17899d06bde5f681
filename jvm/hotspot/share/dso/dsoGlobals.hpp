/*
 * djava: VM flags of the distributed heap. Declared like HotSpot's own flag
 * groups and joined into ALL_FLAGS by patches/0002.
 */

#ifndef SHARE_DSO_DSOGLOBALS_HPP
#define SHARE_DSO_DSOGLOBALS_HPP

#include "runtime/globals_shared.hpp"

#define DSO_FLAGS(develop,                                                    \
                  develop_pd,                                                 \
                  product,                                                    \
                  product_pd,                                                 \
                  notproduct,                                                 \
                  range,                                                      \
                  constraint)                                                 \
                                                                              \
  product(bool, DjavaSelfTest, false, DIAGNOSTIC,                             \
          "Run the distributed heap's self-test when the VM has started: "    \
          "shared-object tags and the replica table through young and full "  \
          "GCs, identity hashing and monitor inflation. A failure ends the "  \
          "VM with an error")                                                 \
                                                                              \
  product(uint, DjavaSelfTestObjects, 2000, DIAGNOSTIC,                       \
          "Number of objects the distributed heap's self-test shares")        \
          range(16, 1000000)                                                  \

DECLARE_FLAGS(DSO_FLAGS)

#endif // SHARE_DSO_DSOGLOBALS_HPP
