// `gmmscore align` and Kaldi's gmm-align-compiled: one command. gmmscore's adds --server, which
// sends the alignment to a gmmscored (tools/align_through_server.cc), and --fmllr, speaker-adapted
// alignment in two passes (tools/align_fmllr.h); the Kaldi tool, built without the gRPC client so
// that it starts in milliseconds, has neither.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cli/args.h"
#include "tools/align_table.h"

namespace gmmscore {

struct AlignServerOption {
  // Adds --server and what reaching a server takes (transport security, calls in flight).
  void (*add_options)(Args& args);
  // The aligner that sends each utterance to the server the options name, to its model
  // `model_name`, with options.
  absl::StatusOr<std::unique_ptr<Aligner>> (*connect)(const Args& args, const AlignOptions& options,
                                                      const std::string& model_name);
};

// What `gmmscore align` adds to gmm-align-compiled.
struct AlignCommand {
  // --server and its options (MODEL then names the model on the server); null: none.
  const AlignServerOption* server = nullptr;
  // --fmllr and its options: align_fmllr.sh's two passes (tools/align_fmllr.h).
  bool fmllr = false;
};

int RunAlignCommand(int argc, char** argv, const AlignCommand& command);

}  // namespace gmmscore
