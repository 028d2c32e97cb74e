// The open functions of LevelDB that LEVELDB_BLOOM_DEFAULT_BITS needs to see
// (src/default_bits.rs): leveldb_open, and leveldb::DB::Open in both std::string ABIs
// (x86-64 only: there a Status returned in memory is an ordinary first argument).
// Each passes its arguments, and the address it returns to, on to the library's
// Rust code, which forwards them to the LevelDB definition its caller would have
// reached without this library.
//
// Linked into libleveldb_bloom.so only (build.rs), never into libleveldb_bloom.a:
// in a static link these names would take the place of the program's own LevelDB.
#include <cstddef>
#include <cstdlib>
#include <cstring>

extern "C" {
void* leveldb_bloom_default_bits_open_c(const void* options, const char* name, char** errptr,
                                        const void* caller, int* forwarded);
int leveldb_bloom_default_bits_open_cxx(int abi, void* status, const void* options,
                                        const void* name, void** db, const void* caller);
}

namespace {

const char kNotFound[] =
    "leveldb-bloom: no LevelDB open function found for this caller (LevelDB not loaded?)";

}  // namespace

extern "C" __attribute__((visibility("default"))) void* leveldb_open(const void* options,
                                                                     const char* name,
                                                                     char** errptr) {
  int forwarded = 0;
  void* db = leveldb_bloom_default_bits_open_c(options, name, errptr,
                                               __builtin_return_address(0), &forwarded);
  if (!forwarded && errptr != nullptr) {
    // As LevelDB's SaveError: a previous message is freed, the new one malloc'ed.
    std::free(*errptr);
    *errptr = strdup(kNotFound);
  }
  return db;
}

#if defined(__x86_64__)
namespace {

// A leveldb::Status holding an IOError (code 5) with `message`, as LevelDB lays it
// out: one pointer to new[]'ed bytes, a 4-byte length, the code, the message. Out
// of memory, new[] throws std::bad_alloc to LevelDB's caller, as LevelDB's would.
void* status_error(void* status, const char* message) {
  const std::size_t length = std::strlen(message);
  char* state = new char[length + 5];
  const unsigned int size = static_cast<unsigned int>(length);
  std::memcpy(state, &size, sizeof size);
  state[4] = 5;
  std::memcpy(state + 5, message, length);
  std::memcpy(status, &state, sizeof state);
  return status;
}

}  // namespace

// Status DB::Open(const Options&, const std::string&, DB**): the Status is returned in
// memory whose address comes first and is returned.
extern "C" __attribute__((visibility("default"))) void* leveldb_bloom_db_open_cxx11(
    void* status, const void* options, const void* name, void** db)
    __asm__(
        "_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_"
        "traitsIcESaIcEEEPPS0_");
extern "C" __attribute__((visibility("default"))) void* leveldb_bloom_db_open_cxx98(
    void* status, const void* options, const void* name, void** db)
    __asm__("_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_");

void* leveldb_bloom_db_open_cxx11(void* status, const void* options, const void* name,
                                  void** db) {
  if (leveldb_bloom_default_bits_open_cxx(0, status, options, name, db,
                                          __builtin_return_address(0)))
    return status;
  return status_error(status, kNotFound);
}

void* leveldb_bloom_db_open_cxx98(void* status, const void* options, const void* name,
                                  void** db) {
  if (leveldb_bloom_default_bits_open_cxx(1, status, options, name, db,
                                          __builtin_return_address(0)))
    return status;
  return status_error(status, kNotFound);
}
#endif
