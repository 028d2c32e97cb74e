/* Compiled as C99 and as C++11 with -Wall -Wextra -Werror -pedantic: the generated
   header alone, beside LevelDB's <leveldb/c.h> in either order, and where
   <leveldb/c.h> provides nothing (EXPECT_FALLBACK_TYPEDEF). Reports and exits as
   check.h says. */
#if defined(LEVELDB_FIRST)
#include <leveldb/c.h>
#include <leveldb_bloom.h>
#elif defined(OURS_FIRST)
#include <leveldb_bloom.h>
#include <leveldb/c.h>
#else
#include <leveldb_bloom.h>
#endif

/* With an empty <leveldb/c.h> first on the include path, LevelDB's header guard is
   never defined, so the type must come from leveldb_bloom.h's own typedef. */
#if defined(EXPECT_FALLBACK_TYPEDEF) && defined(STORAGE_LEVELDB_INCLUDE_C_H_)
#error "the real <leveldb/c.h> was included; the fallback typedef is untested"
#endif

#include <stdlib.h>

#include "check.h"

int main(void) {
  leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(10);
  size_t length = 0;
  char* filter = leveldb_filterpolicy_create_filter(policy, NULL, NULL, 0, &length);
  CHECK(filter != NULL && length == 9);
  CHECK(filter != NULL && leveldb_filterpolicy_key_may_match(policy, "k", 1, filter, length) == 0);
  free(filter);
  leveldb_bloom_policy_destroy(policy);
  return check_report("header_check");
}
