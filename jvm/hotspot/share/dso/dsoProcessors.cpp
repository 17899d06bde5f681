/*
 * djava: what Runtime.availableProcessors() answers in a program
 * (dsoProcessors.hpp).
 */

#include "precompiled.hpp"
#include "dso/dsoNode.hpp"
#include "dso/dsoProcessors.hpp"
#include "dso/dsoThreads.hpp"
#include "runtime/os.inline.hpp"
#include "runtime/thread.hpp"
#include "utilities/growableArray.hpp"

namespace {

struct ProgramProcessors {
  uint64_t program;
  int processors;
};

// A node runs few programs at once; a linear scan under a plain mutex,
// taken only when a program asks (pool construction, not per task).
os::PlatformMutex* lock() {
  static os::PlatformMutex* mutex = new os::PlatformMutex();
  return mutex;
}

GrowableArrayCHeap<ProgramProcessors, mtInternal>* table() {
  static GrowableArrayCHeap<ProgramProcessors, mtInternal>* entries =
      new GrowableArrayCHeap<ProgramProcessors, mtInternal>(4);
  return entries;
}

int find_locked(uint64_t program) {
  for (int i = 0; i < table()->length(); i++) {
    if (table()->at(i).program == program) return i;
  }
  return -1;
}

}  // namespace

void DsoProcessors::set(uint64_t program, int processors) {
  if (program == 0 || processors <= 0) return;
  lock()->lock();
  if (find_locked(program) < 0) {
    ProgramProcessors entry = { program, processors };
    table()->append(entry);
  }
  lock()->unlock();
}

int DsoProcessors::of(uint64_t program) {
  lock()->lock();
  int i = find_locked(program);
  int processors = i >= 0 ? table()->at(i).processors : 0;
  lock()->unlock();
  return processors;
}

void DsoProcessors::forget(uint64_t program) {
  lock()->lock();
  int i = find_locked(program);
  if (i >= 0) table()->delete_at(i);
  lock()->unlock();
}

int DsoProcessors::for_thread(JavaThread* current) {
  if (!DsoNode::is_member()) return 0;
  return of(DsoThreads::current_program(current));
}
