// The daemon's one clock, for deadlines, latencies and expiry: monotonic, never set back.
#pragma once

#include <chrono>

namespace gmmscore::server {

using Clock = std::chrono::steady_clock;

}  // namespace gmmscore::server
