// Helpers shared by the libFuzzer targets of this folder (see fuzz/CMakeLists.txt).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace gmmscore::fuzz {

// A scratch directory of this process ($TMPDIR or /tmp), removed at exit.
inline const std::string& ScratchDir() {
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto* d = new std::string(std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                              "/gmmscore-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(*d);
    std::atexit([] { std::filesystem::remove_all(ScratchDir()); });
    return d;
  }();
  return *dir;
}

// Writes bytes to ScratchDir()/name (replacing it) and returns the path.
inline std::string WriteScratchFile(const std::string& name, std::string_view bytes) {
  const std::string path = ScratchDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();  // the harness is broken, not the code under test
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
  std::fclose(f);
  return path;
}

// Splits the input at each `separator` (multi-file inputs such as a Sphinx model directory).
inline std::vector<std::string_view> Split(std::string_view data, std::string_view separator) {
  std::vector<std::string_view> parts;
  size_t at = 0;
  for (size_t next; (next = data.find(separator, at)) != std::string_view::npos;
       at = next + separator.size()) {
    parts.push_back(data.substr(at, next - at));
  }
  parts.push_back(data.substr(at));
  return parts;
}

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace gmmscore::fuzz
