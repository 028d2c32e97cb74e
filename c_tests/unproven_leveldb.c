/* A plugin that defines LevelDB's C API entry `leveldb_open` (as a shim, or a
   LevelDB with libstdc++ linked in statically, would) and shows no std::string ABI,
   making two policies with leveldb_filterpolicy_create_bloom: no LevelDB definition
   binds that name for it, so they are this library's own, for its C functions
   (tests/suite/decided_once.rs). Run by c_tests/main_host.c. */
#include <stddef.h>
#include <stdio.h>

void* leveldb_filterpolicy_create_bloom(int bits_per_key);
void leveldb_filterpolicy_destroy(void* policy);

void leveldb_open(void) {}

int plugin_main(int argc, char** argv) {
  void* first = leveldb_filterpolicy_create_bloom(10);
  void* second = leveldb_filterpolicy_create_bloom(10);
  (void)argc, (void)argv;
  printf("policies: %s, %s\n", first != NULL ? "made" : "NULL", second != NULL ? "made" : "NULL");
  leveldb_filterpolicy_destroy(first);
  leveldb_filterpolicy_destroy(second);
  return 0;
}
