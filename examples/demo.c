/* leveldb-bloom demo: a real LevelDB database with the bloom filter policy swapped in.

   Linked -lleveldb_bloom -lleveldb, so the program's leveldb_filterpolicy_create_bloom
   (and LevelDB's leveldb::NewBloomFilterPolicy) are this library's. It writes
   DEMO_KEYS records into the database directory given as argument, reads them back,
   and measures the false-positive rate of the filters LevelDB stored, on keys that were
   never written. demo_stock_reader then reads the same database with stock LevelDB. */
#include <leveldb/c.h>
#include <leveldb_bloom.h>

#include <math.h>

#include "demo_keys.h"

static leveldb_t* open_db(const char* dir, leveldb_filterpolicy_t* policy, int create) {
  leveldb_options_t* options = leveldb_options_create();
  char* error = NULL;
  leveldb_t* db;
  leveldb_options_set_create_if_missing(options, create);
  leveldb_options_set_error_if_exists(options, create);
  leveldb_options_set_filter_policy(options, policy);
  db = leveldb_open(options, dir, &error);
  demo_check(error, "open");
  leveldb_options_destroy(options);
  return db;
}

static void write_keys(leveldb_t* db) {
  char key[DEMO_KEY_MAX], value[DEMO_VALUE_MAX], *error = NULL;
  leveldb_writeoptions_t* options = leveldb_writeoptions_create();
  leveldb_writebatch_t* batch = leveldb_writebatch_create();
  unsigned long i;
  for (i = 0; i < DEMO_KEYS; i++) {
    size_t key_length = demo_key(i, 0, key);
    leveldb_writebatch_put(batch, key, key_length, value, demo_value(i, value));
    if ((i + 1) % 1000 == 0 || i + 1 == DEMO_KEYS) {
      leveldb_write(db, options, batch, &error);
      demo_check(error, "write");
      leveldb_writebatch_clear(batch);
    }
  }
  leveldb_writebatch_destroy(batch);
  leveldb_writeoptions_destroy(options);
  leveldb_compact_range(db, NULL, 0, NULL, 0); /* everything into tables with filters */
}

static int count_tables(leveldb_t* db) {
  int level, tables = 0;
  for (level = 0; level < 7; level++) {
    char property[40], *value;
    sprintf(property, "leveldb.num-files-at-level%d", level);
    value = leveldb_property_value(db, property);
    if (value != NULL) tables += atoi(value);
    leveldb_free(value);
  }
  return tables;
}

/* A policy that forwards to the swapped one and counts its answers: reopening the
   database with it measures the filters LevelDB stored, as LevelDB consults them. */
struct counter {
  leveldb_filterpolicy_t* policy;
  unsigned long checks, may_match;
};

static void counter_destroy(void* state) { (void)state; }

static char* counter_create_filter(void* state, const char* const* keys, const size_t* lengths,
                                   int num_keys, size_t* filter_length) {
  struct counter* counter = (struct counter*)state;
  return leveldb_bloom_create_filter(counter->policy, keys, lengths, num_keys,
                                            filter_length);
}

static unsigned char counter_key_may_match(void* state, const char* key, size_t length,
                                           const char* filter, size_t filter_length) {
  struct counter* counter = (struct counter*)state;
  unsigned char answer =
      leveldb_bloom_key_may_match(counter->policy, key, length, filter, filter_length);
  counter->checks++; /* lookups run on this thread only */
  counter->may_match += answer;
  return answer;
}

static const char* counter_name(void* state) {
  return leveldb_bloom_policy_name(((struct counter*)state)->policy);
}

static unsigned long count_absent_checks(const char* dir, struct counter* counter) {
  leveldb_filterpolicy_t* counting = leveldb_filterpolicy_create(
      counter, counter_destroy, counter_create_filter, counter_key_may_match, counter_name);
  leveldb_t* db = open_db(dir, counting, 0);
  leveldb_readoptions_t* options = leveldb_readoptions_create();
  char key[DEMO_KEY_MAX], *error = NULL;
  unsigned long i, found = 0;
  for (i = 0; i < DEMO_KEYS; i++) {
    size_t key_length = demo_key(i, 1, key), length;
    char* got = leveldb_get(db, options, key, key_length, &length, &error);
    demo_check(error, "get");
    found += got != NULL;
    leveldb_free(got);
  }
  leveldb_readoptions_destroy(options);
  leveldb_close(db);
  leveldb_filterpolicy_destroy(counting);
  return found;
}

int main(int argc, char** argv) {
  int status = leveldb_bloom_swap_status(), k;
  leveldb_filterpolicy_t* policy;
  struct counter counter = {NULL, 0, 0};
  unsigned long found, absent_found;
  size_t length;
  char* empty_filter;
  leveldb_t* db;
  double measured, theory;
  if (argc != 2) {
    fprintf(stderr, "usage: %s EMPTY_DIRECTORY\n", argv[0]);
    return 2;
  }
  printf("leveldb-bloom demo on LevelDB %d.%d, database in %s\n", leveldb_major_version(),
         leveldb_minor_version(), argv[1]);
  printf("  swap:            %s (leveldb_bloom_swap_status() = %d: C API %s, C++ API %s)\n",
         status != 0 ? "active" : "NOT active", status,
         status & LEVELDB_BLOOM_SWAP_C_API ? "swapped" : "not swapped",
         status & LEVELDB_BLOOM_SWAP_CXX_API ? "swapped" : "not swapped");
  if (status == 0) return 1;

  policy = leveldb_filterpolicy_create_bloom(DEMO_BITS_PER_KEY);
  empty_filter = leveldb_bloom_create_filter(policy, NULL, NULL, 0, &length);
  k = length > 0 ? (unsigned char)empty_filter[length - 1] : 0; /* a filter's last byte */
  free(empty_filter);
  printf("  policy:          %s, %d bits per key, k = %d probes\n",
         leveldb_bloom_policy_name(policy), DEMO_BITS_PER_KEY, k);

  db = open_db(argv[1], policy, 1);
  write_keys(db);
  printf("  wrote:           %d keys, compacted into %d tables\n", DEMO_KEYS, count_tables(db));
  found = demo_read_back(db, &absent_found);
  printf("  read back:       %lu of %d keys with their values; %lu of %d absent keys found\n",
         found, DEMO_KEYS, absent_found, DEMO_KEYS);
  leveldb_close(db);
  leveldb_filterpolicy_destroy(policy); /* after the database is closed */

  counter.policy = leveldb_filterpolicy_create_bloom(DEMO_BITS_PER_KEY);
  absent_found += count_absent_checks(argv[1], &counter);
  leveldb_filterpolicy_destroy(counter.policy);
  measured = counter.checks > 0 ? (double)counter.may_match / (double)counter.checks : 0;
  theory = pow(1 - exp(-(double)k / DEMO_BITS_PER_KEY), k);
  printf("  absent keys:     %d looked up again; LevelDB checked %lu filters, %lu said \"may "
         "match\"\n",
         DEMO_KEYS, counter.checks, counter.may_match);
  printf("  false positives: %.3f%% measured, %.3f%% in theory: (1 - e^(-kn/m))^k, k = %d, "
         "m/n = %d\n",
         100 * measured, 100 * theory, k, DEMO_BITS_PER_KEY);
  return found == DEMO_KEYS && absent_found == 0 && counter.checks > 0 ? 0 : 1;
}
