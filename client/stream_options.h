// Options the commands that talk to gmmscored share: the server address and transport security.
#pragma once

#include "absl/status/statusor.h"
#include "client/args.h"
#include "client/scorer_client.h"

namespace gmmscore {

// Adds --server, --plaintext, --ca-cert, --client-cert, --client-key, --server-name.
void AddChannelOptions(Args& args);
// The channel those options describe; --server is required.
absl::StatusOr<std::shared_ptr<grpc::Channel>> ChannelFromArgs(const Args& args);

}  // namespace gmmscore
