// A stand-in for a LevelDB built into an object, for tests/suite/self_bound.rs: it holds
// the two names LevelDB leaves in an object's read-only data (its bloom policy's and
// its internal comparator's), defines leveldb::NewBloomFilterPolicy(int) and calls
// it. Linked as tests/suite/self_bound.rs says (-Bsymbolic, -Bsymbolic-functions, hidden
// visibility, into a program), the call binds inside the object or through the
// dynamic linker; nothing here is LevelDB's code. It spells its std::string in an
// exported LevelDB function's name (DestroyDB), as LevelDB does, so that a swap
// reaching its call can write its strings (src/dropin/decide.rs).
#include <cstdio>
#include <string>

namespace leveldb {
class FilterPolicy;
struct Options;

// Never called: its name carries the string type.
int DestroyDB(const std::string& name, const Options& options) {
  (void)options;
  return static_cast<int>(name.size());
}

// Not LevelDB's policy: only its name and address matter to the tests.
const FilterPolicy* NewBloomFilterPolicy(int bits_per_key) {
  static const char kNames[][32] = {"leveldb.BuiltinBloomFilter2",
                                    "leveldb.InternalKeyComparator"};
  return bits_per_key < 0 ? reinterpret_cast<const FilterPolicy*>(kNames) : nullptr;
}
}  // namespace leveldb

// The object's own call, as LevelDB's C API or a binding makes it: prints whether
// the policy came from elsewhere (a swap reached it) or from the object itself.
extern "C" __attribute__((visibility("default"))) int self_bound_make() {
  const leveldb::FilterPolicy* policy = leveldb::NewBloomFilterPolicy(10);
  std::printf("policy: %s\n", policy != nullptr ? "swapped" : "own");
  return 0;
}

#ifdef SELF_BOUND_PROGRAM
int main() { return self_bound_make(); }
#endif
