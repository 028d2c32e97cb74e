/* A program built against an installed libleveldb_bloom with nothing but
 *
 *   cc installed.c $(pkg-config --cflags --libs leveldb_bloom)
 *
 * Usage: installed BITS_PER_KEY KEY...
 * Prints the policy's name and the filter for the keys in hex, one per line, and
 * exits 0 when every key matches its filter (a bloom filter never forgets a key). */
#include <leveldb_bloom.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  const size_t num_keys = argc > 2 ? (size_t)(argc - 2) : 0;
  const char** keys = (const char**)(argv + 2);
  size_t* lengths;
  size_t filter_length = 0, i;
  int all_match = 1;
  leveldb_filterpolicy_t* policy;
  char* filter;

  if (argc < 3) {
    fprintf(stderr, "usage: %s BITS_PER_KEY KEY...\n", argv[0]);
    return 2;
  }
  lengths = malloc(num_keys * sizeof *lengths);
  policy = leveldb_bloom_policy_create(atoi(argv[1]));
  if (lengths == NULL || policy == NULL) return 1;
  for (i = 0; i < num_keys; i++) lengths[i] = strlen(keys[i]);

  filter = leveldb_filterpolicy_create_filter(policy, keys, lengths, num_keys, &filter_length);
  if (filter == NULL) return 1;
  printf("%s\n", leveldb_filterpolicy_name(policy));
  for (i = 0; i < filter_length; i++) printf("%02x", (unsigned char)filter[i]);
  printf("\n");
  for (i = 0; i < num_keys; i++) {
    all_match &= leveldb_filterpolicy_key_may_match(policy, keys[i], lengths[i], filter,
                                                    filter_length) == 1;
  }

  free(filter);
  free(lengths);
  leveldb_bloom_policy_destroy(policy);
  return all_match ? 0 : 1;
}
