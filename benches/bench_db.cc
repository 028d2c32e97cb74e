// The database part of `make bench`: stock LevelDB against the swap (the same
// program with LD_PRELOAD=libleveldb_bloom.so), each run a child process of this
// program pinned to one core, on a database shaped so that the filter is a visible
// share of a Get: about two dozen tables over levels 0, 1 and 2, small values, and
// Gets mostly of absent keys, each of which consults the filters of five tables.
// Then the exact instruction counts per Get and per filter, from `perf stat` where
// the CPU's counters can be read, else from valgrind's callgrind.
//
// Children: `--db-child DIR build|fill` builds the database at DIR (fill: and removes
// it), `--db-child DIR get WARMUP ABSENT PRESENT` reads it, `--db-child DIR tables`
// writes a few level-0 tables (for the instructions per filter built).

#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>
#include "../c_tests/load_ours.h"
#include "bench_util.h"

#include <dlfcn.h>

#include <cctype>
#include <cinttypes>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

namespace bench {
namespace {

constexpr int kBitsPerKey = 10;
// The database: kKeys distinct 16-byte keys with 24-byte values. The first
// kDeepKeys are compacted into level 2, the rest go through level 0 into level 1,
// and the last kLevel0Files memtables (each rewriting kRewrites keys already there,
// with the same values) stay in level 0. LevelDB compacts level 0 at 4 files, level
// 1 at 10 MB; tables are cut at 1 MB (the least LevelDB allows).
constexpr uint64_t kKeys = 400000;
constexpr uint64_t kDeepKeys = 300000;
constexpr int kLevel0Files = 3;
constexpr uint64_t kRewrites = 2000;
constexpr uint64_t kAbsent = uint64_t(1) << 40;  // absent keys are numbered from here

void db_key(uint64_t i, char key[17]) {
  uint64_t state = i;
  std::snprintf(key, 17, "%016" PRIx64, splitmix(&state));
}

void db_value(uint64_t i, char value[25]) {
  uint64_t state = ~i;
  std::snprintf(value, 25, "%016" PRIx64 "%08" PRIx64, splitmix(&state), i);
}

// LevelDB's default Env, except that it refuses to create tables: a reader opens the
// database through it, so that the compactions its Gets set off (LevelDB compacts a
// table after enough Gets have looked in it before finding their answer elsewhere,
// which absent keys do within a few hundred Gets) fail at once, and every run reads
// the database as it was built.
class NoNewTables : public leveldb::EnvWrapper {
 public:
  NoNewTables() : EnvWrapper(leveldb::Env::Default()) {}
  leveldb::Status NewWritableFile(const std::string& name, leveldb::WritableFile** file) override {
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".ldb") == 0)
      return leveldb::Status::IOError(name, "the benchmark's readers write no tables");
    return EnvWrapper::NewWritableFile(name, file);
  }
};

int files_at(leveldb::DB* db, int level) {
  std::string value;
  db->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &value);
  return std::atoi(value.c_str());
}

std::string shape(leveldb::DB* db) {
  std::string text;
  for (int level = 0; level < 7; level++) text += std::to_string(files_at(db, level)) + " ";
  return text;
}

// Writes the memtable out as a table and waits for it (a compaction of a range past
// every key, which compacts nothing else).
void flush(leveldb::DB* db) {
  const leveldb::Slice beyond("~");
  db->CompactRange(&beyond, &beyond);
}

// Waits until level 0 is below LevelDB's compaction trigger (4 files), that is until
// the compactions the writes set off are done.
void settle(leveldb::DB* db) {
  while (files_at(db, 0) >= 4) usleep(5000);
}

void put_keys(leveldb::DB* db, uint64_t first, uint64_t end) {
  leveldb::WriteBatch batch;
  char key[17], value[25];
  for (uint64_t i = first; i < end; i++) {
    db_key(i, key);
    db_value(i, value);
    batch.Put(leveldb::Slice(key, 16), leveldb::Slice(value, 24));
    if (batch.ApproximateSize() > 64 * 1024 || i + 1 == end) {
      db->Write(leveldb::WriteOptions(), &batch);
      batch.Clear();
    }
  }
}

leveldb::Options db_options(const leveldb::FilterPolicy* policy) {
  leveldb::Options options;
  options.filter_policy = policy;
  options.write_buffer_size = 256 * 1024;
  options.max_file_size = 1 << 20;
  return options;
}

// The policy's C++ methods, as callgrind names code without symbols
// ("0x<offset in its file>"): the words `create=` and `query=`.
std::string policy_methods(const leveldb::FilterPolicy* policy) {
  // Itanium C++ ABI: slots 0 and 1 are the destructors, then Name, CreateFilter,
  // KeyMayMatch in FilterPolicy's order of declaration.
  const void* const* vtable = *reinterpret_cast<const void* const* const*>(policy);
  std::string text;
  for (int slot : {3, 4}) {
    Dl_info info;
    char word[64] = "?";
    if (dladdr(vtable[slot], &info) != 0)
      std::snprintf(word, sizeof word, "0x%016zx",
                    size_t(static_cast<const char*>(vtable[slot]) -
                           static_cast<const char*>(info.dli_fbase)));
    text += std::string(slot == 3 ? " create=" : " query=") + word;
  }
  return text;
}

// What every child reports after its own numbers: the swap's status (-1: no swap),
// where the policy's code lives, and its methods.
std::string policy_report(const leveldb::FilterPolicy* policy) {
  typedef int (*SwapStatus)(void);
  SwapStatus swap_status =
      reinterpret_cast<SwapStatus>(dlsym(RTLD_DEFAULT, "leveldb_bloom_swap_status"));
  return std::to_string(swap_status ? swap_status() : -1) + " " +
         load_ours::object_of_class(policy) + policy_methods(policy);
}

int open_failed(const leveldb::Status& status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return 2;
}

}  // namespace

int db_child(int argc, char** argv) {
  const char* directory = argv[2];
  std::string mode = argv[3];
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(kBitsPerKey));
  leveldb::Options options = db_options(policy.get());
  leveldb::DB* db = nullptr;
  if (mode == "build" || mode == "fill" || mode == "tables") {
    options.error_if_exists = options.create_if_missing = true;
    leveldb::Status status = leveldb::DB::Open(options, directory, &db);
    if (!status.ok()) return open_failed(status);
    uint64_t start = now_ns();
    if (mode == "tables") {
      // Three memtables, each written out as one level-0 table: every key is in
      // exactly one filter.
      for (uint64_t file = 0; file < 3; file++) {
        put_keys(db, file * 3000, (file + 1) * 3000);
        flush(db);
      }
    } else {
      put_keys(db, 0, kDeepKeys);
      db->CompactRange(nullptr, nullptr);  // all of it into level 2
      put_keys(db, kDeepKeys, kKeys);
      settle(db);
      flush(db);
      uint64_t seed = 99;
      for (settle(db); files_at(db, 0) != kLevel0Files; settle(db)) {
        leveldb::WriteBatch batch;
        char key[17], value[25];
        for (uint64_t i = 0; i < kRewrites; i++) {
          uint64_t k = splitmix(&seed) % kKeys;
          db_key(k, key);
          db_value(k, value);
          batch.Put(leveldb::Slice(key, 16), leveldb::Slice(value, 24));
        }
        db->Write(leveldb::WriteOptions(), &batch);
        flush(db);
      }
    }
    double ns = double(now_ns() - start) / (mode == "tables" ? 9000 : kKeys);
    uint64_t bytes = 0;
    std::vector<std::string> files;
    leveldb::Env::Default()->GetChildren(directory, &files);
    for (const std::string& file : files) {
      uint64_t size = 0;
      if (file.size() > 4 && file.compare(file.size() - 4, 4, ".ldb") == 0 &&
          leveldb::Env::Default()->GetFileSize(std::string(directory) + "/" + file, &size).ok())
        bytes += size;
    }
    std::printf("%.1f %s%" PRIu64 " %s\n", ns, shape(db).c_str(), bytes,
                policy_report(policy.get()).c_str());
    delete db;
    if (mode == "fill") leveldb::DestroyDB(directory, leveldb::Options());
    return 0;
  }
  if (mode != "get" || argc != 7) {
    std::fprintf(stderr, "unknown database child\n");
    return 2;
  }
  uint64_t warmup = std::strtoull(argv[4], nullptr, 10);
  uint64_t absent_gets = std::strtoull(argv[5], nullptr, 10);
  uint64_t present_gets = std::strtoull(argv[6], nullptr, 10);
  NoNewTables env;
  options.env = &env;
  leveldb::Status status = leveldb::DB::Open(options, directory, &db);
  if (!status.ok()) return open_failed(status);
  if (files_at(db, 0) != kLevel0Files) {
    std::fprintf(stderr, "the database changed: %s\n", shape(db).c_str());
    return 2;
  }
  uint64_t found = 0, digest = 0;
  std::string got;
  char key[17];
  auto gets = [&](uint64_t seed, uint64_t count, uint64_t first) {
    uint64_t begin = now_ns();
    for (uint64_t i = 0; i < count; i++) {
      db_key(first + splitmix(&seed) % kKeys, key);
      if (db->Get(leveldb::ReadOptions(), leveldb::Slice(key, 16), &got).ok()) {
        found++;
        digest = digest * 31 + std::hash<std::string>()(got);
      }
    }
    return count ? double(now_ns() - begin) / count : 0.0;
  };
  gets(7, warmup, kAbsent);
  gets(8, warmup, 0);
  found = digest = 0;
  double absent = gets(42, absent_gets, kAbsent);
  uint64_t found_absent = found;
  double present = gets(43, present_gets, 0);
  std::printf("%.1f %.1f %" PRIu64 " %" PRIu64 " %" PRIx64 " %s\n", absent, present, found_absent,
              found - found_absent, digest, policy_report(policy.get()).c_str());
  delete db;
  return 0;
}

namespace {

int bench_core() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
  for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
    if (CPU_ISSET(cpu, &allowed)) return cpu;
  return -1;
}

// A child's report ends with: swap status, where the policy lives, its methods.
struct Policy {
  int swap = -2;
  std::string where, create, query;
};

bool parse_policy(const char* text, Policy* policy) {
  char where[4096], create[64], query[64];
  if (std::sscanf(text, "%d %4095s create=%63s query=%63s", &policy->swap, where, create,
                  query) != 4)
    return false;
  policy->where = where;
  policy->create = create;
  policy->query = query;
  return true;
}

// Checks that a stock child used LevelDB's policy and a swapped child ours.
void check_policy(const Policy& policy, bool swapped, int* reports) {
  bool ours = policy.where.find("libleveldb_bloom") != std::string::npos;
  bool swap_on = policy.swap >= 0 && (policy.swap & LEVELDB_BLOOM_SWAP_CXX_API);
  if (swapped != swap_on || (!swapped && (ours || policy.swap != -1)))
    fail("database run used the wrong policy: " + policy.where);
  if (!(*reports & (1 << swapped)))
    std::printf("  policy of the %s run: %s (swap status %d)\n", swapped ? "swapped" : "stock",
                policy.where.c_str(), policy.swap);
  *reports |= 1 << swapped;
}

struct Build {
  double ns = 0;
  int levels[7] = {0, 0, 0, 0, 0, 0, 0};
  unsigned long long bytes = 0;
  Policy policy;
};

bool parse_build(const std::string& output, Build* build) {
  int used = 0;
  int* l = build->levels;
  if (std::sscanf(output.c_str(), "%lf %d %d %d %d %d %d %d %llu %n", &build->ns, &l[0], &l[1],
                  &l[2], &l[3], &l[4], &l[5], &l[6], &build->bytes, &used) != 9)
    return false;
  return parse_policy(output.c_str() + used, &build->policy);
}

struct Gets {
  double absent = 0, present = 0;
  std::string found;  // found absent/found present/digest
  Policy policy;
};

bool parse_gets(const std::string& output, Gets* gets) {
  unsigned long long found_absent, found_present, digest;
  int used = 0;
  if (std::sscanf(output.c_str(), "%lf %lf %llu %llu %llx %n", &gets->absent, &gets->present,
                  &found_absent, &found_present, &digest, &used) != 5)
    return false;
  char text[80];
  std::snprintf(text, sizeof text, "%llu/%llu/%llx", found_absent, found_present, digest);
  gets->found = text;
  return parse_policy(output.c_str() + used, &gets->policy);
}

std::vector<std::string> get_args(const char* self, const std::string& db, uint64_t warmup,
                                  uint64_t absent, uint64_t present) {
  return {self, "--db-child", db, "get", std::to_string(warmup), std::to_string(absent),
          std::to_string(present)};
}

// ---- counters ----

// What callgrind says of each function: its inclusive instructions and how many
// times it was called.
struct Cost {
  double ir = 0, calls = 0;
};

struct Profile {
  double total = 0;
  std::map<std::string, Cost> functions;       // "function [object]"
  std::map<std::string, std::string> callers;  // function -> "caller [object]" (the last seen)

  // The function whose name contains every word of `words` (the costliest one), and
  // its name in `functions`.
  Cost find(std::initializer_list<const char*> words, std::string* key = nullptr) const {
    Cost best;
    for (const auto& [name, cost] : functions) {
      bool all = true;
      for (const char* word : words) all = all && name.find(word) != std::string::npos;
      if (all && cost.ir > best.ir) {
        best = cost;
        if (key != nullptr) *key = name;
      }
    }
    return best;
  }
  Cost at(const std::string& key) const {
    auto found = functions.find(key);
    return found == functions.end() ? Cost{} : found->second;
  }
};

// Reads a callgrind output file (format: valgrind's docs, "Callgrind Format
// Specification"). Every cost line in a function's block counts towards its
// inclusive cost: its own instructions, and after each `calls=` line, the inclusive
// cost of that call. (callgrind_annotate --inclusive=yes would say the same, but it
// lists functions only until their cumulative share reaches its threshold, at most
// 100 %, which inclusive shares pass within a few lines.)
bool read_profile(const std::string& path, Profile* profile) {
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return false;
  std::map<std::string, std::string> objects, functions;  // compressed names: "(id)" -> name
  auto name = [](std::map<std::string, std::string>& table, std::string value) {
    if (value.empty() || value[0] != '(') return value;
    size_t close = value.find(')');
    std::string id = value.substr(0, close + 1);
    if (close + 2 < value.size()) table[id] = value.substr(close + 2);
    return table[id];
  };
  std::map<std::string, double> inclusive, calls;
  std::string object, function, callee;
  char buffer[16384];
  while (std::fgets(buffer, sizeof buffer, file)) {
    std::string line = buffer;
    line.erase(line.find_last_not_of("\n") + 1);
    auto value = [&](size_t skip) { return line.substr(skip); };
    if (line.rfind("ob=", 0) == 0) {
      object = name(objects, value(3));
    } else if (line.rfind("cob=", 0) == 0) {
      name(objects, value(4));
    } else if (line.rfind("fn=", 0) == 0) {
      function = name(functions, value(3)) + " [" + object + "]";
    } else if (line.rfind("cfn=", 0) == 0) {
      callee = name(functions, value(4));
    } else if (line.rfind("calls=", 0) == 0) {
      calls[callee] += std::strtod(line.c_str() + 6, nullptr);
      profile->callers[callee] = function;
    } else if (line.rfind("totals:", 0) == 0 || line.rfind("summary:", 0) == 0) {
      profile->total = std::strtod(line.c_str() + line.find(':') + 1, nullptr);
    } else if (!line.empty() && (std::isdigit(static_cast<unsigned char>(line[0])) ||
                                 line[0] == '+' || line[0] == '-' || line[0] == '*')) {
      size_t space = line.find(' ');
      if (space != std::string::npos && !function.empty())
        inclusive[function] += std::strtod(line.c_str() + space + 1, nullptr);
    }
  }
  std::fclose(file);
  for (const auto& [key, ir] : inclusive) {
    Cost& cost = profile->functions[key];
    cost.ir = ir;
    cost.calls = calls[key.substr(0, key.rfind(" ["))];
  }
  return profile->total > 0;
}

// Runs `argv` under callgrind (pinned, swapped or not) and reads its profile.
bool callgrind(std::vector<std::string> argv, const char* preload, const std::string& out,
               Profile* profile, std::string* output) {
  std::vector<std::string> full = {"valgrind", "-q", "--tool=callgrind",
                                   "--callgrind-out-file=" + out};
  full.insert(full.end(), argv.begin(), argv.end());
  *output = run_child(full, preload, -1, true);
  return !output->empty() && read_profile(out, profile);
}

// `perf stat -e instructions,cycles` of a child: {instructions, cycles}, or {} when
// perf or the counters are missing.
std::vector<double> perf_counts(std::vector<std::string> argv, const char* preload,
                                const std::string& out, int core) {
  std::vector<std::string> full = {"perf", "stat", "-x,", "-o", out, "-e", "instructions,cycles",
                                   "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  if (run_child(full, preload, core, true).empty()) return {};
  std::vector<double> counts;
  if (FILE* file = std::fopen(out.c_str(), "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, file)) {
      if (std::strstr(line, ",instructions") == nullptr && std::strstr(line, ",cycles") == nullptr)
        continue;
      char* end;
      double value = std::strtod(line, &end);
      if (end == line) return {};  // "<not supported>"
      counts.push_back(value);
    }
    std::fclose(file);
  }
  return counts.size() == 2 ? counts : std::vector<double>{};
}

void counters(const char* self, const char* library, const std::string& shared,
              const std::string& directory, int core, bool quick) {
  const uint64_t warmup = 2000, gets = quick ? 5000 : 10000;
  std::printf("\ncounters: ");
  // perf first: real hardware counts.
  {
    std::string out = directory + "/perf.txt";
    std::vector<double> base = perf_counts(get_args(self, shared, warmup, 0, 0), nullptr, out, core);
    if (!base.empty()) {
      std::printf("perf stat -e instructions,cycles, per Get (a run with %" PRIu64
                  " Gets of each kind after a warm-up of %" PRIu64
                  " of each, less a run of the warm-up alone)\n",
                  gets, warmup);
      for (int swapped = 0; swapped < 2; swapped++) {
        const char* preload = swapped ? library : nullptr;
        base = perf_counts(get_args(self, shared, warmup, 0, 0), preload, out, core);
        auto absent = perf_counts(get_args(self, shared, warmup, gets, 0), preload, out, core);
        auto present = perf_counts(get_args(self, shared, warmup, 0, gets), preload, out, core);
        if (base.empty() || absent.empty() || present.empty()) return fail("perf stat failed");
        std::printf("  %-8s absent Get: %7.0f instructions %7.0f cycles; present Get: %7.0f "
                    "instructions %7.0f cycles\n",
                    swapped ? "swapped" : "stock", (absent[0] - base[0]) / gets,
                    (absent[1] - base[1]) / gets, (present[0] - base[0]) / gets,
                    (present[1] - base[1]) / gets);
      }
      return;
    }
  }
  if (run_child({"valgrind", "--version"}, nullptr, -1, true).empty()) {
    std::printf("skipped: neither perf's hardware counters nor valgrind are available here\n");
    return;
  }
  std::printf("perf stat's hardware counters are not supported here; exact instruction counts "
              "from valgrind --tool=callgrind instead (no cycles).\n"
              "  Per Get: the program's total of a run with %" PRIu64
              " Gets of one kind after a warm-up of %" PRIu64
              " of each kind, less the total of a run of the warm-up alone.\n"
              "  The filter's part: inclusive instructions of the policy's C++ methods, read from "
              "callgrind's file (LevelDB's are unnamed in its stripped libleveldb, named "
              "0x<offset>; the child reads the offsets from the policy object's vtable), and of "
              "our C callback under the swap.\n",
              gets, warmup);
  std::printf("%-9s %-12s %12s %18s %18s %18s\n", "", "Get of", "instr./Get",
              "KeyMayMatch/Get", "our callback/Get", "KeyMayMatch calls");
  for (int swapped = 0; swapped < 2; swapped++) {
    const char* preload = swapped ? library : nullptr;
    const char* side = swapped ? "swapped" : "stock";
    Profile base, absent, present;
    std::string out_base, out_absent, out_present;
    std::string file = directory + "/callgrind." + side;
    if (!callgrind(get_args(self, shared, warmup, 0, 0), preload, file + ".base", &base,
                   &out_base) ||
        !callgrind(get_args(self, shared, warmup, gets, 0), preload, file + ".absent", &absent,
                   &out_absent) ||
        !callgrind(get_args(self, shared, warmup, 0, gets), preload, file + ".present", &present,
                   &out_present))
      return fail("a callgrind run failed");
    Gets report;
    if (!parse_gets(out_absent, &report)) return fail("a callgrind run failed");
    for (int kind = 0; kind < 2; kind++) {
      const Profile& run = kind == 0 ? absent : present;
      // Our policy object's methods have symbols; LevelDB's are found by offset.
      auto method = [&](const Profile& profile) {
        return swapped ? profile.find({"libleveldb_bloom", "BloomFilterPolicy::KeyMayMatch"})
                       : profile.find({report.policy.query.c_str()});
      };
      Cost query = method(run);
      Cost query_base = method(base);
      Cost ours = run.find({"libleveldb_bloom", "key_may_match"});
      Cost ours_base = base.find({"libleveldb_bloom", "key_may_match"});
      char callback[32] = "-";
      if (swapped)
        std::snprintf(callback, sizeof callback, "%.0f", (ours.ir - ours_base.ir) / gets);
      std::printf("%-9s %-12s %12.0f %18.0f %18s %18.2f\n", side, kind ? "present key" : "absent key",
                  (run.total - base.total) / gets, (query.ir - query_base.ir) / gets, callback,
                  (query.calls - query_base.calls) / gets);
    }
  }
  // Filters built: three tables of 3,000 keys each, so each key is in one filter.
  // LevelDB reaches the policy's CreateFilter by a tail jump (from its
  // InternalFilterPolicy), which callgrind, with no symbol to mark where the stripped
  // function starts, counts as part of the caller's caller: the filter block's code
  // that calls the policy. That function is found as the caller of our policy
  // object's CreateFilter in the swapped run; it is the same code (and name) in the
  // stock run.
  Profile tables[2];
  for (int swapped = 0; swapped < 2; swapped++) {
    const char* side = swapped ? "swapped" : "stock";
    std::string db = directory + "/tables." + side, output;
    Build build;
    if (!callgrind({self, "--db-child", db, "tables"}, swapped ? library : nullptr,
                   directory + "/callgrind.tables." + side, &tables[swapped], &output) ||
        !parse_build(output, &build))
      return fail("a callgrind run failed");
    leveldb::DestroyDB(db, leveldb::Options());
  }
  std::string callback;
  Cost ours = tables[1].find({"libleveldb_bloom", "BloomFilterPolicy::CreateFilter"}, &callback);
  std::string caller = tables[1].callers[callback.substr(0, callback.rfind(" ["))];
  double filters = ours.calls;
  if (caller.empty() || filters <= 0) return fail("no filters built under callgrind");
  std::printf("Filters built (3 tables, 9000 keys, %.0f filters): inclusive instructions of "
              "%s, LevelDB's filter block code that calls the policy (its CreateFilter folded "
              "in), per filter and per key\n",
              filters, caller.c_str());
  for (int swapped = 0; swapped < 2; swapped++) {
    Cost builder = tables[swapped].at(caller);
    std::printf("%-9s %10.0f per filter %8.1f per key", swapped ? "swapped" : "stock",
                builder.ir / filters, builder.ir / 9000);
    if (swapped)
      std::printf("; of which our CreateFilter %s: %.0f per filter %.1f per key",
                  callback.substr(0, callback.rfind(" [")).c_str(), ours.ir / filters,
                  ours.ir / 9000);
    std::printf("\n");
  }
}

}  // namespace

void database(const char* self, const char* library, bool quick, bool counters_only) {
  // Even counts, so that each side goes first as often as the other; none when only
  // the instructions are counted. A fill's filters are a few percent of its time, so
  // its pairs are as many as the Gets': four left the median a coin toss.
  const int fill_runs = counters_only ? 0 : quick ? 2 : 8,
            get_runs = counters_only ? 0 : quick ? 4 : 8;
  const uint64_t warmup = 20000, absent_gets = quick ? 100000 : 200000,
                 present_gets = quick ? 25000 : 50000;
  int core = bench_core();
  // In memory where the machine has it: LevelDB syncs each table it writes, and a
  // disk's latency would time the fill more than its Puts and compactions do.
  char in_memory[] = "/dev/shm/leveldb_bloom_bench_XXXXXX";
  char on_disk[] = "/tmp/leveldb_bloom_bench_XXXXXX";
  char* directory = mkdtemp(in_memory);
  if (directory == nullptr) directory = mkdtemp(on_disk);
  if (directory == nullptr) return fail("no temporary directory");
  const std::string shared = std::string(directory) + "/shared";
  int reports = 0;
  Build built;
  if (!parse_build(run_child({self, "--db-child", shared, "build"}, nullptr, core), &built))
    return fail("building the database failed");
  check_policy(built.policy, false, &reports);
  std::printf("\nLevelDB database: %" PRIu64 " keys of 16 bytes, 24-byte values, %.1f MB in "
              "tables by level: %d %d %d (levels 0, 1, 2; 256 KB write buffer, 1 MB tables), "
              "in %s;\n"
              "each Get of an absent key consults %d filters. Each run is a child process pinned "
              "to core %d, stock LevelDB or the swap (LD_PRELOAD); pairs alternate which goes "
              "first; ratio: stock ÷ swapped of each pair, median [min-max].\n"
              "fill: %d build(s) per side; Gets: %d runs per side on one database (built by stock "
              "LevelDB), each %" PRIu64 " absent then %" PRIu64
              " present random Gets after %" PRIu64 " of each untimed\n",
              kKeys, built.bytes / 1e6, built.levels[0], built.levels[1], built.levels[2],
              directory, built.levels[0] + (built.levels[1] > 0) + (built.levels[2] > 0), core, fill_runs,
              get_runs, absent_gets, present_gets, warmup);
  if (built.levels[0] != kLevel0Files || built.levels[1] == 0 || built.levels[2] == 0)
    fail("the database is not in shape");
  Row fill{"build (Put + compaction)", 16, kKeys, {}, {}};
  Row absent{"Get absent keys", 16, absent_gets, {}, {}};
  Row present{"Get present keys", 16, present_gets, {}, {}};
  for (int run = 0; run < fill_runs; run++) {
    for (int side = 0; side < 2; side++) {
      bool swapped = (run + side) % 2 == 1;
      Build build;
      std::string db = std::string(directory) + "/fill";
      // The fill before left its tables to be written back to disk: not while this
      // one is timed.
      sync();
      if (!parse_build(run_child({self, "--db-child", db, "fill"}, swapped ? library : nullptr,
                                 core),
                       &build))
        return fail("a database fill failed");
      check_policy(build.policy, swapped, &reports);
      (swapped ? fill.ours : fill.leveldb).push_back(build.ns);
    }
  }
  std::string found_seen;
  for (int run = 0; run < get_runs; run++) {
    for (int side = 0; side < 2; side++) {
      bool swapped = (run + side) % 2 == 1;
      Gets gets;
      if (!parse_gets(run_child(get_args(self, shared, warmup, absent_gets, present_gets),
                                swapped ? library : nullptr, core),
                      &gets))
        return fail("a database run failed");
      check_policy(gets.policy, swapped, &reports);
      // Absent keys are never found, present ones always, and every run finds the
      // same values.
      if (gets.found.rfind("0/" + std::to_string(present_gets) + "/", 0) != 0)
        fail("database Gets found the wrong keys: " + gets.found);
      if (found_seen.empty()) found_seen = gets.found;
      if (gets.found != found_seen) fail("stock and swapped Gets differ");
      (swapped ? absent.ours : absent.leveldb).push_back(gets.absent);
      (swapped ? present.ours : present.leveldb).push_back(gets.present);
    }
  }
  if (!counters_only) {
    std::printf("%-26s %5s %9s  %-24s %-24s %s\n", "operation", "key", "keys", "swapped ns/key",
                "stock ns/key", "stock ÷ swapped");
    fill.print();
    absent.print();
    present.print();
  }
  counters(self, library, shared, directory, core, quick);
  leveldb::DestroyDB(shared, leveldb::Options());
  std::vector<std::string> files;
  leveldb::Env::Default()->GetChildren(directory, &files);
  for (const std::string& file : files)
    if (file != "." && file != "..") std::remove((std::string(directory) + "/" + file).c_str());
  rmdir(directory);
}

}  // namespace bench
