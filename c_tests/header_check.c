/* Compiled as C99 and as C++11 with -Wall -Wextra -Werror -pedantic: the generated
   header alone, and beside LevelDB's <leveldb/c.h> in either order. */
#if defined(LEVELDB_FIRST)
#include <leveldb/c.h>
#include <leveldb_bloom.h>
#elif defined(OURS_FIRST)
#include <leveldb_bloom.h>
#include <leveldb/c.h>
#else
#include <leveldb_bloom.h>
#endif

#include <stdlib.h>

int main(void) {
  leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(10);
  size_t length = 0;
  char* filter = leveldb_filterpolicy_create_filter(policy, NULL, NULL, 0, &length);
  int ok = filter != NULL && length == 9 &&
           leveldb_filterpolicy_key_may_match(policy, "k", 1, filter, length) == 0;
  free(filter);
  leveldb_bloom_policy_destroy(policy);
  return ok ? 0 : 1;
}
