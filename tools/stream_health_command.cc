// gmmscore health: asks a gmmscored's grpc.health.v1 service; exit 0 when SERVING. The
// container's HEALTHCHECK runs it.
#include <cstdio>

#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/stream_options.h"

namespace gmmscore {

int RunHealth(int argc, char** argv) {
  Args args("health", "--server HOST:PORT [--service NAME]");
  AddChannelOptions(args);
  args.Add({"service", "NAME",
            "\"\" for the server, gmmscore.v1.Scorer, or gmmscore.v1.Scorer/MODEL", ""})
      .Add({"timeout-ms", "N", "give up after this long", "3000"});
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  auto timeout = args.GetInt("timeout-ms");
  if (!timeout.ok()) return Fail("health", timeout.status());
  auto channel = ChannelFromArgs(args);
  if (!channel.ok()) return Fail("health", channel.status());
  const absl::Status s =
      client::CheckHealth(*channel, args.Get("service"), std::chrono::milliseconds(*timeout));
  if (!s.ok()) return Fail("health", s);
  std::printf("SERVING\n");
  return 0;
}

}  // namespace gmmscore
