/* A test-only LD_PRELOAD shim that counts how often LevelDB consults the filter
   policies made with its C API's leveldb_filterpolicy_create, which is how
   libleveldb_bloom makes the policies it swaps in. It stands in front of LevelDB's
   leveldb_filterpolicy_create, wraps the callbacks it is given with counting ones, and
   at exit prints to stderr:

     filter calls: policies=P create_filter=C key_may_match=M said_no=N callbacks_in=PATH

   PATH is the object defining the first policy's callbacks (libleveldb_bloom when
   the swap works). Stock LevelDB's built-in bloom policy never goes through
   leveldb_filterpolicy_create, so a stock run shows policies=0. The library is not
   changed at all: the counting costs only the test.

   Linked to -lleveldb: libleveldb_bloom looks up LevelDB's leveldb_filterpolicy_destroy
   in the object defining leveldb_filterpolicy_create (this shim) and its
   dependencies, where it finds LevelDB's. */
#include <leveldb/c.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef char* (*create_filter_fn)(void*, const char* const*, const size_t*, int, size_t*);
typedef unsigned char (*key_may_match_fn)(void*, const char*, size_t, const char*, size_t);
typedef const char* (*name_fn)(void*);
typedef void (*destructor_fn)(void*);
typedef leveldb_filterpolicy_t* (*create_fn)(void*, destructor_fn, create_filter_fn,
                                             key_may_match_fn, name_fn);

struct counted {
  void* state;
  destructor_fn destructor;
  create_filter_fn create_filter;
  key_may_match_fn key_may_match;
  name_fn name;
};

static unsigned long policies, create_filter_calls, key_may_match_calls, said_no;
static char callbacks_in[4096] = "none";

static void count(unsigned long* counter) { __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); }

static void counted_destructor(void* state) {
  struct counted* counted = (struct counted*)state;
  counted->destructor(counted->state);
  free(counted);
}

static char* counted_create_filter(void* state, const char* const* keys, const size_t* lengths,
                                   int num_keys, size_t* filter_length) {
  struct counted* counted = (struct counted*)state;
  count(&create_filter_calls);
  return counted->create_filter(counted->state, keys, lengths, num_keys, filter_length);
}

static unsigned char counted_key_may_match(void* state, const char* key, size_t length,
                                           const char* filter, size_t filter_length) {
  struct counted* counted = (struct counted*)state;
  unsigned char answer = counted->key_may_match(counted->state, key, length, filter, filter_length);
  count(&key_may_match_calls);
  if (!answer) count(&said_no);
  return answer;
}

static const char* counted_name(void* state) {
  struct counted* counted = (struct counted*)state;
  return counted->name(counted->state);
}

static void* address_of(key_may_match_fn function) {
  void* address;
  memcpy(&address, &function, sizeof address);
  return address;
}

leveldb_filterpolicy_t* leveldb_filterpolicy_create(void* state, destructor_fn destructor,
                                                    create_filter_fn create_filter,
                                                    key_may_match_fn key_may_match,
                                                    name_fn name) {
  void* next = dlsym(RTLD_NEXT, "leveldb_filterpolicy_create");
  create_fn real;
  struct counted* counted = (struct counted*)malloc(sizeof *counted);
  leveldb_filterpolicy_t* policy;
  Dl_info info;
  if (next == NULL || counted == NULL) abort();
  memcpy(&real, &next, sizeof real);
  counted->state = state;
  counted->destructor = destructor;
  counted->create_filter = create_filter;
  counted->key_may_match = key_may_match;
  counted->name = name;
  if (__atomic_fetch_add(&policies, 1, __ATOMIC_RELAXED) == 0 &&
      dladdr(address_of(key_may_match), &info) != 0 && info.dli_fname != NULL)
    snprintf(callbacks_in, sizeof callbacks_in, "%s", info.dli_fname);
  policy = real(counted, counted_destructor, counted_create_filter, counted_key_may_match,
                counted_name);
  if (policy == NULL) free(counted);
  return policy;
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr,
          "filter calls: policies=%lu create_filter=%lu key_may_match=%lu said_no=%lu "
          "callbacks_in=%s\n",
          policies, create_filter_calls, key_may_match_calls, said_no, callbacks_in);
}
