#include <leveldb_bloom.hpp>

#include <cstdio>
#include <string>
#include <vector>

// The C++ RAII handle, without LevelDB. Needs C++11.
int main() {
  leveldb_bloom::Policy policy(10);                 // released by its destructor
  std::vector<std::string> keys = {"hello", "world"};
  std::string filter = policy.create_filter(keys);  // 11 40 00 41 44 10 40 10 06
  std::string block = "header:";
  policy.append_filter(keys, &block);               // or appended, written in place
  bool maybe = policy.key_may_match(std::string("hello"), filter);
  std::printf("%s: %zu bytes, hello may be present: %d\n", policy.name(), filter.size(), maybe);
  return maybe ? 0 : 1;
}
