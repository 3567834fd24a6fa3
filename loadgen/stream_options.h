// Options the commands that talk to gmmscored share: the server address and transport security.
#pragma once

#include "absl/status/statusor.h"
#include "cli/args.h"
#include "client/scorer_client.h"

namespace gmmscore {

// Adds --server, --plaintext, --ca-cert, --client-cert, --client-key, --server-name.
void AddChannelOptions(Args& args);
// The channel those options describe; --server is required. own_connection: a TCP connection of
// its own, not shared with other channels to the same server.
absl::StatusOr<std::shared_ptr<grpc::Channel>> ChannelFromArgs(const Args& args,
                                                               bool own_connection = false);

}  // namespace gmmscore
