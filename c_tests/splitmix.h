// SplitMix64: the harnesses' deterministic generator, fixed seeds giving the same
// cases on every run and every CPU. Header-only, C++11.
#ifndef LEVELDB_BLOOM_TESTS_SPLITMIX_H
#define LEVELDB_BLOOM_TESTS_SPLITMIX_H

#include <cstddef>
#include <cstdint>

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n), n > 0 (the modulo bias is irrelevant here).
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
  unsigned char Byte() { return static_cast<unsigned char>(Next()); }
  bool OneIn(size_t n) { return Below(n) == 0; }

 private:
  uint64_t state_;
};

#endif
