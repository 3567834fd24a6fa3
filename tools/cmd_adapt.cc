// gmmscore adapt: Kaldi's gmm-adapt-map: MAP adaptation of a model's GMMs (train/map_update.h) to
// each utterance, or with --spk2utt to each speaker's utterances together, one adapted AmDiagGmm
// per utterance or speaker written to a table (formats/kaldi_am_table.h) that gmm-latgen-map
// reads. The same arguments, options, defaults, log lines and exit status (0 when at least one
// utterance was adapted to). As in gmm-adapt-map, the table is binary or text as its wspecifier
// says ("ark,t:" for text) whatever --binary is; --binary sets the mode of --model-out.
//
// Where it differs from gmm-adapt-map:
//  - Bad input Kaldi would die on or turn into NaN (features of another dimension, a value that
//    is not finite, a transition-id outside the model) ends the command with an error naming the
//    utterance.
//  - The likelihood in the last log line weights each frame's pdf log-likelihoods by their
//    posteriors; gmm-adapt-map adds them unweighted (the same for posteriors of weight 1, as from
//    alignments).
//  - --model-out (not a gmm-adapt-map option) writes, for a single speaker or utterance, the
//    input's transition model with the adapted GMMs: a whole model that every gmmscore command
//    loads.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
#include "formats/kaldi_am_table.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_lookup.h"
#include "formats/matrix_table.h"
#include "formats/table_entries.h"
#include "formats/table_specifier.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "train/accumulate.h"
#include "train/map_update.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore adapt";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }
void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

using PosteriorMap = absl::flat_hash_map<std::string, TransitionPosterior>;

// Every entry of the posterior table, by key (gmm-adapt-map reads them by random access).
absl::StatusOr<PosteriorMap> ReadPosteriors(const std::string& rspecifier) {
  auto reader = PosteriorTableReader::Open(rspecifier);
  if (!reader.ok()) return reader.status();
  PosteriorMap entries;
  std::string key;
  TransitionPosterior value;
  while (true) {
    auto more = (*reader)->Next(&key, &value);
    if (!more.ok()) return more.status();
    if (!*more) return entries;
    entries[key] = std::move(value);
  }
}

// The entries of a spk2utt table as Kaldi's SequentialTokenVectorReader gives them: per line
// "SPK UTT1 UTT2 ...", text only.
absl::StatusOr<bool> NextSpeaker(TableEntryReader& table, std::string* speaker,
                                 std::vector<std::string>* utterances) {
  auto more = table.Next(speaker);
  if (!more.ok() || !*more) return more;
  std::istream& is = table.object();
  if (is.peek() == '\0') {
    return absl::InvalidArgumentError(table.object_name() +
                                      ": a spk2utt table is text (\"SPK UTT1 UTT2 ...\" lines)");
  }
  std::string line;
  std::getline(is, line);  // "SPK" alone on its line: a speaker without utterances
  *utterances = absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
  return true;
}

// What a run adds up for its last log lines and exit status.
struct Totals {
  double like = 0.0;
  double frames = 0.0;
  double like_change = 0.0;
  int64_t done = 0;
  int64_t errors = 0;
};

class Adapter {
 public:
  Adapter(const GmmModel& model, const MapOptions& options, uint16_t flags,
          AmDiagGmmTableWriter& table, bool want_model)
      : model_(model),
        accumulator_(model),
        options_(options),
        flags_(flags),
        table_(table),
        want_model_(want_model) {}

  ModelStats NewStats() const { return ModelStats::ForModel(model_, flags_); }

  // Adds an utterance's frames to stats; returns whether it did. An utterance whose posteriors
  // are missing (the warning `missing` names it) or are of another length is counted as an error
  // and skipped; features or posteriors that do not fit the model are an error naming it.
  absl::StatusOr<bool> AddUtterance(const std::string& utt, const Matrix& feats,
                                    const PosteriorMap& posteriors, const std::string& missing,
                                    ModelStats* stats) {
    const auto it = posteriors.find(utt);
    if (it == posteriors.end()) {
      Warn(missing + utt);
      ++totals_.errors;
      return false;
    }
    if (it->second.size() != size_t(feats.rows)) {
      Warn("Posteriors has wrong size " + KaldiNumber(it->second.size()) + " vs. " +
           KaldiNumber(feats.rows) + " (utterance " + utt + ")");
      ++totals_.errors;
      return false;
    }
    double frames = 0.0;
    absl::StatusOr<double> like =
        accumulator_.AccumulatePosteriors(feats, it->second, stats, &frames);
    if (!like.ok()) {
      return absl::InvalidArgumentError("utterance " + utt + ": " +
                                        std::string(like.status().message()));
    }
    ++totals_.done;
    totals_.like += *like;
    totals_.frames += frames;
    return true;
  }

  // MAP-adapts the model to stats and writes it under key; `what` is "utterance" or "speaker".
  absl::Status Adapt(const std::string& what, const std::string& key, const ModelStats& stats) {
    MapSummary summary;
    absl::StatusOr<GmmModel> adapted = MapUpdate(options_, stats.gmm, flags_, model_, &summary);
    if (!adapted.ok()) {
      return absl::InvalidArgumentError(what + " " + key + ": " +
                                        std::string(adapted.status().message()));
    }
    Log("For " + what + " " + key + ", objective function change from MAP was " +
        KaldiNumber(summary.objective_change / summary.count) + " over " +
        KaldiNumber(summary.count) + " frames.");
    totals_.like_change += summary.objective_change;
    if (absl::Status s = table_.Write(key, *adapted); !s.ok()) return s;
    if (want_model_) {
      if (single_.has_value()) {
        return absl::InvalidArgumentError("--model-out takes a single " + what +
                                          "; the input has more (" + key + ")");
      }
      single_ = *std::move(adapted);
    }
    return absl::OkStatus();
  }

  const Totals& totals() const { return totals_; }
  // The one adapted model, for --model-out; nullopt where nothing was adapted.
  const std::optional<GmmModel>& single() const { return single_; }

 private:
  const GmmModel& model_;
  const GmmAccumulator accumulator_;
  const MapOptions options_;
  const uint16_t flags_;
  AmDiagGmmTableWriter& table_;
  const bool want_model_;
  Totals totals_;
  std::optional<GmmModel> single_;
};

// One model per speaker of the spk2utt table, from all of the speaker's utterances; a speaker
// none of whose utterances could be used gets the unadapted model, as in Kaldi. Features are
// looked up by key and handed out once (formats/matrix_lookup.h): an utterance listed a second
// time is reported as not found.
absl::Status AdaptPerSpeaker(const std::string& spk2utt, const std::string& feats_rspecifier,
                             const PosteriorMap& posteriors, Adapter& adapter) {
  absl::StatusOr<TableSpecifier> spec = ParseRspecifier(spk2utt);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<std::unique_ptr<TableEntryReader>> speakers = TableEntryReader::Open(*spec);
  if (!speakers.ok()) return speakers.status();
  absl::StatusOr<MatrixLookup> features = MatrixLookup::Open(feats_rspecifier);
  if (!features.ok()) return features.status();
  std::string speaker;
  std::vector<std::string> utterances;
  while (true) {
    absl::StatusOr<bool> more = NextSpeaker(**speakers, &speaker, &utterances);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    ModelStats stats = adapter.NewStats();
    for (const std::string& utt : utterances) {
      absl::StatusOr<std::optional<Matrix>> feats = features->Take(utt);
      if (!feats.ok()) return feats.status();
      if (!feats->has_value()) {
        Warn("Did not find features for utterance " + utt);
        continue;
      }
      absl::StatusOr<bool> added = adapter.AddUtterance(
          utt, **feats, posteriors, "Did not find posteriors for utterance ", &stats);
      if (!added.ok()) return added.status();
    }
    if (absl::Status s = adapter.Adapt("speaker", speaker, stats); !s.ok()) return s;
  }
}

// One model per utterance of the feature table that has posteriors.
absl::Status AdaptPerUtterance(const std::string& feats_rspecifier, const PosteriorMap& posteriors,
                               Adapter& adapter) {
  absl::StatusOr<std::unique_ptr<MatrixTableReader>> features =
      MatrixTableReader::Open(feats_rspecifier);
  if (!features.ok()) return features.status();
  std::string utt;
  Matrix feats;
  while (true) {
    absl::StatusOr<bool> more = (*features)->Next(&utt, &feats);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    ModelStats stats = adapter.NewStats();
    absl::StatusOr<bool> added = adapter.AddUtterance(
        utt, feats, posteriors, "Did not find aligned transcription for utterance ", &stats);
    if (!added.ok()) return added.status();
    if (!*added) continue;  // skipped with a warning
    if (absl::Status s = adapter.Adapt("utterance", utt, stats); !s.ok()) return s;
  }
}

}  // namespace

int RunAdapt(int argc, char** argv) {
  Args args("adapt",
            "[options] MODEL-IN FEATS-RSPEC POSTERIORS-RSPEC MAP-AM-WSPEC\n"
            "Computes MAP estimates of a model's GMMs per utterance (default) or per speaker\n"
            "(--spk2utt), written as a table of AmDiagGmm objects (Kaldi's gmm-adapt-map).\n"
            "e.g.: gmmscore adapt --spk2utt=ark:data/spk2utt final.mdl scp:feats.scp "
            "ark:post.ark ark:map.ark");
  std::string spk2utt;  // empty: per utterance
  bool binary = true;
  std::string update_flags = "mw";
  MapOptions options;
  std::string model_out;  // wxfilename; empty: none
  args.Register("spk2utt", &spk2utt, "rspecifier for speaker to utterance-list map")
      .Register("binary", &binary,
                "write --model-out in binary mode (the table is text only with an ark,t: "
                "wspecifier; gmm-adapt-map accepts --binary and ignores it)")
      .Register("update-flags", &update_flags,
                "which GMM parameters will be updated: subset of mvw")
      .Register("mean-tau", &options.mean_tau, "tau value for updating means")
      .Register("variance-tau", &options.variance_tau,
                "tau value for updating variances (only relevant if update-flags contains \"v\")")
      .Register("weight-tau", &options.weight_tau, "tau value for updating weights")
      .Register("model-out", &model_out,
                "also write the input's transition model with the adapted GMMs as a whole model "
                "(a single speaker or utterance only; not a gmm-adapt-map option)");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 4) return Usage(args);
  if (absl::Status s = CheckMapOptions(options); !s.ok()) return Fail("adapt", s);
  auto flags = ParseGmmFlags(update_flags);
  if (!flags.ok()) return Fail("adapt", flags.status());

  auto model = ReadKaldiModelFile(pos[0]);
  if (!model.ok()) return Fail("adapt", model.status());
  auto posteriors = ReadPosteriors(pos[2]);
  if (!posteriors.ok()) return Fail("adapt", posteriors.status());
  auto table = AmDiagGmmTableWriter::Open(pos[3]);
  if (!table.ok()) return Fail("adapt", table.status());

  Adapter adapter(*model, options, *flags, **table, !model_out.empty());
  const absl::Status adapted = !spk2utt.empty()
                                   ? AdaptPerSpeaker(spk2utt, pos[1], *posteriors, adapter)
                                   : AdaptPerUtterance(pos[1], *posteriors, adapter);
  if (!adapted.ok()) return Fail("adapt", adapted);
  if (absl::Status s = (*table)->Close(); !s.ok()) return Fail("adapt", s);
  if (!model_out.empty() && adapter.single().has_value()) {
    if (absl::Status s = WriteKaldiModelFile(*adapter.single(), model_out, binary); !s.ok()) {
      return Fail("adapt", s);
    }
  }
  const Totals& totals = adapter.totals();
  Log("Done " + KaldiNumber(totals.done) + " files, " + KaldiNumber(totals.errors) +
      " with errors");
  // "likelihod" is Kaldi's spelling; scripts that grep its logs look for it.
  Log("Overall acoustic likelihood was " + KaldiNumber(totals.like / totals.frames) +
      " and change in likelihod per frame was " + KaldiNumber(totals.like_change / totals.frames) +
      " over " + KaldiNumber(totals.frames) + " frames.");
  return totals.done != 0 ? 0 : 1;
}

}  // namespace gmmscore
