// CreateFilter called from JIT code: a few instructions written into an anonymous
// executable mapping, which no loaded object holds, call the CreateFilter of the
// policy leveldb::NewBloomFilterPolicy(10) returned (the swapped one under
// LD_PRELOAD). Its filters must be the bytes of LevelDB's own policy (made by the
// definition in libleveldb's own scope, through its handle), and the process must
// go on. x86-64 only: the JIT code is x86-64's (tests/suite/decided_once.rs).
#include <dlfcn.h>
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

namespace {

typedef void (*CreateFilterFn)(const leveldb::FilterPolicy*, const leveldb::Slice*, int,
                               std::string*);

// `sub rsp, 8; movabs rax, TARGET; call rax; add rsp, 8; ret`: calls TARGET with the
// arguments it was given, from the mapping.
CreateFilterFn jit_call(void* target) {
  unsigned char code[] = {0x48, 0x83, 0xec, 0x08, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0,
                          0,    0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3};
  std::memcpy(code + 6, &target, sizeof target);
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return nullptr;
  std::memcpy(page, code, sizeof code);
  if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) return nullptr;
  CreateFilterFn call;
  std::memcpy(&call, &page, sizeof call);
  return call;
}

}  // namespace

int main() {
  const leveldb::FilterPolicy* policy = leveldb::NewBloomFilterPolicy(10);
  void* leveldb = dlopen("libleveldb.so.1d", RTLD_LAZY | RTLD_NOLOAD);
  void* own = leveldb != nullptr ? dlsym(leveldb, "_ZN7leveldb20NewBloomFilterPolicyEi") : nullptr;
  if (!CHECK(policy != nullptr && own != nullptr)) return check_report("jit_create_filter");
  const leveldb::FilterPolicy* (*new_own)(int);
  std::memcpy(&new_own, &own, sizeof new_own);
  const leveldb::FilterPolicy* stock = new_own(10);

  void* const* vtable;
  std::memcpy(&vtable, policy, sizeof vtable);
  Dl_info where;
  std::printf("policy from: %s\n",
              dladdr(vtable[3], &where) != 0 && where.dli_fname != nullptr ? where.dli_fname
                                                                           : "?");
  CreateFilterFn create_filter = jit_call(vtable[3]);
  if (!CHECK(create_filter != nullptr)) return check_report("jit_create_filter");

  std::vector<std::string> keys;
  for (int n = 0; n <= 300; n += 30) {
    while (static_cast<int>(keys.size()) < n) keys.push_back("key" + std::to_string(keys.size()));
    std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
    std::string ours = "prefix", theirs = "prefix";
    create_filter(policy, slices.data(), n, &ours);
    stock->CreateFilter(slices.data(), n, &theirs);
    CHECK_THAT(ours == theirs, "the filter built from JIT code is LevelDB's");
    for (const leveldb::Slice& key : slices) {
      CHECK(policy->KeyMayMatch(key, leveldb::Slice(ours.data() + 6, ours.size() - 6)));
    }
  }
  delete stock;
  delete policy;
  return check_report("jit_create_filter");
}
