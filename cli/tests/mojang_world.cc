// Mojang's LevelDB (leveldb-mcpe, from the amulet-leveldb sdist, built by
// tests/reach/build-mojang-leveldb), writing and reading a Minecraft Bedrock world
// as Bedrock and Amulet open one: 160 KiB blocks, a 4 MiB write buffer, raw deflate
// first among the compressors (Mojang's id 4), zlib after it (id 2), and, for the
// tests of Mojang's other ids, zlib or zstd (id 3) first instead.
//
//   mojang_world write DIR none|bloom COMPRESSOR KEYS
//       COMPRESSOR: raw (Bedrock's), zlib or zstd. Writes KEYS chunk records (keys
//       as Bedrock's: x, z as little-endian int32, a record tag byte), compacts
//       them into tables, and closes.
//   mojang_world read DIR KEYS
//       Opens with NewBloomFilterPolicy(10) and every compressor, reads every key
//       and as many absent ones: prints "read: N present, M absent, W wrong".
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/zlib_compressor.h>
#ifdef ZSTD
#include <leveldb/zstd_compressor.h>
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// The key of chunk record `i`: Bedrock's chunk key, x and z then a tag byte.
std::string chunk_key(long i, bool absent) {
  int32_t x = static_cast<int32_t>(i % 211) - 105, z = static_cast<int32_t>(i / 211);
  char key[9];
  std::memcpy(key, &x, 4);
  std::memcpy(key + 4, &z, 4);
  key[8] = static_cast<char>(absent ? 0x7f : 0x2c + i % 3);  // SubChunkPrefix, ...
  return std::string(key, 9);
}

// A value that compresses as chunk data does: runs and some noise.
std::string chunk_value(long i) {
  std::string value(300 + i % 200, '\0');
  uint32_t state = static_cast<uint32_t>(i) * 2654435761u + 1;
  for (size_t j = 0; j < value.size(); j++) {
    if (j % 16 == 0) state = state * 1103515245u + 12345u;
    value[j] = static_cast<char>((state >> 24) & 0x0f);
  }
  return value;
}

void fail(const char* what, const leveldb::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: mojang_world write DIR none|bloom raw|zlib|zstd KEYS | read DIR KEYS\n");
    return 2;
  }
  const std::string mode = argv[1], dir = argv[2];
  const bool write = mode == "write";
  if (write && argc != 6) return 2;
  const long keys = std::atol(argv[write ? 5 : 3]);
  const std::string compressor = write ? argv[4] : "raw";

  leveldb::Options options;
  options.create_if_missing = write;
  options.write_buffer_size = 4 * 1024 * 1024;
  options.block_size = 163840;
  const leveldb::FilterPolicy* bloom = leveldb::NewBloomFilterPolicy(10);
  options.filter_policy = (!write || std::string(argv[3]) == "bloom") ? bloom : nullptr;
  // The reader looks a block's id up among the compressors, up to the first null.
  leveldb::ZlibCompressorRaw raw(-1);
  leveldb::ZlibCompressor zlib(-1);
  int next = 0;
#ifdef ZSTD
  leveldb::ZstdCompressor zstd(-1);
  if (compressor == "zstd") options.compressors[next++] = &zstd;
#else
  if (compressor == "zstd") {
    std::fprintf(stderr, "built without zstd\n");
    return 3;
  }
#endif
  if (compressor == "zlib") options.compressors[next++] = &zlib;
  options.compressors[next++] = &raw;
  if (compressor != "zlib") options.compressors[next++] = &zlib;
#ifdef ZSTD
  if (compressor != "zstd") options.compressors[next++] = &zstd;
#endif

  leveldb::DB* db = nullptr;
  leveldb::Status status = leveldb::DB::Open(options, dir, &db);
  if (!status.ok()) fail("open", status);
  if (write) {
    for (long i = 0; i < keys; i++) {
      status = db->Put(leveldb::WriteOptions(), chunk_key(i, false), chunk_value(i));
      if (!status.ok()) fail("put", status);
    }
    db->CompactRange(nullptr, nullptr);
  } else {
    long present = 0, absent = 0, wrong = 0;
    std::string value;
    for (long i = 0; i < keys; i++) {
      status = db->Get(leveldb::ReadOptions(), chunk_key(i, false), &value);
      if (status.ok() && value == chunk_value(i)) {
        present++;
      } else {
        wrong++;
      }
      status = db->Get(leveldb::ReadOptions(), chunk_key(i, true), &value);
      if (status.IsNotFound()) {
        absent++;
      } else {
        wrong++;
      }
    }
    std::printf("read: %ld present, %ld absent, %ld wrong\n", present, absent, wrong);
  }
  delete db;
  delete bloom;
  return 0;
}
