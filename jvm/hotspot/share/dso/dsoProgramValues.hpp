/*
 * djava: the JDK's process-wide values that are a program's, on a thread
 * server.
 *
 * A thread server's JDK, statics included, is shared by every program it
 * runs, so some of its process-wide values belong to no program: the
 * ForkJoin common pool (a program's is its launcher's, sized by the
 * cluster, its workers on the thread servers), CompletableFuture's delay
 * scheduler (a server's own would start its thread for the first program
 * that used it, and lose it when that program ended) and the default
 * locales and
 * time zone (a program's are what its launcher has, or what any of its
 * threads set). java.base asks here for the calling thread's program's
 * (java.util.concurrent.ProgramCommonPool, java.util.ProgramDefaults; the
 * hooks that ask are patches/0027 and 0030): the first of a program's
 * threads here to ask fetches the value from the launcher, as a shared
 * object (djava.runtime.ThreadServer), and it is kept here until the
 * program ends. A thread of no program gets NULL, the server's own value;
 * so does a thread asking while it fetches (the fetch may format a number,
 * and so ask for the default locale).
 */

#ifndef SHARE_DSO_DSOPROGRAMVALUES_HPP
#define SHARE_DSO_DSOPROGRAMVALUES_HPP

#include "memory/allStatic.hpp"
#include "utilities/globalDefinitions.hpp"

class DsoProgramValues : AllStatic {
 public:
  // The program is registered here: its values may be kept from now on.
  static void begin(uint64_t program);
  // The program ended here: its values go, and a fetch still running for
  // it keeps nothing.
  static void forget(uint64_t program);
};

#endif // SHARE_DSO_DSOPROGRAMVALUES_HPP
