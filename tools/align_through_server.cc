// `gmmscore align --server`: each utterance sent to a gmmscored's Align RPC with its features and
// graph (client/scorer_client.h), a batch of them in flight at once.
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "formats/kaldi_fst.h"
#include "loadgen/stream_options.h"
#include "proto/wire_codec.h"
#include "tools/align_command.h"
#include "tools/commands.h"

namespace gmmscore {
namespace {

void AddServerOptions(Args& args) {
  AddChannelOptions(args);
  args.Add({"parallel", "N", "with --server: Align calls in flight at once", "16"});
}

// The Aligner whose batch is `parallel` Align calls at once, one thread each.
class RemoteAligner final : public Aligner {
 public:
  RemoteAligner(const AlignOptions& options, std::shared_ptr<grpc::Channel> channel,
                std::string model, int32_t parallel)
      : options_(options),
        channel_(std::move(channel)),
        model_(std::move(model)),
        parallel_(parallel) {}

  AlignerBatchLimits batch_limits() const override { return {.utterances = parallel_}; }

  absl::StatusOr<std::vector<UtteranceAlignment>> Align(std::span<const UtteranceToAlign> batch,
                                                        bool posteriors) override {
    if (posteriors) return absl::UnimplementedError("a server's aligner sends no posteriors");
    std::vector<v1::AlignRequest> requests(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      auto graph = BinaryFst(*batch[i].graph, std::string(batch[i].key));
      if (!graph.ok()) return graph.status();
      requests[i] = Request(batch[i], *std::move(graph));
    }
    std::vector<UtteranceAlignment> results(batch.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < batch.size(); ++i) {
      threads.emplace_back(
          [this, &request = requests[i], &result = results[i]] { result = Call(request); });
    }
    for (std::thread& t : threads) t.join();
    return results;
  }

 private:
  v1::AlignRequest Request(const UtteranceToAlign& u, std::string graph) const {
    v1::AlignRequest r;
    r.set_utterance_id(std::string(u.key));
    r.set_model(model_);
    r.set_dim(u.feats->cols);
    wire::AppendFloat32(u.feats->data, r.mutable_features());
    r.set_graph(std::move(graph));
    r.set_beam(options_.beam);
    r.set_retry_beam(options_.retry_beam);
    r.set_transition_scale(options_.transition_scale);
    r.set_self_loop_scale(options_.self_loop_scale);
    r.set_acoustic_scale(options_.acoustic_scale);
    return r;
  }

  // FAILED_PRECONDITION is the server's "no path reached a final state": NotFound here, as the
  // aligners here say it.
  UtteranceAlignment Call(const v1::AlignRequest& request) const {
    UtteranceAlignment result;
    auto response = client::Align(channel_, request);
    if (!response.ok()) {
      const absl::Status& s = response.status();
      result.status =
          s.code() == absl::StatusCode::kFailedPrecondition ? absl::NotFoundError(s.message()) : s;
      return result;
    }
    result.transition_ids.assign(response->transition_ids().begin(),
                                 response->transition_ids().end());
    result.score = response->score();
    result.log_likelihood = result.score / options_.acoustic_scale;
    result.retried = response->retried();
    return result;
  }

  const AlignOptions options_;
  const std::shared_ptr<grpc::Channel> channel_;
  const std::string model_;
  const int32_t parallel_;
};

absl::StatusOr<std::unique_ptr<Aligner>> Connect(const Args& args, const AlignOptions& options,
                                                 const std::string& model_name) {
  auto calls = args.GetInt("parallel");
  if (!calls.ok() || *calls < 1) {
    return absl::InvalidArgumentError("--parallel must be a number >= 1");
  }
  auto channel = ChannelFromArgs(args);
  if (!channel.ok()) return channel.status();
  return std::make_unique<RemoteAligner>(options, *std::move(channel), model_name, int32_t(*calls));
}

constexpr AlignServerOption kThroughServer{&AddServerOptions, &Connect};

}  // namespace

int RunAlign(int argc, char** argv) {
  return RunAlignCommand(argc, argv, {.server = &kThroughServer, .fmllr = true});
}

}  // namespace gmmscore
