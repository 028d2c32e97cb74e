// Opens through leveldb::DB::Open with options a program may treat as its own
// (tests/suite/default_bits_object.rs), each mode printing one line that stock and
// the default-bits object must print alike:
//
//   readonly DIR  default options (no filter policy) on a page made read-only
//                 before the open;
//   throws DIR    an Env whose NewLogger throws: DB::Open throws, and the options'
//                 filter policy is still the program's (NULL) after it, which the
//                 program's cleanup deletes;
//   nested DIR    an Env whose NewLogger opens another database (DIR/inner) on the
//                 same thread, inside the first open.
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace {

class ThrowingEnv : public leveldb::EnvWrapper {
 public:
  ThrowingEnv() : EnvWrapper(leveldb::Env::Default()) {}
  leveldb::Status NewLogger(const std::string&, leveldb::Logger**) override {
    throw std::runtime_error("no logger today");
  }
};

class NestingEnv : public leveldb::EnvWrapper {
 public:
  explicit NestingEnv(std::string inner) : EnvWrapper(leveldb::Env::Default()), inner_(inner) {}
  leveldb::Status NewLogger(const std::string& name, leveldb::Logger** logger) override {
    leveldb::Options options;
    options.create_if_missing = true;
    leveldb::DB* db = nullptr;
    nested_ok_ = leveldb::DB::Open(options, inner_, &db).ok() &&
                 db->Put(leveldb::WriteOptions(), "key", "value").ok();
    delete db;
    return target()->NewLogger(name, logger);
  }
  bool nested_ok_ = false;

 private:
  std::string inner_;
};

bool open_and_close(const leveldb::Options& options, const std::string& dir) {
  leveldb::DB* db = nullptr;
  leveldb::Status status = leveldb::DB::Open(options, dir, &db);
  bool ok = status.ok() && db->Put(leveldb::WriteOptions(), "key", "value").ok();
  delete db;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  std::string mode = argv[1], dir = argv[2];
  if (mode == "readonly") {
    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 2;
    leveldb::Options* options = new (page) leveldb::Options;
    options->create_if_missing = true;
    if (mprotect(page, 4096, PROT_READ) != 0) return 2;
    std::printf("opened with read-only options: %s\n", open_and_close(*options, dir) ? "yes" : "no");
  } else if (mode == "throws") {
    ThrowingEnv env;
    leveldb::Options options;
    options.create_if_missing = true;
    options.env = &env;
    bool thrown = false;
    try {
      open_and_close(options, dir);
    } catch (const std::runtime_error&) {
      thrown = true;
    }
    std::printf("thrown: %s; filter policy left in the options: %s\n", thrown ? "yes" : "no",
                options.filter_policy != nullptr ? "yes" : "no");
    delete options.filter_policy;
    leveldb::Options again;
    again.create_if_missing = true;
    std::printf("opened again: %s\n", open_and_close(again, dir + "/again") ? "yes" : "no");
  } else if (mode == "nested") {
    NestingEnv env(dir + "-inner");
    leveldb::Options options;
    options.create_if_missing = true;
    options.env = &env;
    bool outer = open_and_close(options, dir);
    std::printf("outer open: %s; nested open: %s\n", outer ? "yes" : "no",
                env.nested_ok_ ? "yes" : "no");
  } else {
    return 2;
  }
  return 0;
}
