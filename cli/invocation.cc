#include "cli/invocation.h"

#include <cstdio>
#include <exception>
#include <new>

namespace gmmscore {
namespace {

// Set once by main() and by option parsing, before any thread starts.
std::string& ToolName() {
  static std::string name;
  return name;
}
int verbose_level = 0;

}  // namespace

void SetKaldiToolName(std::string name) { ToolName() = std::move(name); }
const std::string& KaldiToolName() { return ToolName(); }
int RunGuarded(const std::string& command, int (*run)(int argc, char** argv), int argc,
               char** argv) {
  // The readers refuse what they cannot hold; should an allocation still fail, the command ends
  // with a message and Kaldi's error status, not an abort.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gmmscore %s: out of memory\n", command.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gmmscore %s: %s\n", command.c_str(), e.what());
  }
  return kErrorExitStatus;
}

void SetVerboseLevel(int level) { verbose_level = level; }
int VerboseLevel() { return verbose_level; }

}  // namespace gmmscore
