// LevelDB 1.23 itself, reading keys with a filter policy that records every filter
// it is asked about: the reference `leveldb-bloom explain` is checked against
// (cli/tests/suite/explain.rs). The policy is made with the C API's
// leveldb_filterpolicy_create, named as LevelDB's bloom filter, and answers (and
// builds, should LevelDB build a filter) with LevelDB's own bloom policy.
//
//   explain_harness DIR < KEYS     KEYS: one key in hex per line
//
// For each key: "key HEX", then one "filter HEX ANSWER" line per KeyMayMatch call
// (the filter's bytes, 1 for may match), then "get found" or "get not-found"; at the
// end "filters built N" (0 when no compaction ran during the reads).
#include <leveldb/c.h>
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

std::unique_ptr<const leveldb::FilterPolicy> bloom(leveldb::NewBloomFilterPolicy(10));
long filters_built = 0;

std::string hex(const char* data, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; i++) {
    out += digits[(static_cast<unsigned char>(data[i]) >> 4) & 15];
    out += digits[static_cast<unsigned char>(data[i]) & 15];
  }
  return out;
}

std::string unhex(const std::string& text) {
  std::string out;
  for (size_t i = 0; i + 1 < text.size(); i += 2) {
    out += static_cast<char>(std::stoi(text.substr(i, 2), nullptr, 16));
  }
  return out;
}

void destroy(void*) {}

char* create_filter(void*, const char* const* keys, const size_t* lengths, int n,
                    size_t* filter_length) {
  filters_built++;
  std::vector<leveldb::Slice> slices;
  for (int i = 0; i < n; i++) slices.emplace_back(keys[i], lengths[i]);
  std::string filter;
  bloom->CreateFilter(slices.data(), n, &filter);
  char* out = static_cast<char*>(malloc(filter.size()));
  std::copy(filter.begin(), filter.end(), out);
  *filter_length = filter.size();
  return out;
}

unsigned char key_may_match(void*, const char* key, size_t length, const char* filter,
                            size_t filter_length) {
  bool answer = bloom->KeyMayMatch(leveldb::Slice(key, length),
                                   leveldb::Slice(filter, filter_length));
  std::cout << "filter " << hex(filter, filter_length) << " " << answer << "\n";
  return answer;
}

const char* name(void*) { return "leveldb.BuiltinBloomFilter2"; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: explain_harness DIR < KEYS\n";
    return 2;
  }
  leveldb_filterpolicy_t* policy =
      leveldb_filterpolicy_create(nullptr, destroy, create_filter, key_may_match, name);
  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_filter_policy(options, policy);
  char* error = nullptr;
  leveldb_t* db = leveldb_open(options, argv[1], &error);
  if (error != nullptr) {
    std::cerr << "open: " << error << "\n";
    return 1;
  }
  leveldb_readoptions_t* read = leveldb_readoptions_create();
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string key = unhex(line);
    std::cout << "key " << line << "\n";
    size_t length = 0;
    char* value = leveldb_get(db, read, key.data(), key.size(), &length, &error);
    if (error != nullptr) {
      std::cerr << "get: " << error << "\n";
      return 1;
    }
    std::cout << "get " << (value != nullptr ? "found" : "not-found") << "\n";
    leveldb_free(value);
  }
  leveldb_readoptions_destroy(read);
  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_filterpolicy_destroy(policy);
  std::cout << "filters built " << filters_built << "\n";
  return 0;
}
