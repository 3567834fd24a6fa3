#include "loadgen/cpu_time.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace gmmscore {
namespace {

double Seconds(const rusage& r) {
  return double(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         1e-6 * double(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

}  // namespace

double ProcessCpuSeconds(const std::string& pid) {
  std::FILE* f = std::fopen(("/proc/" + pid + "/stat").c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // Fields after the command name (which may hold spaces) start after its closing parenthesis;
  // utime and stime are fields 14 and 15, the 12th and 13th after it.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return -1;
  std::vector<std::string> fields = absl::StrSplit(p + 2, ' ');
  if (fields.size() < 13) return -1;
  double utime = 0, stime = 0;
  if (!absl::SimpleAtod(fields[11], &utime) || !absl::SimpleAtod(fields[12], &stime)) return -1;
  return (utime + stime) / double(sysconf(_SC_CLK_TCK));
}

double SelfCpuSeconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return Seconds(r);
}

double ChildrenCpuSeconds() {
  rusage r{};
  getrusage(RUSAGE_CHILDREN, &r);
  return Seconds(r);
}

}  // namespace gmmscore
