// Names the calling thread, so that top -H, perf and /proc/PID/task/*/comm show which of a
// process's threads does what (Linux keeps the first 15 bytes; elsewhere nothing happens).
#pragma once

#include <string>

#ifdef __linux__
#include <pthread.h>
#endif

namespace gmmscore {

inline void NameThisThread(const std::string& name) {
#ifdef __linux__
  (void)pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
#else
  (void)name;
#endif
}

}  // namespace gmmscore
