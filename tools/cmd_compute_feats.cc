// gmmscore compute-feats: Kaldi's compute-mfcc-feats (same arguments, options, defaults, log lines
// and exit status), with apply-cmvn and add-deltas folded in by --cmvn, --norm-vars,
// --delta-order and --delta-window, so that one command does what Kaldi's three do. Options may
// come from --config=FILE (Kaldi's conf syntax); the command line overrides the file.
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "feat/compute_features.h"
#include "feat/feature_window.h"
#include "feat/wave_reader.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_table.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "cli/invocation.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore compute-feats";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }
void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

// Utterances waiting for the rest of their speaker (--cmvn=speaker), written in input order.
struct Pending {
  std::string key;
  std::string speaker;
  Matrix base;
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
  int32_t channel = -1;
  float min_duration = 0.0f, vtln_warp = 1.0f;
  bool subtract = false;
  std::string utt2spk_in, utt2dur_out, output_format = "kaldi";
  args.Register("channel", &channel,
                "channel to extract (-1: the first, with a warning if there are more)")
      .Register("min-duration", &min_duration, "skip utterances shorter than this (seconds)")
      .Register("subtract-mean", &subtract,
                "subtract the mean of each feature dimension (per utterance)")
      .Register("vtln-warp", &vtln_warp, "VTLN warp factor")
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
  // How many of each speaker's utterances are still to come.
  std::map<std::string, int64_t> remaining;
  for (const auto& [utt, spk] : utt2spk) ++remaining[spk];

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
  std::map<std::string, CmvnStats> speaker_stats;
  std::deque<Pending> pending;
  int64_t num_utts = 0, num_success = 0;
  // Writes the waiting utterances whose speakers are complete (all, at the end).
  auto flush = [&](bool all) -> absl::Status {
    while (!pending.empty() && (all || remaining[pending.front().speaker] == 0)) {
      Pending& p = pending.front();
      GMM_ASSIGN_OR_RETURN(const Matrix feats,
                           FinishFeatures(opts, std::move(p.base), speaker_stats[p.speaker]));
      GMM_RETURN_IF_ERROR((*writer)->Write(p.key, feats));
      pending.pop_front();
    }
    return absl::OkStatus();
  };

  std::string key;
  WaveData wave;
  while (true) {
    auto more = (*reader)->Next(&key, &wave);
    if (!more.ok()) return Fail("compute-feats", more.status());
    if (!*more) break;
    ++num_utts;
    const int32_t num_chan = static_cast<int32_t>(wave.channels.size());
    int32_t this_chan = channel;
    if (channel == -1) {
      this_chan = 0;
      if (num_chan != 1) {
        Warn(absl::StrCat("Channel not specified but you have data with ", num_chan,
                          " channels; defaulting to zero"));
      }
    } else if (this_chan < 0 || this_chan >= num_chan) {
      Warn(absl::StrCat("File with id ", key, " has ", num_chan, " channels but you specified ",
                        "channel ", channel, ", producing no output."));
      continue;
    }
    if (wave.duration_seconds() < min_duration) {
      Warn(absl::StrCat("File: ", key, " is too short (", KaldiNumber(wave.duration_seconds()),
                        " sec): producing no output."));
      continue;
    }
    auto base = ComputeBaseFeatures(opts, wave.channels[this_chan], wave.sample_rate, vtln_warp,
                                    key, kaldi_dither ? &*kaldi_dither : nullptr);
    if (!base.ok()) {
      Warn(absl::StrCat("Failed to compute features for utterance ", key, ": ",
                        base.status().message()));
      continue;
    }
    if (subtract && base->rows > 0) {
      CmvnStats stats(base->cols);
      stats.AddFrames(*base);
      ApplyCmvn(stats, /*norm_vars=*/false, &*base);
    }
    if (utt2dur) {
      if (absl::Status s = utt2dur->Write(key, static_cast<float>(wave.duration_seconds()));
          !s.ok()) {
        return Fail("compute-feats", s);
      }
    }
    std::string speaker = key;  // --cmvn=utterance: each utterance its own "speaker"
    if (opts.cmvn == CmvnMode::kSpeaker) {
      const auto it = utt2spk.find(key);
      if (it == utt2spk.end()) {
        Warn(absl::StrCat("No speaker for utterance ", key, " in ", args.Get("utt2spk"),
                          ", producing no output."));
        continue;
      }
      speaker = it->second;
      --remaining[speaker];
    }
    CmvnStats& stats = speaker_stats.try_emplace(speaker, base->cols).first->second;
    if (opts.cmvn == CmvnMode::kUtterance) stats = CmvnStats(base->cols);
    stats.AddFrames(*base);
    pending.push_back({key, speaker, std::move(*base)});
    if (absl::Status s = flush(false); !s.ok()) return Fail("compute-feats", s);
    if (opts.cmvn != CmvnMode::kSpeaker) speaker_stats.erase(speaker);
    ++num_success;
  }
  if (absl::Status s = flush(true); !s.ok()) return Fail("compute-feats", s);
  if (absl::Status s = (*writer)->Close(); !s.ok()) return Fail("compute-feats", s);
  if (utt2dur) {
    if (absl::Status s = utt2dur->Close(); !s.ok()) return Fail("compute-feats", s);
  }
  Log(absl::StrCat(" Done ", num_success, " out of ", num_utts, " utterances."));
  return num_success != 0 ? 0 : 1;
}

}  // namespace gmmscore
