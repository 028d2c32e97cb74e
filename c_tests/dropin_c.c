/* An ordinary program on LevelDB's C API with its built-in bloom policy,
   leveldb_filterpolicy_create_bloom(10): nothing in it knows about leveldb-bloom. The
   tests build it stock (-lleveldb), relinked (-lleveldb_bloom -lleveldb) and run it
   with LD_PRELOAD=libleveldb_bloom.so. See dropin_data.h for what it writes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT, in dropin_data.h */
#endif
#include <leveldb/c.h>

#include "dropin_data.h"

struct dropin_db {
  leveldb_t* db;
  leveldb_options_t* options;
  leveldb_filterpolicy_t* policy;
  leveldb_readoptions_t* read_options;
  leveldb_writeoptions_t* write_options;
};

static void check(char* error, const char* what) { dropin_check(what, error); }

static dropin_db* dropin_db_open(const char* dir) {
  dropin_db* db = (dropin_db*)calloc(1, sizeof *db);
  char* error = NULL;
  if (db == NULL) dropin_fail("calloc", "db");
  db->options = leveldb_options_create();
  leveldb_options_set_create_if_missing(db->options, 1);
  if (DROPIN_BITS_PER_KEY > 0) {
    db->policy = leveldb_filterpolicy_create_bloom(DROPIN_BITS_PER_KEY);
    leveldb_options_set_filter_policy(db->options, db->policy);
  }
  leveldb_options_set_write_buffer_size(db->options, DROPIN_WRITE_BUFFER_SIZE);
  leveldb_options_set_max_file_size(db->options, DROPIN_MAX_FILE_SIZE);
  db->read_options = leveldb_readoptions_create();
  db->write_options = leveldb_writeoptions_create();
  db->db = leveldb_open(db->options, dir, &error);
  check(error, "open");
  return db;
}

static void dropin_db_put(dropin_db* db, const char* key, size_t key_length, const char* value,
                          size_t value_length) {
  char* error = NULL;
  leveldb_put(db->db, db->write_options, key, key_length, value, value_length, &error);
  check(error, "put");
}

static void dropin_db_delete(dropin_db* db, const char* key, size_t key_length) {
  char* error = NULL;
  leveldb_delete(db->db, db->write_options, key, key_length, &error);
  check(error, "delete");
}

static int dropin_db_get(dropin_db* db, const char* key, size_t key_length, char* value,
                         size_t* value_length) {
  char* error = NULL;
  char* found = leveldb_get(db->db, db->read_options, key, key_length, value_length, &error);
  check(error, "get");
  if (found == NULL) return 0;
  if (*value_length > DROPIN_VALUE_MAX) dropin_fail("get", "value too long");
  memcpy(value, found, *value_length);
  leveldb_free(found);
  return 1;
}

static void dropin_db_close(dropin_db* db) {
  leveldb_close(db->db);
  leveldb_writeoptions_destroy(db->write_options);
  leveldb_readoptions_destroy(db->read_options);
  leveldb_options_destroy(db->options);
  if (db->policy != NULL) leveldb_filterpolicy_destroy(db->policy); /* after the database is closed */
  free(db);
}

static void dropin_db_compact_and_close(dropin_db* db) {
  leveldb_compact_range(db->db, NULL, 0, NULL, 0);
  dropin_db_close(db);
}

int main(int argc, char** argv) { return dropin_main(argc, argv, "dropin_c"); }
