// A test-only LD_PRELOAD shim that counts how often LevelDB consults the filter
// policies a program gives it, whoever made them, independently of libleveldb_bloom's
// own statistics. It stands in front of the two doors through which a policy reaches
// a database, leveldb::DB::Open (the C++ API; LevelDB's C API's leveldb_open passes
// through it too) and leveldb_options_set_filter_policy (the C API), and points the
// policy object at a counting copy of its C++ vtable: each counting entry counts,
// then calls the object's own function. The object stays where it is, so every
// function that takes the handle still recognises it, and no name that makes a policy
// is interposed (leveldb_bloom_swap_status() still sees the program's bindings). At
// exit it prints to stderr:
//
//   filter calls: policies=P create_filter=C key_may_match=M said_no=N callbacks_in=PATH
//
// P counts the policies whose vtable is not LevelDB's own (so a stock run shows 0),
// PATH is the object holding the first of those vtables (libleveldb_bloom when the
// swap works). The libraries are not changed at all: the counting costs only the test.
// Assumes the Itanium C++ ABI's vtable of leveldb::FilterPolicy: the complete and the
// deleting destructor, Name, CreateFilter, KeyMayMatch.
#include <dlfcn.h>
#include <leveldb/c.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

using Destructor = void (*)(void*);
using NameFunction = const char* (*)(const void*);
using CreateFilterFunction = void (*)(const void*, const leveldb::Slice*, int, std::string*);
using KeyMayMatchFunction = bool (*)(const void*, const leveldb::Slice&, const leveldb::Slice&);

// A vtable as an object points at it; the offset to the top and the type
// information stand before these entries.
struct Vtable {
  Destructor complete_destructor, deleting_destructor;
  NameFunction name;
  CreateFilterFunction create_filter;
  KeyMayMatchFunction key_may_match;
};

// A counting copy of one original vtable (one per kind of policy object seen).
struct Counting {
  const void* head[2];  // offset to top, type information: the original's
  Vtable entries;
  const Vtable* original;
};

constexpr int kKinds = 8;
Counting kinds[kKinds];
std::mutex kinds_lock;
std::atomic<unsigned long> policies{0}, create_filter_calls{0}, key_may_match_calls{0}, said_no{0};
char callbacks_in[4096] = "none";

const Vtable*& vtable_of(const void* object) {
  return *const_cast<const Vtable**>(static_cast<const Vtable* const*>(object));
}

const Counting* counting_of(const void* object) {
  for (const Counting& kind : kinds)
    if (vtable_of(object) == &kind.entries) return &kind;
  return nullptr;
}

const Vtable* original(const void* object) {
  const Counting* kind = counting_of(object);
  if (kind == nullptr) std::abort();
  return kind->original;
}

// Points the object back at its own vtable: its destructors then run as its own.
const Vtable* restore(void* object) { return vtable_of(object) = original(object); }

void counted_complete_destructor(void* object) { restore(object)->complete_destructor(object); }
void counted_deleting_destructor(void* object) { restore(object)->deleting_destructor(object); }
const char* counted_name(const void* object) { return original(object)->name(object); }

void counted_create_filter(const void* object, const leveldb::Slice* keys, int n, std::string* dst) {
  create_filter_calls++;
  original(object)->create_filter(object, keys, n, dst);
}

bool counted_key_may_match(const void* object, const leveldb::Slice& key, const leveldb::Slice& filter) {
  const bool answer = original(object)->key_may_match(object, key, filter);
  key_may_match_calls++;
  if (!answer) said_no++;
  return answer;
}

// The path of the object holding `address`, or nullptr.
const char* object_path(const void* address) {
  Dl_info info;
  return dladdr(address, &info) != 0 ? info.dli_fname : nullptr;
}

// Points `policy` at the counting copy of its vtable (made on first sight), unless it
// is counted already or is LevelDB's own (its bloom policy, or its C API's wrapper).
void count(const leveldb::FilterPolicy* policy) {
  if (policy == nullptr || counting_of(policy) != nullptr) return;
  const Vtable* own = vtable_of(policy);
  const char* path = object_path(own);
  if (path == nullptr || std::strstr(path, "libleveldb.so") != nullptr) return;
  std::lock_guard<std::mutex> lock(kinds_lock);
  int i = 0;
  while (i < kKinds && kinds[i].original != nullptr && kinds[i].original != own) i++;
  if (i == kKinds) std::abort();
  if (kinds[i].original == nullptr) {
    std::memcpy(kinds[i].head, reinterpret_cast<const void* const*>(own) - 2, sizeof kinds[i].head);
    kinds[i].entries = {counted_complete_destructor, counted_deleting_destructor, counted_name,
                        counted_create_filter, counted_key_may_match};
    kinds[i].original = own;
  }
  if (policies++ == 0) std::snprintf(callbacks_in, sizeof callbacks_in, "%s", path);
  vtable_of(policy) = &kinds[i].entries;
}

template <typename Function>
Function next(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) std::abort();
  Function function;
  std::memcpy(&function, &symbol, sizeof function);
  return function;
}

__attribute__((destructor)) void report() {
  std::fprintf(stderr,
               "filter calls: policies=%lu create_filter=%lu key_may_match=%lu said_no=%lu "
               "callbacks_in=%s\n",
               policies.load(), create_filter_calls.load(), key_may_match_calls.load(),
               said_no.load(), callbacks_in);
}

}  // namespace

leveldb::Status leveldb::DB::Open(const Options& options, const std::string& name, DB** db) {
  using Open = Status (*)(const Options&, const std::string&, DB**);
  static const Open open = next<Open>(
      "_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_");
  count(options.filter_policy);
  return open(options, name, db);
}

extern "C" void leveldb_options_set_filter_policy(leveldb_options_t* options,
                                                  leveldb_filterpolicy_t* policy) {
  using Set = void (*)(leveldb_options_t*, leveldb_filterpolicy_t*);
  static const Set set = next<Set>("leveldb_options_set_filter_policy");
  count(reinterpret_cast<const leveldb::FilterPolicy*>(policy));
  set(options, policy);
}
