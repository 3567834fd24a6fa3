// A Unix-domain socket's buffers are the kernel's defaults, net.core.wmem_default and
// rmem_default (208 KB on common kernels), where TCP grows its own to megabytes. A ScoreStreams
// write of a few windows of 16-bit rows for thousands of states does not fit in 208 KB, and the
// streams of such a call fall behind (docs/PERFORMANCE.md, "Unix-domain sockets with room to
// write"). gmmscored says so when it listens on one.
#pragma once

#include <string>
#include <string_view>

namespace gmmscore::server {

// Socket buffers below this are too small for a Unix-socket ScoreStreams call.
inline constexpr long kUnixSocketBufferBytes = 1 << 20;

// For a unix: listen address whose default socket buffers (read from `proc_net_core`, e.g.
// /proc/sys/net/core/wmem_default) are below kUnixSocketBufferBytes, a warning that names them
// and the sysctl that raises them; otherwise (another address, buffers large enough, or files
// that cannot be read) empty.
std::string UnixSocketBufferWarning(std::string_view listen,
                                    const std::string& proc_net_core = "/proc/sys/net/core");

}  // namespace gmmscore::server
