// gmmscore info: what a model holds.
#include <cstdio>

#include "formats/model_io.h"
#include "tools/command_util.h"
#include "tools/commands.h"

namespace gmmscore {

int RunInfo(int argc, char** argv) {
  Args args("info", "MODEL");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (args.positional().size() != 1) {
    std::fprintf(stderr, "%s", args.Help().c_str());
    return 2;
  }
  const std::string& path = args.positional()[0];
  auto loaded = LoadModel(path);
  if (!loaded.ok()) return Fail("info", loaded.status());
  const GmmModel& m = loaded->model;
  std::printf("model:            %s\n", path.c_str());
  std::printf("file format:      %s\n", ModelFormatName(loaded->file_format).c_str());
  std::printf("source format:    %s\n", m.source_format().c_str());
  std::printf("states:           %d\n", m.num_states());
  std::printf("Gaussians:        %lld total, %d min, %d max per state\n",
              static_cast<long long>(m.num_gauss()), m.min_gauss_per_state(),
              m.max_gauss_per_state());
  std::printf("dimension:        %d\n", m.dim());
  std::printf("bytes:            %lld (host, parameters and derived constants)\n",
              static_cast<long long>(m.host_bytes()));
  if (!m.state_names().empty()) {
    std::printf("state names:      %s ... %s\n", m.state_names().front().c_str(),
                m.state_names().back().c_str());
  }
  if (m.hmm().empty()) {
    std::printf("HMM:              none\n");
  } else {
    const TransitionModel& tm = m.hmm();
    std::printf(
        "HMM:              %zu phones, %zu topology entries, %d transition-states, "
        "%d transition-ids, %d pdfs\n",
        tm.topology().phones.size(), tm.topology().entries.size(), tm.NumTransitionStates(),
        tm.NumTransitionIds(), tm.NumPdfs());
  }
  return 0;
}

}  // namespace gmmscore
