// gmmscore stream: `gmmscore score` through a gmmscored (tools/stream_table.h): the same bytes
// `gmmscore score` writes for the same models and features.
#include <cstdio>
#include <memory>
#include <vector>

#include "loadgen/stream_options.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/stream_table.h"

namespace gmmscore {
namespace {

v1::StreamConfig::Fusion ToProto(FusionRule rule) {
  switch (rule) {
    case FusionRule::kLogLinear:
      return v1::StreamConfig::LOG_LINEAR;
    case FusionRule::kLogAdd:
      return v1::StreamConfig::LOG_ADD;
    case FusionRule::kSelectBest:
      return v1::StreamConfig::SELECT;
    case FusionRule::kMax:
      break;
  }
  return v1::StreamConfig::MAX;
}

}  // namespace

int RunStream(int argc, char** argv) {
  Args args("stream",
            "--server HOST:PORT --model NAME (--feats RSPEC | --wav RSPEC --front-end NAME) "
            "--out WSPEC [options]");
  std::string feats, wav, front_end, out;
  FusionOptions fusion_options;
  int32_t window = 100;
  StreamTableOptions table_options;
  bool quiet = false;
  AddChannelOptions(args);
  args.Add({"model", "NAME", "model name on the server; several are fused", "", true})
      .Register("feats", &feats, "features: ark:F, ark,t:F, scp:F, htk:F, sphinx:F, ...")
      .Register("wav", &wav,
                "audio instead of features (scp:wav.scp, ark:F; first channel as 16-bit samples): "
                "the server computes the features")
      .Register("front-end", &front_end,
                "with --wav: the server's front end (gmmscored --front-end)")
      .Register("out", &out, "scores (frames x states): ark:F, ark,t:F, ark,scp:F,S, ark:-");
  AddFusionOptions(args, &fusion_options);
  args.Register("window", &window, "frames per response window; 0: the server's default")
      .Register("chunk-frames", &table_options.chunk_frames, "frames per message sent")
      .Register("parallel", &table_options.parallel, "utterances streamed at once")
      .Register("quiet", &quiet, "no progress or summary on stderr");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string> models = args.GetAll("model");
  if (models.empty() || feats.empty() == wav.empty() || out.empty() ||
      wav.empty() != front_end.empty()) {
    std::fprintf(stderr,
                 "gmmscore stream: --server, --model, --out and --feats (or --wav and "
                 "--front-end) are required\n%s",
                 args.Help().c_str());
    return 2;
  }
  auto fusion = FusionFromOptions(fusion_options);
  if (!fusion.ok()) return Fail("stream", fusion.status());
  if (table_options.chunk_frames < 1 || table_options.parallel < 1 || window < 0) {
    return Fail("stream", absl::InvalidArgumentError(
                              "--chunk-frames and --parallel must be >= 1, --window >= 0"));
  }
  v1::StreamConfig config;
  for (const std::string& m : models) config.add_models(m);
  config.set_fusion(ToProto(fusion->rule));
  config.set_select_window(fusion->select_window);
  config.set_window_frames(window);
  for (float w : fusion->weights) config.add_weights(w);
  auto channel = ChannelFromArgs(args);
  if (!channel.ok()) return Fail("stream", channel.status());
  std::unique_ptr<MatrixTableReader> features;
  std::unique_ptr<WaveTableReader> waves;
  if (!feats.empty()) {
    auto reader = MatrixTableReader::Open(feats);
    if (!reader.ok()) return Fail("stream", reader.status());
    features = std::move(*reader);
  } else {
    auto reader = WaveTableReader::Open(wav);
    if (!reader.ok()) return Fail("stream", reader.status());
    waves = std::move(*reader);
    config.mutable_audio()->set_front_end(front_end);
  }
  auto writer = MatrixTableWriter::Open(out);
  if (!writer.ok()) return Fail("stream", writer.status());
  auto summary = StreamTable(*channel, config, table_options, {features.get(), waves.get()},
                             writer->get(), quiet ? nullptr : stderr);
  if (!summary.ok()) return Fail("stream", summary.status());
  if (absl::Status s = (*writer)->Close(); !s.ok()) return Fail("stream", s);
  if (!quiet) {
    const double t = summary->seconds;
    std::fprintf(stderr,
                 "gmmscore stream: %lld utterances, %lld frames through %s -> %s\n"
                 "  %.3f s, real-time factor %.4f\n",
                 static_cast<long long>(summary->utterances),
                 static_cast<long long>(summary->frames), args.Get("server").c_str(),
                 (*writer)->description().c_str(), t,
                 summary->frames > 0 ? t / (double(summary->frames) / 100.0) : 0.0);
  }
  return 0;
}

}  // namespace gmmscore
