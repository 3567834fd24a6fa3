// gmmscore health: asks a gmmscored's grpc.health.v1 service; exit 0 when SERVING. The
// container's HEALTHCHECK runs it.
#include <cstdio>

#include "tools/command_util.h"
#include "tools/commands.h"
#include "loadgen/stream_options.h"

namespace gmmscore {

int RunHealth(int argc, char** argv) {
  Args args("health", "--server HOST:PORT [--service NAME]");
  AddChannelOptions(args);
  std::string service;
  int32_t timeout_ms = 3000;
  args.Register("service", &service,
                "\"\" for the server, gmmscore.v1.Scorer, or gmmscore.v1.Scorer/MODEL")
      .Register("timeout-ms", &timeout_ms, "give up after this long");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  auto channel = ChannelFromArgs(args);
  if (!channel.ok()) return Fail("health", channel.status());
  const absl::Status s =
      client::CheckHealth(*channel, service, std::chrono::milliseconds(timeout_ms));
  if (!s.ok()) return Fail("health", s);
  std::printf("SERVING\n");
  return 0;
}

}  // namespace gmmscore
