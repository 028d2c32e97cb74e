/* Builds a bloom filter with libleveldb_bloom and queries it. */
#include <leveldb_bloom.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  const char* keys[] = {"hello", "world"};
  size_t lengths[] = {5, 5};
  size_t filter_length = 0;
  size_t i;
  leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create_bloom(10);
  char* filter;
  if (policy == NULL) return 1;
  filter = leveldb_filterpolicy_create_filter(policy, keys, lengths, 2, &filter_length);
  if (filter == NULL) return 1;
  printf("policy %s, filter of %zu bytes:", leveldb_filterpolicy_name(policy), filter_length);
  for (i = 0; i < filter_length; i++) printf(" %02x", (unsigned char)filter[i]);
  printf("\n");
  printf("hello may match: %d\n", leveldb_filterpolicy_key_may_match(policy, "hello", 5, filter, filter_length));
  printf("absent may match: %d\n", leveldb_filterpolicy_key_may_match(policy, "absent", 6, filter, filter_length));
  free(filter);
  leveldb_filterpolicy_destroy(policy);
  return 0;
}
