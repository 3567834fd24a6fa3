// Log lines as Kaldi's tools print them on stderr ("LOG (program) what", "WARNING (program)
// what"), with numbers in an ostream's default formatting, so that scripts that grep Kaldi's logs
// (steps/*.sh look for "Overall avg like per frame", "Done N files") read ours.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>

namespace gmmscore {

template <typename T>
std::string KaldiNumber(T value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

inline void KaldiLog(std::FILE* log, const char* level, const std::string& program,
                     const std::string& what) {
  std::fprintf(log, "%s (%s) %s\n", level, program.c_str(), what.c_str());
}

}  // namespace gmmscore
