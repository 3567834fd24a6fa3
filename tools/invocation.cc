#include "tools/invocation.h"

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
void SetVerboseLevel(int level) { verbose_level = level; }
int VerboseLevel() { return verbose_level; }

}  // namespace gmmscore
