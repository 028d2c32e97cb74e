/* A plugin host that never links LevelDB: it opens c_tests/plugin.c's shared object
   with dlopen's default (RTLD_LOCAL) flags and runs it.

     plugin_host PLUGIN DIR KEYS POLICIES

   Prints the plugin's report (its lines, and its checks' "plugin: N checks, F
   failed"), then "swap status: S" (leveldb_bloom_swap_status() as found in the global
   scope, "absent" without libleveldb_bloom); exits with the plugin's status. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*plugin_run_fn)(const char*, unsigned, unsigned);
typedef int (*status_fn)(void);

int main(int argc, char** argv) {
  void* plugin;
  void* symbol;
  plugin_run_fn run;
  status_fn status;
  int status_code;
  if (argc != 5) {
    fprintf(stderr, "usage: plugin_host PLUGIN DIR KEYS POLICIES\n");
    return 2;
  }
  plugin = dlopen(argv[1], RTLD_NOW);
  if (plugin == NULL || (symbol = dlsym(plugin, "plugin_run")) == NULL) {
    fprintf(stderr, "plugin_host: %s\n", dlerror());
    return 1;
  }
  memcpy(&run, &symbol, sizeof run);
  status_code = run(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
  symbol = dlsym(RTLD_DEFAULT, "leveldb_bloom_swap_status");
  if (symbol != NULL) {
    memcpy(&status, &symbol, sizeof status);
    printf("swap status: %d\n", status());
  } else {
    printf("swap status: absent\n");
  }
  dlclose(plugin);
  return status_code;
}
