/* Replays fuzz inputs through bloom_fuzz.cc without a fuzzing engine: each argument
 * is a file or a directory of files, each file one input. `make test` runs this over
 * the committed corpus (fuzz/corpus), so every case the fuzzer kept is checked again
 * against LevelDB on every run. Prints how many inputs passed. */
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> inputs_in(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    std::perror(path.c_str());
    std::exit(2);
  }
  if (!S_ISDIR(info.st_mode)) return {path};
  std::vector<std::string> files;
  DIR* dir = opendir(path.c_str());
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') files.push_back(path + "/" + entry->d_name);
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  size_t replayed = 0;
  for (int i = 1; i < argc; i++) {
    for (const std::string& file : inputs_in(argv[i])) {
      std::ifstream stream(file, std::ios::binary);
      const std::vector<char> bytes{std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      replayed++;
    }
  }
  std::printf("replayed %zu inputs: all agree with LevelDB\n", replayed);
  return replayed > 0 ? 0 : 1;
}
