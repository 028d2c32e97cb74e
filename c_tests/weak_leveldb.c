/* A program that detects LevelDB as optional-dependency code does, with a weak
   reference to leveldb_open: it must find none where only libleveldb_bloom.so is
   loaded, which defines no LevelDB function but the policy's
   (tests/suite/default_bits_object.rs). */
#include <stdio.h>

extern void* leveldb_open(const void* options, const char* name, char** errptr)
    __attribute__((weak));

int main(void) {
  printf("leveldb_open: %s\n", leveldb_open != NULL ? "present" : "absent");
  return 0;
}
