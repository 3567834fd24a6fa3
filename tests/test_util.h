// Helpers for tests: paths to shipped data, temporary files, reading whole tables.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "formats/matrix_table.h"

namespace gmmscore::testing {

// A sweep whose every step runs the same code (every context of a tree, say) checks every step in
// a plain build and every kSanitizedStride-th under a sanitizer (GMMSCORE_SANITIZED, set by
// tests/CMakeLists.txt), where a step costs a hundred times more: the sanitizers still see every
// line the sweep runs, and the plain build still checks every step.
#ifdef GMMSCORE_SANITIZED
inline constexpr int kSanitizedStride = 7;
#else
inline constexpr int kSanitizedStride = 1;
#endif

// The environment's GMMSCORE_TESTDATA where set (a test binary carried to another machine, as
// bench/cuda/device_run.sh does), else tests/data of the source tree the binary was built from.
inline std::string DataPath(const std::string& relative) {
  const char* from_environment = std::getenv("GMMSCORE_TESTDATA");
  return std::string(from_environment != nullptr ? from_environment : GMMSCORE_TESTDATA) + "/" +
         relative;
}

// Runs a shell command with its stderr to the file `log`; returns its exit status, or 128 + the
// signal that killed it (a crash is not an exit status).
inline int RunCommand(const std::string& command, const std::string& log) {
  const int status = std::system(("(" + command + ") 2>" + log).c_str());
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A fresh directory under the system temp folder, removed with the object.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("gmmscore-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  std::stringstream ss;
  ss << is.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  os << bytes;
}

// A text archive of int32 vectors ("KEY 2 6 5 ..." lines, as ali.txt), by key.
inline std::map<std::string, std::vector<int32_t>> ParseInt32Archive(const std::string& text) {
  std::map<std::string, std::vector<int32_t>> table;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    int32_t value = 0;
    while (words >> value) table[key].push_back(value);
  }
  return table;
}

inline std::map<std::string, Matrix> ReadTable(const std::string& rspecifier) {
  std::map<std::string, Matrix> table;
  auto reader = MatrixTableReader::Open(rspecifier);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return table;
  std::string key;
  Matrix m;
  while (true) {
    auto more = (*reader)->Next(&key, &m);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    table[key] = m;
  }
  return table;
}

}  // namespace gmmscore::testing
