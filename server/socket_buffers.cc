#include "server/socket_buffers.h"

#include <fstream>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gmmscore::server {
namespace {

std::optional<long> ReadNumber(const std::string& path) {
  std::ifstream in(path);
  long value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

}  // namespace

std::string UnixSocketBufferWarning(std::string_view listen, const std::string& proc_net_core) {
  if (!listen.starts_with("unix:")) return "";
  std::vector<std::string> small;
  for (const char* name : {"wmem_default", "rmem_default"}) {
    const std::optional<long> bytes = ReadNumber(absl::StrCat(proc_net_core, "/", name));
    if (bytes && *bytes < kUnixSocketBufferBytes)
      small.push_back(absl::StrCat("net.core.", name, " = ", *bytes));
  }
  if (small.empty()) return "";
  return absl::StrCat(
      "warning: Unix-domain sockets get the kernel's default buffers (", absl::StrJoin(small, ", "),
      " bytes): a ScoreStreams write of a few windows of 16-bit scores does not fit and its "
      "streams fall behind; raise them, e.g. sysctl -w net.core.wmem_default=4194304 "
      "net.core.rmem_default=4194304");
}

}  // namespace gmmscore::server
