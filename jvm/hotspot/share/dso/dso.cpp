/*
 * djava: entry points of the distributed heap called from HotSpot's start-up.
 */

#include "precompiled.hpp"
#include "oops/oop.inline.hpp"
#include "dso/dso.hpp"
#include "dso/dsoBarrierSet.hpp"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoSelfTest.hpp"
#include "logging/log.hpp"
#include "oops/instanceMirrorKlass.hpp"
#include "runtime/arguments.hpp"
#include "runtime/globals_extension.hpp"
#include "runtime/os.hpp"
#include "compiler/compilerDefinitions.hpp"
#ifdef COMPILER1
#include "c1/c1_globals.hpp"
#endif

// Called from init_globals() with the JNI handles (patches/0003).
void dso_init() {
  DsoReplicaTable::initialize();
}

void Dso::extend_boot_class_path() {
  if (DistributedJava) {
    char path[JVM_MAXPATHLEN];
    jio_snprintf(path, sizeof(path), "%s%slib%sdjava-runtime.jar", Arguments::get_java_home(),
                 os::file_separator(), os::file_separator());
    Arguments::append_sysclasspath(path);
  }
}

const char* Dso::java_base_patch(bool java_base_patched) {
  if (!DistributedJava) {
    return NULL;
  }
  static char spec[JVM_MAXPATHLEN + 16];
  char path[JVM_MAXPATHLEN];
  jio_snprintf(path, sizeof(path), "%s%slib%sdjava-java.base.jar", Arguments::get_java_home(),
               os::file_separator(), os::file_separator());
  struct stat st;
  if (os::stat(path, &st) != 0) {
    warning("djava: %s is missing: shared synchronizers work by coherence alone", path);
    return NULL;
  }
  if (java_base_patched) {
    warning("djava: --patch-module java.base leaves out %s: shared synchronizers work by "
            "coherence alone", path);
    return NULL;
  }
  jio_snprintf(spec, sizeof(spec), "java.base=%s", path);
  return spec;
}

void Dso::adjust_vm_flags() {
  if (!DistributedJava) {
    return;
  }
  // Code that reads or writes Java arrays and objects behind the barrier
  // set's back: the interpreter's CRC32 and Adler32 entries and the JNI
  // field accessors generated in assembly. A node runs their Java or C++
  // versions, which go through the shared-object checks.
  FLAG_SET_ERGO(UseCRC32Intrinsics, false);
  FLAG_SET_ERGO(UseCRC32CIntrinsics, false);
  FLAG_SET_ERGO(UseAdler32Intrinsics, false);
  FLAG_SET_ERGO(UseFastJNIAccessors, false);
  // A biased lock would displace a replica's mark, where the shared tag is.
  FLAG_SET_ERGO(UseBiasedLocking, false);
  // Reference.get's intrinsic reads the referent unchecked, and a shared
  // reference's referent is a coherent field (dsoReferences.hpp): compiled
  // code runs its bytecode, as the interpreters do (patches/0025).
  const char* disabled = DisableIntrinsic != NULL ? DisableIntrinsic : "";
  if (strstr(disabled, "_Reference_get") == NULL) {
    size_t size = strlen(disabled) + sizeof(",_Reference_get");
    char* list = NEW_C_HEAP_ARRAY(char, size, mtArguments);
    jio_snprintf(list, size, "%s%s_Reference_get", disabled, disabled[0] != '\0' ? "," : "");
    FLAG_SET_ERGO(DisableIntrinsic, list);  // copies it
    FREE_C_HEAP_ARRAY(char, list);
  }
#ifndef ZERO
  // C1's code carries the shared-object checks (dso/c1), and so does C2's
  // (dso/c2), which is not yet the default: without DjavaCompileWithC2 a
  // node compiles with C1 alone (tiered, stopping at level 1).
  if (!DjavaCompileWithC2) {
    FLAG_SET_ERGO(TieredCompilation, true);
    if (TieredStopAtLevel > CompLevel_simple) {
      FLAG_SET_ERGO(TieredStopAtLevel, CompLevel_simple);
    }
  } else {
#ifdef COMPILER2
    // A counted loop polls too (strip mined, as G1 does): a publication
    // fence is a handshake with every thread, and must not wait for a long
    // loop over a local array to end.
    FLAG_SET_ERGO(UseCountedLoopSafepoints, true);
    if (FLAG_IS_DEFAULT(LoopStripMiningIter)) {
      FLAG_SET_ERGO(LoopStripMiningIter, 1000);
    }
    // A loop of stores turned into a fill stub, and the preallocated
    // exceptions' stack-trace store, would write arrays and objects
    // unchecked (dso/c2 compiles a store only when it can check it).
    FLAG_SET_ERGO(OptimizeFill, false);
    FLAG_SET_ERGO(OmitStackTraceInFastThrow, false);
#if INCLUDE_RTM_OPT
    // A transaction would lock a replica without its cluster monitor.
    FLAG_SET_ERGO(UseRTMLocking, false);
#endif
#endif // COMPILER2
  }
  // Intrinsics that read or write Java objects behind the barrier set's
  // back: the mismatch stub and Buffer.checkIndex's read of Buffer.limit.
  // A node calls their Java or native versions, which are checked.
  // (Unsafe's accesses and atomics are C1 accesses: checked. The array
  // copies stay on: C1 calls System.arraycopy's checked native on a node,
  // and C2 copies inline only arrays it tested local: patches/0033.)
  FLAG_SET_ERGO(UseVectorizedMismatchIntrinsic, false);
  FLAG_SET_ERGO(InlineNIOCheckIndex, false);
#endif
}

void Dso::vm_initialized(JavaThread* current) {
  // java.lang.Class's layout is known now, and no object is shared yet.
  DsoBarrierSet::set_mirror_statics_offset(InstanceMirrorKlass::offset_of_static_fields());
  if (DjavaSelfTest) {
    DsoSelfTest::run(current);
  }
  if (DistributedJava) {
    DsoNode::join(current);
  }
}

void Dso::before_exit(JavaThread* current) {
  DsoNode::leave(current);
}
