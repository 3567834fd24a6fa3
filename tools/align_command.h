// `gmmscore align` and Kaldi's gmm-align-compiled: one command. gmmscore's adds --server, which
// sends the alignment to a gmmscored (tools/align_through_server.h); the Kaldi tool, built without
// the gRPC client so that it starts in milliseconds, has no such option.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "tools/align_table.h"
#include "tools/args.h"

namespace gmmscore {

struct AlignServerOption {
  // Adds --server and what reaching a server takes (transport security, calls in flight).
  void (*add_options)(Args& args);
  // The aligner that sends each utterance to the server the options name, to its model
  // `model_name`; and how many utterances may be in flight at once.
  absl::StatusOr<RemoteAligner> (*connect)(const Args& args, const std::string& model_name,
                                           int32_t* parallel);
};

// Runs the command; with `server`, also --server and its options (MODEL then names the model on
// the server).
int RunAlignCommand(int argc, char** argv, const AlignServerOption* server);

}  // namespace gmmscore
