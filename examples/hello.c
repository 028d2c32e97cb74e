#include <leveldb_bloom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Builds the filter of two keys, prints it, and asks it about a present and an
   absent key. Needs C99 (the header uses // comments and stdint.h). */
int main(void) {
  const char* keys[] = {"hello", "world"};
  size_t lengths[] = {5, 5};
  size_t filter_length, i;
  leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(10);
  char* filter = leveldb_bloom_create_filter(policy, keys, lengths, 2, &filter_length);
  if (strcmp(leveldb_bloom_version(), LEVELDB_BLOOM_VERSION) != 0) return 1;
  printf("leveldb-bloom %s, filter:", leveldb_bloom_version());
  for (i = 0; i < filter_length; i++) printf(" %02x", (unsigned char)filter[i]);
  printf("\nhello may be present: %d\n",
         leveldb_bloom_key_may_match(policy, "hello", 5, filter, filter_length));
  free(filter); /* filters are the caller's, from malloc */
  leveldb_bloom_policy_destroy(policy);
  return 0;
}
