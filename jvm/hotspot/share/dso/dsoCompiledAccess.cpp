/*
 * djava: what the compilers' shared-object checks have in common (see the
 * header).
 */

#include "precompiled.hpp"
#include "dso/dsoCompiledAccess.hpp"

#if COMPILER1_OR_COMPILER2

#include "ci/ciEnv.hpp"
#include "ci/ciField.hpp"
#include "ci/ciSymbol.hpp"

int DsoCompiledAccess::of_instance_field(ciEnv* env, ciField* field, int kind) {
  if (field->holder() == env->Class_klass()) {
    return no_check;
  }
  if (kind == read && field->holder() == env->Thread_klass() &&
      strcmp(field->name()->as_utf8(), "threadStatus") == 0) {
    return thread_status;
  }
  return kind;
}

#endif // COMPILER1_OR_COMPILER2
