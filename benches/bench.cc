// `make bench`: this library against LevelDB's own bloom filter policy
// (leveldb::NewBloomFilterPolicy from the system's libleveldb), in one run.
//
//   leveldb_bloom_bench LIBRARY [--floor BENCH_FLOOR] [--quick] [--counters]
//
// LevelDB is linked in; our library is dlopen'ed with RTLD_LOCAL and called only
// through dlsym'd pointers, so neither can stand in for the other (the names they
// share resolve to LevelDB for everyone else), and the start of the output proves
// which object file each side's code lives in. Ours and LevelDB run alternately,
// in alternating order, several times; the table gives medians with min and max,
// and the ratio LevelDB ÷ ours (above 1: ours is faster) of each pair of runs.
// Every run's output is compared with LevelDB's: any difference fails the bench.
//
// The floor: BENCH_FLOOR (core/examples/bench_floor.rs, built by `make bench`) times,
// on the same keys and the same filter, LevelDB's hash alone, the hash and the
// setting of the probes' bits, and the hash and the probes of a query, in a tight
// loop of Rust with no call, check or allocation per key: the least this format
// costs on this CPU. Each of our rows gives our median ÷ that floor. It also times
// the hash's latency (each key's hash seeded with the one before), the shortest
// time from the start of any one-key call to its answer.
//
// The database part (bench_db.cc) runs this program as a child, alternately stock
// and with LD_PRELOAD=LIBRARY (the swap), and compares their builds and their Gets,
// then counts instructions per Get. `--counters` runs only that count (perf, else
// callgrind: a swapped KeyMayMatch's instructions beside LevelDB's own), timing nothing.

#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#include "../c_tests/load_ours.h"
#include "bench_util.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <thread>
#include <vector>

using namespace bench;

namespace {

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

// Runs `ours` and `theirs` (each returns ns per key) alternately, in alternating
// order, after one untimed run of each, and checks each run with `check`.
template <typename A, typename B, typename C>
Row compare(std::string operation, size_t key_length, size_t n, int runs, double floor, A ours,
            B theirs, C check) {
  Row row{operation, key_length, n, {}, {}, floor};
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
// Each timed run takes at least kMinQueries keys (and the absent sets hold that many
// distinct keys); a row has enough pairs of runs for about kKeysPerSide keys a side.
// Short runs, many pairs: a burst of load on a shared host then spoils a few pairs
// of a row, not a whole side of it, and the median of the pairs' ratios steps over
// them. Filters of kLargeN keys or more are out of cache: their absent keys are
// kLargeAbsent, so that the keys streamed evict the filter from cache as a long run
// of queries would, for both sides alike, and the one that runs second does not
// find it warmed by the first.
constexpr size_t kMinQueries = 100000;
constexpr size_t kLargeN = 1000000, kLargeAbsent = 1000000;
constexpr size_t kKeysPerSide = 5000000;
constexpr size_t kKeysPerSideQuick = 2000000;
constexpr size_t kBatch = 256;           // keys per batch call
constexpr int kFloorRuns = 9;            // at most, per key set

// The floor's times for one key set and its filter, in ns per key, one entry per run
// of BENCH_FLOOR: LevelDB's hash alone, and its latency (no two keys' hashes
// overlapping); hash and setting the probes' bits (a filter built); hash and probes
// of a query, for the set's keys and for the absent keys. Our rows are divided by the
// fastest run: the floor's runs are not alternated with anything, and a burst of
// load on the host during them must not make our rows look closer to the floor.
struct Floor {
  std::vector<double> hash, hash_latency, create, present, absent;
  double create_floor() const { return fastest(create); }
  double present_floor() const { return fastest(present); }
  double absent_floor() const { return fastest(absent); }
  static double fastest(const std::vector<double>& runs) {
    return runs.empty() ? 0 : *std::min_element(runs.begin(), runs.end());
  }
};

void write_u64(FILE* file, uint64_t value) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; i++) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  std::fwrite(bytes, 1, 8, file);
}

void write_keys(FILE* file, const KeySet& keys) {
  write_u64(file, keys.size());
  for (size_t length : keys.lengths) write_u64(file, length);
  for (size_t i = 0; i < keys.size(); i++) std::fwrite(keys.pointers[i], 1, keys.lengths[i], file);
}

// Writes the input BENCH_FLOOR reads (little-endian u64s: the queries per timed
// run, the filter's length and bytes, then the filter's keys and the absent keys,
// each as a count, the lengths and the bytes one after another), runs it `runs`
// times and checks its answers against LevelDB's.
Floor measure_floor(const std::string& floor_program, const KeySet& keys, const KeySet& absent,
                    const std::string& filter, const leveldb::FilterPolicy* leveldb_policy,
                    int runs) {
  Floor floor;
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/leveldb_bloom_floor_XXXXXX";
  int fd = mkstemp(&path[0]);
  FILE* file = fd >= 0 ? fdopen(fd, "wb") : nullptr;
  if (file == nullptr) {
    fail("no temporary file for the floor");
    return floor;
  }
  write_u64(file, kMinQueries);
  write_u64(file, filter.size());
  std::fwrite(filter.data(), 1, filter.size(), file);
  write_keys(file, keys);
  write_keys(file, absent);
  bool written = std::fflush(file) == 0 && !std::ferror(file);
  std::fclose(file);
  std::string output = written ? run_child({floor_program, path, std::to_string(runs)}, nullptr, -1)
                               : "";
  std::remove(path.c_str());
  // The floor's answers must be LevelDB's: every key of the set, and as many of the
  // absent keys as LevelDB's KeyMayMatch lets through.
  size_t expected_absent = 0;
  for (const leveldb::Slice& key : absent.slices)
    expected_absent += leveldb_policy->KeyMayMatch(key, filter);
  const char* line = output.c_str();
  for (int run = 0; run < runs; run++) {
    double hash, hash_latency, create, present, absent_ns;
    unsigned long long present_found, absent_found;
    int used = 0;
    if (std::sscanf(line, "run %lf %lf %lf %lf %lf %llu %llu\n%n", &hash, &hash_latency,
                    &create, &present, &absent_ns, &present_found, &absent_found,
                    &used) != 7) {
      fail("the floor program failed: " + output);
      return Floor{};
    }
    line += used;
    if (present_found != keys.size() || absent_found != expected_absent)
      fail("the floor's answers differ from LevelDB's");
    floor.hash.push_back(hash);
    floor.hash_latency.push_back(hash_latency);
    floor.create.push_back(create);
    floor.present.push_back(present);
    floor.absent.push_back(absent_ns);
  }
  auto print = [&](const char* what, const std::vector<double>& values) {
    std::printf("%-26s %4zuB %9zu  %s\n", what, keys.lengths[0], keys.size(),
                summary(values, "%7.2f [%.2f-%.2f]").c_str());
  };
  print("floor hash", floor.hash);
  print("floor hash latency", floor.hash_latency);
  print("floor hash+set probes", floor.create);
  print("floor hash+probes present", floor.present);
  print("floor hash+probes absent", floor.absent);
  return floor;
}

struct Bench {
  Ours& ours;
  leveldb_filterpolicy_t* our_policy;
  const leveldb::FilterPolicy* leveldb_policy;
  bool quick;
  Floor floor;

  // Pairs of runs for a row whose runs take `per_run` keys each: at least 3, and odd,
  // so that the median is one pair's.
  int runs(size_t per_run) const {
    size_t pairs = (quick ? kKeysPerSideQuick : kKeysPerSide) / per_run;
    return int(std::max<size_t>(3, pairs | 1));
  }

  // Builds are timed, like the queries, over passes of at least kMinQueries keys in
  // all (one build of 1,000 keys is a single 20 us call, too short to time alone);
  // each side releases every filter it builds, as LevelDB's table builder does.
  // Passes over `keys` for a timed run of at least kMinQueries keys.
  static size_t passes_over(const KeySet& keys) {
    return std::max<size_t>(1, (kMinQueries + keys.size() - 1) / keys.size());
  }

  // Our side of a create_filter row: ns per key of `passes` builds, the last one
  // kept in `*built`.
  auto ours_create(const KeySet& keys, size_t passes, std::string* built) {
    return [this, &keys, passes, built] {
      uint64_t start = now_ns();
      for (size_t pass = 0; pass < passes; pass++) {
        size_t length = 0;
        char* filter = ours.create_filter(our_policy, keys.pointers.data(), keys.lengths.data(),
                                          int(keys.size()), &length);
        if (pass + 1 == passes) built->assign(filter, length);
        std::free(filter);
      }
      return double(now_ns() - start) / (passes * keys.size());
    };
  }

  // Our side of a query row, one key per call: ns per key, answers in `*got`.
  auto ours_single(const KeySet& queries, size_t passes, const std::string& filter,
                   std::vector<uint8_t>* got) {
    return [this, &queries, passes, &filter, got] {
      uint64_t start = now_ns();
      for (size_t pass = 0; pass < passes; pass++)
        for (size_t i = 0; i < queries.size(); i++)
          (*got)[i] = ours.key_may_match(our_policy, queries.pointers[i], queries.lengths[i],
                                         filter.data(), filter.size());
      return double(now_ns() - start) / (passes * queries.size());
    };
  }

  // Our side of a query row, kBatch keys per call.
  auto ours_batch(const KeySet& queries, size_t passes, const std::string& filter,
                  std::vector<uint8_t>* got) {
    return [this, &queries, passes, &filter, got] {
      uint64_t start = now_ns();
      for (size_t pass = 0; pass < passes; pass++)
        for (size_t i = 0; i < queries.size(); i += kBatch)
          ours.key_may_match_batch(our_policy, &queries.pointers[i], &queries.lengths[i],
                                   std::min(kBatch, queries.size() - i), filter.data(),
                                   filter.size(), &(*got)[i]);
      return double(now_ns() - start) / (passes * queries.size());
    };
  }

  void create_filter(const KeySet& keys, std::string* leveldb_filter) {
    const size_t passes = passes_over(keys);
    std::string ours_filter;
    auto run_ours = ours_create(keys, passes, &ours_filter);
    auto run_leveldb = [&] {
      uint64_t start = now_ns();
      for (size_t pass = 0; pass < passes; pass++) {
        std::string filter;
        leveldb_policy->CreateFilter(keys.slices.data(), int(keys.size()), &filter);
        if (pass + 1 == passes) *leveldb_filter = std::move(filter);
      }
      return double(now_ns() - start) / (passes * keys.size());
    };
    compare("create_filter", keys.lengths[0], keys.size(), runs(passes * keys.size()),
            floor.create_floor(), run_ours, run_leveldb, [&] {
      if (ours_filter != *leveldb_filter) fail("create_filter bytes differ");
    });
  }

  // One key per call, and ours in batches, against LevelDB one key per call.
  void key_may_match(const char* what, const KeySet& queries, size_t n,
                     const std::string& filter, bool present) {
    const size_t passes = passes_over(queries);
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
    auto run_single = ours_single(queries, passes, filter, &got);
    auto run_batch = ours_batch(queries, passes, filter, &got);
    auto check = [&](const char* path) {
      return [&, path] {
        if (got != expected) fail(std::string(path) + " " + what + " answers differ");
        if (present && std::count(expected.begin(), expected.end(), 0) != 0)
          fail(std::string("a false negative in ") + what);
        std::fill(got.begin(), got.end(), 2);
      };
    };
    size_t length = queries.lengths[0];
    double to_floor = present ? floor.present_floor() : floor.absent_floor();
    compare(std::string("key_may_match ") + what, length, n, runs(total), to_floor, run_single,
            run_leveldb, check("one key per call:"));
    compare(std::string("batch ") + what, length, n, runs(total), to_floor, run_batch,
            run_leveldb, check("batch:"));
  }

  // `run` with filter statistics on against `run` with them off, alternated: the
  // cost of counting (ratio off ÷ on; 1.00 is free).
  template <typename Run>
  void counted(const std::string& operation, size_t key_length, size_t n, size_t keys_per_run,
               Run run) {
    auto on = [&] {
      ours.stats_enable(1);
      double ns = run();
      ours.stats_enable(0);
      return ns;
    };
    compare(operation, key_length, n, runs(keys_per_run), 0, on, run, [] {});
  }

  // The cost of filter statistics on building and querying `n` keys of
  // `key_length` bytes, one thread.
  void statistics(size_t key_length, size_t n, const KeySet& absent) {
    KeySet keys(n, key_length, 0x5eed0000 + n + key_length);
    std::string filter, built;
    leveldb_policy->CreateFilter(keys.slices.data(), int(keys.size()), &filter);
    std::vector<uint8_t> got(std::max(keys.size(), absent.size()));
    const size_t passes = passes_over(keys), absent_passes = passes_over(absent);
    counted("create_filter", key_length, n, passes * n, ours_create(keys, passes, &built));
    counted("key_may_match present", key_length, n, passes * n,
            ours_single(keys, passes, filter, &got));
    counted("key_may_match absent", key_length, n, absent_passes * absent.size(),
            ours_single(absent, absent_passes, filter, &got));
    counted("batch present", key_length, n, passes * n, ours_batch(keys, passes, filter, &got));
  }

  // The cost of filter statistics when `threads` threads query one filter at once,
  // one key per call: ns per key of each thread, the threads' slowest.
  void statistics_threads(int threads, size_t key_length, size_t n) {
    KeySet keys(n, key_length, 0x5eed0000 + n + key_length);
    std::string filter;
    leveldb_policy->CreateFilter(keys.slices.data(), int(keys.size()), &filter);
    const size_t passes = passes_over(keys);
    auto run = [&] {
      std::vector<double> ns(size_t(threads), 0);
      std::vector<std::thread> running;
      for (int t = 0; t < threads; t++)
        running.emplace_back([&, t] {
          std::vector<uint8_t> got(keys.size());
          ns[size_t(t)] = ours_single(keys, passes, filter, &got)();
        });
      for (std::thread& thread : running) thread.join();
      return *std::max_element(ns.begin(), ns.end());
    };
    counted("key_may_match present, " + std::to_string(threads) + " threads", key_length, n,
            passes * n, run);
  }

  // The floor, then every row, for `n` keys of `key_length` bytes; returns the floor.
  Floor all(size_t key_length, size_t n, const KeySet& absent, const std::string& floor_program) {
    KeySet keys(n, key_length, 0x5eed0000 + n + key_length);
    std::string filter;
    leveldb_policy->CreateFilter(keys.slices.data(), int(keys.size()), &filter);
    if (!floor_program.empty())
      floor = measure_floor(floor_program, keys, absent, filter, leveldb_policy,
                            std::min(runs(std::max(n, kMinQueries)), kFloorRuns));
    create_filter(keys, &filter);
    key_may_match("present", keys, n, filter, true);
    key_may_match("absent", absent, n, filter, false);
    return floor;
  }
};

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

// Every comparison of this library with LevelDB's policy in this process, and the
// statistics' cost: the tables before the database part.
void in_process(Ours& ours, leveldb_filterpolicy_t* our_policy,
                const leveldb::FilterPolicy* leveldb_policy, bool quick,
                const std::string& floor_program) {
  std::printf("\nbits_per_key %d; ns per key, median [min-max] of the runs; "
              "batch calls of %zu keys; absent sets of %zu distinct keys (%zu for n >= %zu)\n",
              kBitsPerKey, kBatch, kMinQueries, kLargeAbsent, kLargeN);
  if (floor_program.empty())
    std::printf("no floor (no --floor BENCH_FLOOR)\n");
  else
    std::printf("floor: %s (Rust, the crate's public API: hash::bloom_hash, "
                "BloomFilterPolicy::write_filter_of_hashes, Filter::may_contain) on the same "
                "keys and filter, up to %d runs;\n"
                "÷ floor: our median ÷ the floor's fastest run (hash + set probes for "
                "create_filter, hash + probes for the queries)\n",
                floor_program.c_str(), kFloorRuns);
  std::printf("%-26s %5s %9s  %-24s %-24s %-22s %s\n", "operation", "key", "n", "ours ns/key",
              "LevelDB ns/key", "LevelDB ÷ ours", "÷ floor");
  std::vector<size_t> sizes = quick ? std::vector<size_t>{1000, 100000}
                                    : std::vector<size_t>{1000, 100000, 4000000};
  std::map<std::pair<size_t, size_t>, Floor> floors;
  for (size_t key_length : {16, 100}) {
    KeySet absent(kMinQueries, key_length, 0xab5e47 + key_length);
    KeySet large_absent(quick ? 0 : kLargeAbsent, key_length, 0x1a76e + key_length);
    for (size_t n : sizes)
      floors[{key_length, n}] =
          Bench{ours, our_policy, leveldb_policy, quick, {}}.all(
              key_length, n, n >= kLargeN ? large_absent : absent, floor_program);
  }
  {
    // The handle registry after churn: more create/destroy cycles than it once had
    // slots (65,536); the one-key call looks its policy up every time. Same keys and
    // filter as the 16-byte, n = 1000 rows, so the same floor.
    for (int i = 0; i < 100000; i++) ours.policy_destroy(ours.policy_create(kBitsPerKey));
    KeySet keys(1000, 16, 0x5eed0000 + 1000 + 16);
    std::string filter;
    leveldb_policy->CreateFilter(keys.slices.data(), int(keys.size()), &filter);
    Bench{ours, our_policy, leveldb_policy, quick, floors[{16, 1000}]}.key_may_match(
        "present, after 100k policy create/destroy", keys, keys.size(), filter, true);
  }
  std::printf("\nfilter statistics (leveldb_bloom_stats_enable): ours with counting on "
              "against ours with it off, alternated; ratio off ÷ on (1.00: no cost)\n");
  std::printf("%-26s %5s %9s  %-24s %-24s %-22s\n", "operation", "key", "n", "on ns/key",
              "off ns/key", "off ÷ on");
  for (size_t key_length : {16, 100}) {
    KeySet absent(kMinQueries, key_length, 0xab5e47 + key_length);
    for (size_t n : {size_t(1000), size_t(100000)})
      Bench{ours, our_policy, leveldb_policy, quick, {}}.statistics(key_length, n, absent);
  }
  for (int threads : {1, 2, 4})
    Bench{ours, our_policy, leveldb_policy, quick, {}}.statistics_threads(threads, 16, 1000);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::strcmp(argv[1], "--db-child") == 0) return db_child(argc, argv);
  const char* library = nullptr;
  std::string floor_program;
  bool quick = false, counters_only = false, usage = false;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--counters") == 0)
      counters_only = true;
    else if (std::strcmp(argv[i], "--floor") == 0 && i + 1 < argc)
      floor_program = argv[++i];
    else if (library == nullptr && argv[i][0] != '-')
      library = argv[i];
    else
      usage = true;
  }
  if (library == nullptr || usage) {
    std::fprintf(stderr, "usage: %s LIBRARY [--floor BENCH_FLOOR] [--quick] [--counters]\n",
                 argv[0]);
    return 2;
  }
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

  if (!counters_only) in_process(ours, our_policy, leveldb_policy, quick, floor_program);
  database(argv[0], library, quick, counters_only);

  ours.policy_destroy(our_policy);
  delete leveldb_policy;
  if (failed) {
    std::printf("\nFAILED: outputs differ from LevelDB's (see above)\n");
    return 1;
  }
  std::printf("\nevery output above was identical to LevelDB's\n");
  return 0;
}
