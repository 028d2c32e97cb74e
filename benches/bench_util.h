// What benches/bench.cc (the filter calls and their floor) and benches/bench_db.cc
// (LevelDB databases, stock against swapped) share: clocks, random numbers, child
// processes, the summary of repeated runs and the failure flag.
#ifndef LEVELDB_BLOOM_BENCH_UTIL_H
#define LEVELDB_BLOOM_BENCH_UTIL_H

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace bench {

// Set by fail(): some output differed from LevelDB's (the bench then exits 1).
inline bool failed = false;

inline void fail(const std::string& what) {
  std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
  failed = true;
}

inline uint64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

inline uint64_t splitmix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

inline std::string summary(const std::vector<double>& values, const char* format) {
  char text[96];
  auto [low, high] = std::minmax_element(values.begin(), values.end());
  std::snprintf(text, sizeof text, format, median(values), *low, *high);
  return text;
}

// One line of a table: ns per key of each side over the repeated runs, the ratio
// LevelDB (or stock) ÷ ours (or swapped) of each pair of runs, and, when `floor` is
// set, our median ÷ the floor's.
struct Row {
  std::string operation;
  size_t key_length, n;
  std::vector<double> ours, leveldb;
  double floor = 0;

  void print() const {
    std::vector<double> ratios;
    for (size_t i = 0; i < ours.size(); i++) ratios.push_back(leveldb[i] / ours[i]);
    char size[32], over_floor[32] = "";
    std::snprintf(size, sizeof size, "%zu", n);
    if (floor > 0) std::snprintf(over_floor, sizeof over_floor, "%5.2f", median(ours) / floor);
    std::printf("%-26s %4zuB %9s  %-24s %-24s %-22s %s\n", operation.c_str(), key_length, size,
                summary(ours, "%7.2f [%.2f-%.2f]").c_str(),
                summary(leveldb, "%7.2f [%.2f-%.2f]").c_str(),
                summary(ratios, "%5.2fx [%.2f-%.2f]").c_str(), over_floor);
    std::fflush(stdout);
  }
};

// Runs `argv` (argv[0] is found as a shell would find it), with LD_PRELOAD=`preload` when it is
// not null, pinned to `core` when it is ≥ 0 and with its standard error discarded when
// `quiet`, and returns its standard output; "" when it fails to run or exits with a
// status other than 0.
inline std::string run_child(const std::vector<std::string>& argv, const char* preload, int core,
                             bool quiet = false) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "";
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    if (quiet) {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, 2);
    }
    if (core >= 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(core, &one);
      sched_setaffinity(0, sizeof one, &one);
    }
    if (preload != nullptr) setenv("LD_PRELOAD", preload, 1);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string output;
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) output.append(buffer, size_t(n));
  close(pipe_fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) return "";
  return output;
}

// The database part (bench_db.cc): `--db-child DIR MODE ...` runs in a child, and
// database() runs them all and prints their table; with `counters_only`, it builds the
// database and counts instructions per Get, and times nothing.
int db_child(int argc, char** argv);
void database(const char* self, const char* library, bool quick, bool counters_only);

}  // namespace bench

#endif
