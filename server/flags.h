// gmmscored's command line (absl flags) into a ServerConfig.
#pragma once

#include "absl/status/statusor.h"
#include "server/config.h"

namespace gmmscore::server {

// Parses argv. Flags are spelled with dashes (--metrics-listen; underscores work too) and
// --model may be repeated. --help prints every flag with its default; the process then exits 0.
absl::StatusOr<ServerConfig> ParseFlags(int argc, char** argv);

}  // namespace gmmscore::server
