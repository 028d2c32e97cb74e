// LevelDB's documented wrapper policy (doc/index.md, "Filters": a CustomFilterPolicy
// that hands the built-in bloom policy its work), here without the trimming of its
// example and under the built-in policy's own name, so that its tables are the
// built-in policy's, byte for byte. Built as a small
// shared library, which does no std::string work of its own (it only passes its
// caller's string on, so its dynamic symbols show no string ABI), and into a program
// built with -static-libstdc++ (tests/suite/decided_once.rs).
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>

#include <string>

namespace {

class CustomFilterPolicy : public leveldb::FilterPolicy {
 public:
  explicit CustomFilterPolicy(int bits_per_key)
      : builtin_policy_(leveldb::NewBloomFilterPolicy(bits_per_key)) {}
  ~CustomFilterPolicy() override { delete builtin_policy_; }

  const char* Name() const override { return builtin_policy_->Name(); }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    builtin_policy_->CreateFilter(keys, n, dst);
  }

  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    return builtin_policy_->KeyMayMatch(key, filter);
  }

 private:
  const leveldb::FilterPolicy* builtin_policy_;
};

}  // namespace

const leveldb::FilterPolicy* NewWrappedBloomFilterPolicy(int bits_per_key) {
  return new CustomFilterPolicy(bits_per_key);
}
