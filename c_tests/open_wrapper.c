/* A program's own wrapper of LevelDB's leveldb_open, preloaded, that forwards with
   dlsym(RTLD_NEXT), as tracing and sandboxing shims do: with the default-bits object
   and renamed copies of it loaded too, every call must end in LevelDB's own
   definition, never loop (tests/suite/default_bits_object.rs). */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

typedef void* (*open_function)(const void*, const char*, char**);

void* leveldb_open(const void* options, const char* name, char** errptr) {
  void* next = dlsym(RTLD_NEXT, "leveldb_open");
  open_function open;
  if (next == NULL) return NULL;
  memcpy(&open, &next, sizeof open);
  return open(options, name, errptr);
}
