// `gmmscore align --server`: each utterance sent to a gmmscored's Align RPC with its features and
// graph (client/scorer_client.h).
#include "absl/strings/str_cat.h"
#include "proto/wire_codec.h"
#include "tools/align_command.h"
#include "tools/commands.h"
#include "loadgen/stream_options.h"

namespace gmmscore {
namespace {

void AddServerOptions(Args& args) {
  AddChannelOptions(args);
  args.Add({"parallel", "N", "with --server: Align calls in flight at once", "16"});
}

absl::StatusOr<RemoteAligner> Connect(const Args& args, const std::string& model_name,
                                      int32_t* parallel) {
  auto calls = args.GetInt("parallel");
  if (!calls.ok() || *calls < 1) {
    return absl::InvalidArgumentError("--parallel must be a number >= 1");
  }
  *parallel = int32_t(*calls);
  auto channel = ChannelFromArgs(args);
  if (!channel.ok()) return channel.status();
  return RemoteAligner([channel = *std::move(channel), model_name](
                           const AlignOptions& options, const std::string& key,
                           const Matrix& features,
                           std::string graph) -> absl::StatusOr<RemoteAlignment> {
    v1::AlignRequest r;
    r.set_utterance_id(key);
    r.set_model(model_name);
    r.set_dim(features.cols);
    wire::AppendFloat32(features.data, r.mutable_features());
    r.set_graph(std::move(graph));
    r.set_beam(options.beam);
    r.set_retry_beam(options.retry_beam);
    r.set_transition_scale(options.transition_scale);
    r.set_self_loop_scale(options.self_loop_scale);
    r.set_acoustic_scale(options.acoustic_scale);
    auto response = client::Align(channel, r);
    if (!response.ok()) return response.status();
    return RemoteAlignment{{response->transition_ids().begin(), response->transition_ids().end()},
                           response->score(),
                           response->retried()};
  });
}

constexpr AlignServerOption kThroughServer{&AddServerOptions, &Connect};

}  // namespace

int RunAlign(int argc, char** argv) {
  return RunAlignCommand(argc, argv, {.server = &kThroughServer, .fmllr = true});
}

}  // namespace gmmscore
