/*
 * djava: what the compilers' shared-object checks have in common (see the
 * header).
 */

#include "precompiled.hpp"
#include "dso/dsoCompiledAccess.hpp"

#if COMPILER1_OR_COMPILER2

#include "ci/ciEnv.hpp"
#include "ci/ciField.hpp"
#include "ci/ciInstanceKlass.hpp"
#include "ci/ciMethod.hpp"
#include "ci/ciSymbol.hpp"
#include "dso/dsoInterpreter.hpp"
#include "runtime/mutex.hpp"
#include "runtime/mutexLocker.hpp"
#include "utilities/resourceHash.hpp"

int DsoCompiledAccess::of_instance_field(ciEnv* env, ciField* field, int kind) {
  if (field->holder() == env->Class_klass()) {
    return no_check;
  }
  if (kind == read && field->holder() == env->Thread_klass() &&
      strcmp(field->name()->as_utf8(), "threadStatus") == 0) {
    return thread_status;
  }
  if (kind == read && field->is_final() && !field->is_static() &&
      DsoInterpreter::keeps_finals_of(field->holder()->name()->as_utf8())) {
    return read | kept_final;
  }
  return kind;
}

namespace {

struct Site {
  const Method* method;
  int bci;
};

unsigned site_hash(const Site& s) {
  return (unsigned)((uintptr_t)s.method >> 3) * 31u + (unsigned)s.bci;
}

bool site_equals(const Site& a, const Site& b) {
  return a.method == b.method && a.bci == b.bci;
}

// The nodes of a C-heap table never move, so a value's address lasts as
// long as the table: compiled code stores to it.
typedef ResourceHashtable<Site, jbyte, site_hash, site_equals, 4099,
                          ResourceObj::C_HEAP, mtCompiler> SiteTable;

SiteTable* sites = NULL;

Mutex* sites_lock() {
  static Mutex* lock = new Mutex(Mutex::leaf, "DsoAccessSites_lock", true,
                                 Mutex::_safepoint_check_never);
  return lock;
}

}  // namespace

volatile jbyte* DsoCompiledAccess::shared_seen(ciMethod* method, int bci, bool create) {
  Site site = { method->get_Method(), bci };
  MutexLocker ml(sites_lock(), Mutex::_no_safepoint_check_flag);
  if (sites == NULL) {
    if (!create) {
      return NULL;
    }
    sites = new (ResourceObj::C_HEAP, mtCompiler) SiteTable();
  }
  if (!create) {
    return sites->get(site);
  }
  bool created;
  return sites->put_if_absent(site, (jbyte)0, &created);
}

#endif // COMPILER1_OR_COMPILER2
