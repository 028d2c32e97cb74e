/* A host that never links LevelDB: it opens a plugin with dlopen's default
   (RTLD_LOCAL) flags and runs the plugin's `plugin_main` with its own arguments.

     main_host PLUGIN ARGS...

   PLUGIN is a path, or /proc/self/fd/N for a plugin in a memfd the host inherited.
   With MAIN_HOST_RESERVE=ADDRESS (hexadecimal), the host first maps 64 MiB there,
   inaccessible, so that a plugin linked at that address loads elsewhere. With
   MAIN_HOST_RESERVE_ABOVE=ADDRESS, it maps every free range from ADDRESS up to its
   stack's room to grow, so that the loader, whatever the address space's random
   layout, maps the plugin below ADDRESS.
   The plugins are programs (c_tests/dropin_c.c built with -Dmain=plugin_main, and the
   string-ABI cases of tests/suite/string_abi.rs); exits with plugin_main's status. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE */
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

typedef int (*plugin_main_fn)(int, char**);

/* Maps [from, to) inaccessible; 0 when done or empty. */
static int reserve_range(size_t from, size_t to) {
  if (from >= to) return 0;
  return mmap((void*)from, to - from, PROT_NONE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1,
              0) == (void*)from
             ? 0
             : -1;
}

/* Occupies every free page from `from` up to where the stack may grow: the free
   ranges are read from /proc/self/maps, whole, into a static buffer before any is
   mapped, so that reading them maps nothing in between. */
static int reserve_above(size_t from) {
  static char maps[1 << 16];
  size_t length = 0, stack, cursor = from, start, end, room = 1u << 30;
  ssize_t got;
  const char* line;
  struct rlimit limit;
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  while (length < sizeof maps - 1 &&
         (got = read(fd, maps + length, sizeof maps - 1 - length)) > 0)
    length += (size_t)got;
  close(fd);
  if (length == sizeof maps - 1) return -1;
  maps[length] = 0;
  if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    room = (size_t)limit.rlim_cur;
  line = strstr(maps, "[stack]");
  if (line == NULL) return -1;
  while (line > maps && line[-1] != '\n') line--;
  stack = strtoull(line, NULL, 16) - room - (64u << 20);
  for (line = maps; *line; line = strchr(line, '\n') + 1) {
    char* rest;
    start = strtoull(line, &rest, 16);
    end = strtoull(rest + 1, NULL, 16);
    if (start >= stack) break;
    if (end > cursor) {
      if (reserve_range(cursor, start) != 0) return -1;
      cursor = end;
    }
  }
  return reserve_range(cursor, stack);
}

int main(int argc, char** argv) {
  void* plugin;
  void* symbol;
  plugin_main_fn plugin_main;
  const char* reserve = getenv("MAIN_HOST_RESERVE");
  const char* reserve_above_address = getenv("MAIN_HOST_RESERVE_ABOVE");
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
  if (reserve_above_address != NULL &&
      reserve_above((size_t)strtoull(reserve_above_address, NULL, 16)) != 0) {
    perror("main_host: cannot reserve MAIN_HOST_RESERVE_ABOVE");
    return 1;
  }
  plugin = dlopen(argv[1], RTLD_NOW);
  if (plugin == NULL || (symbol = dlsym(plugin, "plugin_main")) == NULL) {
    fprintf(stderr, "main_host: %s\n", dlerror());
    return 1;
  }
  memcpy(&plugin_main, &symbol, sizeof plugin_main);
  return plugin_main(argc - 1, argv + 1);
}
