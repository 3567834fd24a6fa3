// CPU seconds (user + system) used by processes, for bench-stream's report of who was the limit.
#pragma once

#include <string>

namespace gmmscore {

// A process of this machine, from /proc/PID/stat; -1 where it cannot be read.
double ProcessCpuSeconds(const std::string& pid);
// This process.
double SelfCpuSeconds();
// This process's children that have been waited for.
double ChildrenCpuSeconds();

}  // namespace gmmscore
