/* A host that never links LevelDB: it opens a plugin with dlopen's default
   (RTLD_LOCAL) flags and runs the plugin's `plugin_main` with its own arguments.

     main_host PLUGIN ARGS...

   PLUGIN is a path, or /proc/self/fd/N for a plugin in a memfd the host inherited.
   With MAIN_HOST_RESERVE=ADDRESS (hexadecimal), the host first maps 64 MiB there,
   inaccessible, so that a plugin linked at that address loads elsewhere.
   The plugins are programs (c_tests/dropin_c.c built with -Dmain=plugin_main, and the
   string-ABI cases of tests/suite/string_abi.rs); exits with plugin_main's status. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE */
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef int (*plugin_main_fn)(int, char**);

int main(int argc, char** argv) {
  void* plugin;
  void* symbol;
  plugin_main_fn plugin_main;
  const char* reserve = getenv("MAIN_HOST_RESERVE");
  if (argc < 2) {
    fprintf(stderr, "usage: main_host PLUGIN ARGS...\n");
    return 2;
  }
  if (reserve != NULL) {
    void* address = (void*)(size_t)strtoull(reserve, NULL, 16);
    if (mmap(address, 64u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
             -1, 0) != address) {
      perror("main_host: cannot reserve MAIN_HOST_RESERVE");
      return 1;
    }
  }
  plugin = dlopen(argv[1], RTLD_NOW);
  if (plugin == NULL || (symbol = dlsym(plugin, "plugin_main")) == NULL) {
    fprintf(stderr, "main_host: %s\n", dlerror());
    return 1;
  }
  memcpy(&plugin_main, &symbol, sizeof plugin_main);
  return plugin_main(argc - 1, argv + 1);
}
