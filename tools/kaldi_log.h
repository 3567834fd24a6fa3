// Log lines as Kaldi's tools print them on stderr ("LOG (program) what", "WARNING (program)
// what"), with numbers in an ostream's default formatting, so that scripts that grep Kaldi's logs
// (steps/*.sh look for "Overall avg like per frame", "Done N files") read ours.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>

#include "cli/invocation.h"

namespace gmmscore {

template <typename T>
std::string KaldiNumber(T value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

// Under a Kaldi tool's name (cli/invocation.h) the lines carry that name, as Kaldi's do.
inline void KaldiLog(std::FILE* log, const char* level, const std::string& program,
                     const std::string& what) {
  const std::string& kaldi = KaldiToolName();
  std::fprintf(log, "%s (%s) %s\n", level, kaldi.empty() ? program.c_str() : kaldi.c_str(),
               what.c_str());
}

}  // namespace gmmscore
