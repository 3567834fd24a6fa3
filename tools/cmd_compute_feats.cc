// gmmscore compute-feats: Kaldi's compute-mfcc-feats (same arguments, options, defaults, log lines
// and exit status), with apply-cmvn and add-deltas folded in by --cmvn, --norm-vars,
// --delta-order and --delta-window, so that one command does what Kaldi's three do. Options may
// come from --config=FILE (Kaldi's conf syntax); the command line overrides the file.
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/invocation.h"
#include "feat/feature_table.h"
#include "feat/feature_window.h"
#include "feat/wave_reader.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore compute-feats";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }
void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

// compute-mfcc-feats' warnings, word for word.
class KaldiWordedNotes final : public FeatureTableNotes {
 public:
  explicit KaldiWordedNotes(std::string utt2spk) : utt2spk_(std::move(utt2spk)) {}
  void ChannelDefaulted(int32_t num_channels) override {
    Warn(absl::StrCat("Channel not specified but you have data with ", num_channels,
                      " channels; defaulting to zero"));
  }
  void NoSuchChannel(const std::string& key, int32_t num_channels, int32_t channel) override {
    Warn(absl::StrCat("File with id ", key, " has ", num_channels, " channels but you specified ",
                      "channel ", channel, ", producing no output."));
  }
  void TooShort(const std::string& key, double seconds) override {
    Warn(absl::StrCat("File: ", key, " is too short (", KaldiNumber(seconds),
                      " sec): producing no output."));
  }
  void Failed(const std::string& key, const absl::Status& why) override {
    Warn(absl::StrCat("Failed to compute features for utterance ", key, ": ", why.message()));
  }
  void NoSpeaker(const std::string& key) override {
    Warn(
        absl::StrCat("No speaker for utterance ", key, " in ", utt2spk_, ", producing no output."));
  }

 private:
  std::string utt2spk_;
};

}  // namespace

int RunComputeFeats(int argc, char** argv) {
  Args args("compute-feats",
            "[options...] WAV-RSPECIFIER FEATS-WSPECIFIER\n"
            "Creates MFCC feature files (Kaldi's compute-mfcc-feats), optionally with CMVN and\n"
            "deltas (apply-cmvn, add-deltas).\n"
            "e.g.: gmmscore compute-feats --config=conf/mfcc.conf --cmvn=utterance "
            "--delta-order=2 scp:wav.scp ark:feats.ark");
  for (const FrontEndOptionInfo& o : FrontEndOptionList()) {
    args.Add({o.name, o.value_name, o.help, o.default_value});
  }
  FeatureTableOptions table;
  std::string utt2spk_in, utt2dur_out, output_format = "kaldi";
  args.Register("channel", &table.channel,
                "channel to extract (-1: the first, with a warning if there are more)")
      .Register("min-duration", &table.min_duration, "skip utterances shorter than this (seconds)")
      .Register("subtract-mean", &table.subtract_mean,
                "subtract the mean of each feature dimension (per utterance)")
      .Register("vtln-warp", &table.vtln_warp, "VTLN warp factor")
      .Register("utt2spk", &utt2spk_in, "utterance-to-speaker map (for --cmvn=speaker)")
      .Register("write-utt2dur", &utt2dur_out, "write each utterance's duration in seconds")
      .Register("output-format", &output_format, "kaldi (the only format written)");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);

  // Defaults, then the config files, then the command line (cli/args.h reads --config).
  FrontEndOptions opts;
  for (const FrontEndOptionInfo& o : FrontEndOptionList()) {
    if (!args.Has(o.name)) continue;
    if (absl::Status s = SetFrontEndOption(o.name, args.Get(o.name), &opts); !s.ok()) {
      return Fail("compute-feats",
                  absl::Status(s.code(), absl::StrCat(args.Origin(o.name), s.message())));
    }
  }
  if (absl::Status s = opts.Validate(); !s.ok()) return Fail("compute-feats", s);
  if (output_format != "kaldi") {
    return Fail("compute-feats",
                absl::InvalidArgumentError(
                    absl::StrCat("--output-format ", output_format, ": only kaldi is written")));
  }
  std::map<std::string, std::string> utt2spk;
  if (opts.cmvn == CmvnMode::kSpeaker) {
    if (utt2spk_in.empty()) {
      return Fail("compute-feats", absl::InvalidArgumentError("--cmvn=speaker needs --utt2spk"));
    }
    auto map = ReadTokenMap(utt2spk_in);
    if (!map.ok()) return Fail("compute-feats", map.status());
    utt2spk = std::move(*map);
  }

  auto reader = WaveTableReader::Open(pos[0]);
  if (!reader.ok()) return Fail("compute-feats", reader.status());
  auto writer = MatrixTableWriter::Open(pos[1]);
  if (!writer.ok()) return Fail("compute-feats", writer.status());
  std::unique_ptr<FloatTableWriter> utt2dur;
  if (!utt2dur_out.empty()) {
    auto w = FloatTableWriter::Open(utt2dur_out);
    if (!w.ok()) return Fail("compute-feats", w.status());
    utt2dur = std::move(*w);
  }

  // Run as compute-mfcc-feats, the dither draws Kaldi's numbers, one rand() sequence over the
  // table as Kaldi's tool draws it, so that dithered features are Kaldi's too; as `gmmscore
  // compute-feats`, each utterance's own seeded noise (the same wherever it sits in a table).
  std::optional<KaldiDither> kaldi_dither;
  if (!KaldiToolName().empty()) kaldi_dither.emplace();
  KaldiWordedNotes notes(utt2spk_in);
  auto counts = ComputeFeatureTable(opts, table, std::move(utt2spk), **reader, **writer,
                                    utt2dur.get(), kaldi_dither ? &*kaldi_dither : nullptr, notes);
  if (!counts.ok()) return Fail("compute-feats", counts.status());
  if (absl::Status s = (*writer)->Close(); !s.ok()) return Fail("compute-feats", s);
  if (utt2dur) {
    if (absl::Status s = utt2dur->Close(); !s.ok()) return Fail("compute-feats", s);
  }
  Log(absl::StrCat(" Done ", counts->done, " out of ", counts->utterances, " utterances."));
  return counts->done != 0 ? 0 : 1;
}

}  // namespace gmmscore
