/*
 * djava: entry points of the distributed heap called from HotSpot's start-up.
 */

#include "precompiled.hpp"
#include "oops/oop.inline.hpp"
#include "dso/dso.hpp"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoSelfTest.hpp"
#include "runtime/arguments.hpp"
#include "runtime/os.hpp"

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

void Dso::vm_initialized(JavaThread* current) {
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
