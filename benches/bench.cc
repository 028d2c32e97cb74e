// `make bench`: this library against LevelDB's own bloom filter policy
// (leveldb::NewBloomFilterPolicy from the system's libleveldb), in one run.
//
//   leveldb_bloom_bench LIBRARY [--quick]
//
// LevelDB is linked in; our library is dlopen'ed with RTLD_LOCAL and called only
// through dlsym'd pointers, so neither can stand in for the other (the names they
// share resolve to LevelDB for everyone else), and the start of the output proves
// which object file each side's code lives in. Ours and LevelDB run alternately,
// in alternating order, several times; the table gives medians with min and max,
// and the ratio LevelDB ÷ ours (above 1: ours is faster) of each pair of runs.
// Every run's output is compared with LevelDB's: any difference fails the bench.
//
// The database part runs this program as a child, alternately stock and with
// LD_PRELOAD=LIBRARY (the swap), and compares their fills and their Gets.

#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/slice.h>
#include <leveldb/write_batch.h>
#include "../c_tests/load_ours.h"

#include <dlfcn.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

bool failed = false;

void fail(const std::string& what) {
  std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
  failed = true;
}

uint64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

uint64_t splitmix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

using load_ours::object_of;
using load_ours::object_of_class;
using load_ours::Ours;

// `count` distinct random keys of `length` bytes, stored one after another, in both
// forms: pointer and length arrays (ours) and Slices (LevelDB).
struct KeySet {
  std::vector<char> bytes;
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  std::vector<leveldb::Slice> slices;

  KeySet(size_t count, size_t length, uint64_t seed)
      : bytes(count * length), pointers(count), lengths(count, length), slices(count) {
    for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
      uint64_t word = splitmix(&seed);
      std::memcpy(&bytes[i], &word, 8);
    }
    for (size_t i = 0; i < count; i++) {
      pointers[i] = bytes.data() + i * length;
      slices[i] = leveldb::Slice(pointers[i], length);
    }
  }
  size_t size() const { return pointers.size(); }
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string summary(const std::vector<double>& values, const char* format) {
  char text[96];
  auto [low, high] = std::minmax_element(values.begin(), values.end());
  std::snprintf(text, sizeof text, format, median(values), *low, *high);
  return text;
}

// One line of the table: ns per key for each side over the repeated runs.
struct Row {
  std::string operation;
  size_t key_length, n;
  std::vector<double> ours, leveldb;

  void print() const {
    std::vector<double> ratios;
    for (size_t i = 0; i < ours.size(); i++) ratios.push_back(leveldb[i] / ours[i]);
    char size[32];
    std::snprintf(size, sizeof size, "%zu", n);
    std::printf("%-26s %4zuB %9s  %-22s %-22s %s\n", operation.c_str(), key_length, size,
                summary(ours, "%7.2f [%.2f-%.2f]").c_str(),
                summary(leveldb, "%7.2f [%.2f-%.2f]").c_str(),
                summary(ratios, "%5.2fx [%.2f-%.2f]").c_str());
    std::fflush(stdout);
  }
};

// Runs `ours` and `theirs` (each returns ns per key) alternately, in alternating
// order, after one untimed run of each, and checks each run with `check`.
template <typename A, typename B, typename C>
Row compare(std::string operation, size_t key_length, size_t n, int runs, A ours, B theirs,
            C check) {
  Row row{operation, key_length, n, {}, {}};
  ours();
  theirs();
  check();
  for (int run = 0; run < runs; run++) {
    if (run % 2 == 0) {
      row.ours.push_back(ours());
      row.leveldb.push_back(theirs());
    } else {
      row.leveldb.push_back(theirs());
      row.ours.push_back(ours());
    }
    check();
  }
  row.print();
  return row;
}

constexpr int kBitsPerKey = 10;
constexpr size_t kMinQueries = 1000000;  // per timed run, and distinct absent keys
constexpr size_t kBatch = 256;           // keys per batch call

struct Bench {
  Ours& ours;
  leveldb_filterpolicy_t* our_policy;
  const leveldb::FilterPolicy* leveldb_policy;
  int runs;

  void create_filter(const KeySet& keys, std::string* leveldb_filter) {
    std::string ours_filter;
    auto run_ours = [&] {
      size_t length = 0;
      uint64_t start = now_ns();
      char* filter = ours.create_filter(our_policy, keys.pointers.data(), keys.lengths.data(),
                                        int(keys.size()), &length);
      uint64_t end = now_ns();
      ours_filter.assign(filter, length);
      std::free(filter);
      return double(end - start) / keys.size();
    };
    auto run_leveldb = [&] {
      std::string filter;
      uint64_t start = now_ns();
      leveldb_policy->CreateFilter(keys.slices.data(), int(keys.size()), &filter);
      uint64_t end = now_ns();
      *leveldb_filter = std::move(filter);
      return double(end - start) / keys.size();
    };
    compare("create_filter", keys.lengths[0], keys.size(), runs, run_ours, run_leveldb, [&] {
      if (ours_filter != *leveldb_filter) fail("create_filter bytes differ");
    });
  }

  // One key per call, and ours in batches, against LevelDB one key per call.
  void key_may_match(const char* what, const KeySet& queries, size_t n,
                     const std::string& filter, bool present) {
    const size_t passes = std::max<size_t>(1, (kMinQueries + queries.size() - 1) / queries.size());
    const size_t total = passes * queries.size();
    const leveldb::Slice filter_slice(filter);
    std::vector<uint8_t> expected(queries.size()), got(queries.size());
    auto run_leveldb = [&] {
      uint64_t start = now_ns();
      for (size_t pass = 0; pass < passes; pass++)
        for (size_t i = 0; i < queries.size(); i++)
          expected[i] = leveldb_policy->KeyMayMatch(queries.slices[i], filter_slice);
      return double(now_ns() - start) / total;
    };
    auto run_single = [&] {
      uint64_t start = now_ns();
      for (size_t pass = 0; pass < passes; pass++)
        for (size_t i = 0; i < queries.size(); i++)
          got[i] = ours.key_may_match(our_policy, queries.pointers[i], queries.lengths[i],
                                      filter.data(), filter.size());
      return double(now_ns() - start) / total;
    };
    auto run_batch = [&] {
      uint64_t start = now_ns();
      for (size_t pass = 0; pass < passes; pass++)
        for (size_t i = 0; i < queries.size(); i += kBatch)
          ours.key_may_match_batch(our_policy, &queries.pointers[i], &queries.lengths[i],
                                   std::min(kBatch, queries.size() - i), filter.data(),
                                   filter.size(), &got[i]);
      return double(now_ns() - start) / total;
    };
    auto check = [&](const char* path) {
      return [&, path] {
        if (got != expected) fail(std::string(path) + " " + what + " answers differ");
        if (present && std::count(expected.begin(), expected.end(), 0) != 0)
          fail(std::string("a false negative in ") + what);
        std::fill(got.begin(), got.end(), 2);
      };
    };
    size_t length = queries.lengths[0];
    compare(std::string("key_may_match ") + what, length, n, runs, run_single, run_leveldb,
            check("one key per call:"));
    compare(std::string("batch ") + what, length, n, runs, run_batch, run_leveldb,
            check("batch:"));
  }

  void all(size_t key_length, size_t n, const KeySet& absent) {
    KeySet keys(n, key_length, 0x5eed0000 + n + key_length);
    std::string filter;
    create_filter(keys, &filter);
    key_may_match("present", keys, n, filter, true);
    key_may_match("absent", absent, n, filter, false);
  }
};

// ---- the database: stock against swapped, one child process per run ----
//
// Fill runs each build a fresh database (stock or swapped) and time the Puts and
// compaction. Get runs all read one database, built once by a stock child (its
// filters are byte-identical to the swap's, which is the point of the swap), so that
// many short alternated runs compare the Gets alone: each child is pinned to one
// core, warms up untimed, then times its Gets; pairs alternate which side goes first.

constexpr size_t kDbKeys = 200000;
constexpr size_t kDbGets = 200000;       // per timed pass (present, then absent)
constexpr size_t kDbWarmupGets = 50000;  // untimed, of each kind, before them

void db_key(uint64_t i, char key[17]) {
  uint64_t state = i;
  std::snprintf(key, 17, "%016llx", static_cast<unsigned long long>(splitmix(&state)));
}

// `--db-child DIR fill|build|get`: fill times filling a fresh database and removes it;
// build fills one and keeps it; get opens the one at DIR. All then Get present and
// absent keys in random order, and print the timings, a digest of what the Gets
// found, and where the policy in use lives.
int db_child(const char* directory, const char* mode) {
  typedef int (*SwapStatus)(void);
  SwapStatus swap_status =
      reinterpret_cast<SwapStatus>(dlsym(RTLD_DEFAULT, "leveldb_bloom_swap_status"));
  const leveldb::FilterPolicy* policy = leveldb::NewBloomFilterPolicy(kBitsPerKey);
  bool fresh = std::strcmp(mode, "get") != 0;
  leveldb::Options options;
  options.create_if_missing = fresh;
  options.error_if_exists = fresh;
  options.filter_policy = policy;
  leveldb::DB* db = nullptr;
  leveldb::Status status = leveldb::DB::Open(options, directory, &db);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 2;
  }
  char key[17];
  double fill = 0;
  if (fresh) {
    std::string value(100, 'v');
    uint64_t start = now_ns();
    for (size_t i = 0; i < kDbKeys; i++) {
      db_key(i, key);
      std::memcpy(&value[0], key, 16);
      db->Put(leveldb::WriteOptions(), leveldb::Slice(key, 16), value);
    }
    db->CompactRange(nullptr, nullptr);
    fill = double(now_ns() - start) / kDbKeys;
  }

  uint64_t found = 0, digest = 0;
  std::string got;
  auto gets = [&](uint64_t seed, size_t count, uint64_t first, uint64_t range) {
    uint64_t begin = now_ns();
    for (size_t i = 0; i < count; i++) {
      db_key(first + splitmix(&seed) % range, key);
      if (db->Get(leveldb::ReadOptions(), leveldb::Slice(key, 16), &got).ok()) {
        found++;
        digest = digest * 31 + std::hash<std::string>()(got);
      }
    }
    return double(now_ns() - begin) / count;
  };
  const uint64_t absent_keys = uint64_t(1) << 40;
  if (!fresh) {
    gets(7, kDbWarmupGets, 0, kDbKeys);
    gets(7, kDbWarmupGets, absent_keys, kDbKeys);
    found = digest = 0;
  }
  double present = gets(42, kDbGets, 0, kDbKeys);
  uint64_t found_present = found;
  double absent = gets(43, kDbGets, absent_keys, kDbKeys);
  std::printf("%.1f %.1f %.1f %llu %llu %llx %d %s\n", fill, present, absent,
              static_cast<unsigned long long>(found_present),
              static_cast<unsigned long long>(found - found_present),
              static_cast<unsigned long long>(digest), swap_status ? swap_status() : -1,
              object_of(reinterpret_cast<const void*>(&leveldb::NewBloomFilterPolicy)).c_str());
  delete db;
  if (std::strcmp(mode, "fill") == 0) leveldb::DestroyDB(directory, leveldb::Options());
  delete policy;
  return 0;
}

// The core every database child runs on: the last one this process may use.
int bench_core() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
  for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
    if (CPU_ISSET(cpu, &allowed)) return cpu;
  return -1;
}

// Runs `self --db-child db mode`, stock or swapped, pinned to `core` (if ≥ 0), and
// returns what it printed ("" if it failed).
std::string run_child(const char* self, const char* library, bool swapped, const std::string& db,
                      const char* mode, int core) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    if (core >= 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(core, &one);
      sched_setaffinity(0, sizeof one, &one);
    }
    if (swapped) setenv("LD_PRELOAD", library, 1);
    execl(self, self, "--db-child", db.c_str(), mode, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string output;
  char buffer[512];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) output.append(buffer, size_t(n));
  close(pipe_fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) return "";
  return output;
}

// What a database child reported.
struct DbRun {
  double fill, present, absent;
};

// Parses and checks a child's report: the right policy, the right keys found, and
// the same Gets as every other run. `reports` counts the runs so far.
bool check_db_run(const std::string& output, bool swapped, std::string* digest_seen, int* reports,
                  DbRun* run) {
  unsigned long long found_present, found_absent, digest;
  int swap;
  char where[4096];
  if (std::sscanf(output.c_str(), "%lf %lf %lf %llu %llu %llx %d %4095s", &run->fill,
                  &run->present, &run->absent, &found_present, &found_absent, &digest, &swap,
                  where) != 8) {
    fail("a database run failed");
    return false;
  }
  // The stock run must use LevelDB's policy, the swapped run ours.
  bool ours = std::strstr(where, "libleveldb_bloom") != nullptr;
  if (swapped != ours || (swapped && !(swap & LEVELDB_BLOOM_SWAP_CXX_API)) ||
      (!swapped && swap != -1))
    fail(std::string("database run used the wrong policy: ") + where);
  if (found_present != kDbGets || found_absent != 0) fail("database Gets found the wrong keys");
  char text[64];
  std::snprintf(text, sizeof text, "%llu/%llu/%llx", found_present, found_absent, digest);
  if (digest_seen->empty()) *digest_seen = text;
  if (*digest_seen != text) fail("stock and swapped Gets differ");
  if (*reports < 2)
    std::printf("  policy of the %s run: %s (swap status %d)\n", swapped ? "swapped" : "stock",
                where, swap);
  ++*reports;
  return true;
}

void database(const char* self, const char* library, int fill_runs, int get_runs) {
  int core = bench_core();
  std::printf("\nLevelDB database, %zu keys of 16 bytes with 100-byte values; %d fills each, "
              "then %zu random Gets of each kind in each of %d runs per side on one database, "
              "each run a child process pinned to core %d; stock LevelDB against the swap "
              "(LD_PRELOAD): ns per key, and stock ÷ swapped\n",
              kDbKeys, fill_runs, kDbGets, get_runs, core);
  char directory[] = "/tmp/leveldb_bloom_bench_XXXXXX";
  if (mkdtemp(directory) == nullptr) return fail("no temporary directory");
  Row fill{"fill (Put + compaction)", 16, kDbKeys, {}, {}};
  Row present{"Get present keys", 16, kDbGets, {}, {}};
  Row absent{"Get absent keys", 16, kDbGets, {}, {}};
  std::string digest_seen;
  int reports = 0;
  // "ours" column = swapped, "LevelDB" column = stock; pairs alternate who goes first.
  for (int run = 0; run < fill_runs; run++) {
    for (int side = 0; side < 2; side++) {
      bool swapped = (run + side) % 2 == 1;
      DbRun r;
      std::string db = std::string(directory) + "/fill";
      if (!check_db_run(run_child(self, library, swapped, db, "fill", core), swapped, &digest_seen,
                        &reports, &r))
        return;
      (swapped ? fill.ours : fill.leveldb).push_back(r.fill);
    }
  }
  std::string shared = std::string(directory) + "/shared";
  DbRun built;
  if (!check_db_run(run_child(self, library, false, shared, "build", core), false, &digest_seen,
                    &reports, &built))
    return;
  for (int run = 0; run < get_runs; run++) {
    for (int side = 0; side < 2; side++) {
      bool swapped = (run + side) % 2 == 1;
      DbRun r;
      if (!check_db_run(run_child(self, library, swapped, shared, "get", core), swapped,
                        &digest_seen, &reports, &r))
        return;
      (swapped ? present.ours : present.leveldb).push_back(r.present);
      (swapped ? absent.ours : absent.leveldb).push_back(r.absent);
    }
  }
  leveldb::DestroyDB(shared, leveldb::Options());
  rmdir(directory);
  std::printf("%-26s %5s %9s  %-22s %-22s %s\n", "operation", "key", "keys", "swapped ns/key",
              "stock ns/key", "stock ÷ swapped");
  fill.print();
  present.print();
  absent.print();
}

void print_machine() {
  char line[256];
  std::string model = "?";
  if (FILE* cpu = std::fopen("/proc/cpuinfo", "r")) {
    while (std::fgets(line, sizeof line, cpu))
      if (std::strncmp(line, "model name", 10) == 0) {
        model = std::strchr(line, ':') + 2;
        model.erase(model.find_last_not_of("\n") + 1);
        break;
      }
    std::fclose(cpu);
  }
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("machine: %s, %ld cores online, load average %.2f at start\n", model.c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), load[0]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--db-child") == 0) return db_child(argv[2], argv[3]);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LIBRARY [--quick]\n", argv[0]);
    return 2;
  }
  const char* library = argv[1];
  bool quick = argc > 2 && std::strcmp(argv[2], "--quick") == 0;
  Ours ours(library);
  const leveldb::FilterPolicy* leveldb_policy = leveldb::NewBloomFilterPolicy(kBitsPerKey);
  leveldb_filterpolicy_t* our_policy = ours.policy_create(kBitsPerKey);

  print_machine();
  // Proof of who is who: where each side's code lives.
  std::printf("ours:    %s (SIMD level %s)\n",
              object_of(reinterpret_cast<const void*>(ours.key_may_match)).c_str(),
              ours.simd_level());
  std::printf("LevelDB: %s (policy %s)\n",
              object_of_class(leveldb_policy).c_str(),
              leveldb_policy->Name());
  if (object_of_class(leveldb_policy) ==
      object_of(reinterpret_cast<const void*>(ours.key_may_match)))
    fail("LevelDB's policy is ours");

  std::printf("\nbits_per_key %d; ns per key, median [min-max] of the runs; "
              "batch calls of %zu keys; absent sets of %zu distinct keys\n",
              kBitsPerKey, kBatch, kMinQueries);
  std::printf("%-26s %5s %9s  %-22s %-22s %s\n", "operation", "key", "n", "ours ns/key",
              "LevelDB ns/key", "LevelDB ÷ ours");
  std::vector<size_t> sizes = quick ? std::vector<size_t>{1000, 100000}
                                    : std::vector<size_t>{1000, 100000, 4000000};
  for (size_t key_length : {16, 100}) {
    KeySet absent(kMinQueries, key_length, 0xab5e47 + key_length);
    for (size_t n : sizes) {
      int runs = quick ? 3 : n >= 1000000 ? 5 : 9;
      Bench{ours, our_policy, leveldb_policy, runs}.all(key_length, n, absent);
    }
  }
  {
    // The handle registry after churn: more create/destroy cycles than it once had
    // slots (65,536); the one-key call looks its policy up every time.
    for (int i = 0; i < 100000; i++) ours.policy_destroy(ours.policy_create(kBitsPerKey));
    KeySet keys(1000, 16, 0x5eed0000 + 1000 + 16);
    std::string filter;
    leveldb_policy->CreateFilter(keys.slices.data(), int(keys.size()), &filter);
    Bench{ours, our_policy, leveldb_policy, quick ? 3 : 9}.key_may_match(
        "present, after 100k policy create/destroy", keys, keys.size(), filter, true);
  }
  database(argv[0], library, quick ? 1 : 3, quick ? 2 : 15);

  ours.policy_destroy(our_policy);
  delete leveldb_policy;
  if (failed) {
    std::printf("\nFAILED: outputs differ from LevelDB's (see above)\n");
    return 1;
  }
  std::printf("\nevery output above was identical to LevelDB's\n");
  return 0;
}
