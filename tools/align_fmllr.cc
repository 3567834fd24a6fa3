#include "tools/align_fmllr.h"

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "align/posteriors.h"
#include "feat/feature_transform.h"
#include "formats/kaldi_fst.h"
#include "formats/kaldi_model_copy.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_lookup.h"
#include "formats/matrix_table.h"
#include "formats/model_io.h"
#include "formats/table_by_key.h"
#include "formats/utterance_transforms.h"
#include "tools/kaldi_log.h"
#include "util/kaldi_random.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// A folder of its own under the system's temporary folder, removed with what is in it.
class TempFolder {
 public:
  static absl::StatusOr<TempFolder> Make() {
    std::error_code ec;
    std::string pattern =
        (std::filesystem::temp_directory_path(ec) / "gmmscore-align-fmllr-XXXXXX").string();
    if (ec || mkdtemp(pattern.data()) == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot make a temporary folder like ", pattern,
                       " (set TMPDIR to a folder with room for the features)"));
    }
    return TempFolder(pattern);
  }
  TempFolder(TempFolder&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  TempFolder(const TempFolder&) = delete;
  ~TempFolder() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  explicit TempFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// One pass of AlignTable: model, graphs and features from their specifiers.
absl::StatusOr<AlignTableSummary> AlignPass(const AlignOptions& options,
                                            const BackendRequest& request, const GmmModel& model,
                                            const std::string& graphs_in,
                                            const std::string& feats_in,
                                            const AlignTableOutputs& out,
                                            const std::string& program, std::FILE* log) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<FstTableReader> graphs, FstTableReader::Open(graphs_in));
  GMM_ASSIGN_OR_RETURN(MatrixLookup feats, MatrixLookup::Open(feats_in));
  GMM_ASSIGN_OR_RETURN(AlignBackend backend, MakeAlignBackend(request, model));
  const std::unique_ptr<Aligner> aligner = MakeAligner(options, model, backend);
  return AlignTable(options, *aligner, &model, graphs.get(), &feats, out, program, log);
}

// The alignment model and the model must share their pdfs (one tree, one GMM size per pdf).
absl::Status CheckSamePdfs(const KaldiStoredModel& alignment, const KaldiStoredModel& model) {
  if (alignment.pdfs.size() != model.pdfs.size() || alignment.dim != model.dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the alignment model has ", alignment.pdfs.size(), " pdfs of dimension ", alignment.dim,
        ", the model ", model.pdfs.size(), " of dimension ", model.dim));
  }
  for (size_t p = 0; p < model.pdfs.size(); ++p) {
    if (alignment.pdfs[p].num_gauss() != model.pdfs[p].num_gauss()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pdf ", p, " has ", alignment.pdfs[p].num_gauss(), " Gaussians in the alignment model, ",
          model.pdfs[p].num_gauss(), " in the model"));
    }
  }
  return absl::OkStatus();
}

// Pass 2's input: every utterance's features through its speaker's transform; utterances of no
// speaker or with no transform are left out (pass 2 then warns "No features for utterance").
absl::Status WriteAdaptedFeatures(const std::string& feats_in,
                                  const UtteranceTransforms& transforms,
                                  const std::string& feats_out) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader,
                       MatrixTableReader::Open(feats_in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer,
                       MatrixTableWriter::Open(feats_out));
  std::string utt;
  Matrix feats;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&utt, &feats));
    if (!more) break;
    const Matrix* transform = transforms.Find(utt);
    if (transform == nullptr) continue;
    auto adapted = ApplyFeatureTransform(*transform, feats);
    if (!adapted.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("utterance ", utt, ": ", adapted.status().message()));
    }
    GMM_RETURN_IF_ERROR(writer->Write(utt, *adapted));
  }
  return writer->Close();
}

}  // namespace

void AddFmllrAlignOptions(Args& args, FmllrAlignArgs* fmllr) {
  AlignFmllrOptions& o = fmllr->options;
  args.Register("fmllr", &fmllr->fmllr,
                "speaker-adapted alignment, as Kaldi's align_fmllr.sh: align with the alignment "
                "model, estimate an fMLLR transform per speaker, align the transformed features "
                "with MODEL (FEATS-RSPEC: the speaker-independent features)")
      .Register("spk2utt", &o.spk2utt, "with --fmllr: the speakers' utterances")
      .Register("alignment-model", &o.alignment_model,
                "with --fmllr: the first pass's model (final.alimdl; default: MODEL)")
      .Register("silence-phones", &fmllr->silence_phones,
                "with --fmllr: phones left out of the statistics (weighted by --silence-weight), "
                "e.g. the contents of lang/phones/silence.csl")
      .Register("silence-weight", &o.silence_weight, "with --fmllr: the weight of silence frames")
      .Register("fmllr-update-type", &fmllr->update_type,
                "with --fmllr: full, diag, offset or none")
      .Register("fmllr-min-count", &o.fmllr.min_count,
                "with --fmllr: fewer frames of a speaker keep the identity")
      .Register("fmllr-num-iters", &o.fmllr.num_iters,
                "with --fmllr: iterations of the full update")
      .Register("write-transforms", &o.transforms_out,
                "with --fmllr: also write the transforms by speaker");
}

absl::StatusOr<AlignFmllrOptions> FmllrAlignOptionsFrom(const FmllrAlignArgs& fmllr,
                                                        const AlignOptions& align) {
  AlignFmllrOptions options = fmllr.options;
  options.align = align;
  if (options.spk2utt.empty()) {
    return absl::InvalidArgumentError("--fmllr needs --spk2utt (the speakers' utterances)");
  }
  const std::string& silence = fmllr.silence_phones;
  for (const absl::string_view part : absl::StrSplit(silence, ':', absl::SkipEmpty())) {
    int32_t phone = 0;
    if (!absl::SimpleAtoi(part, &phone) || phone < 1) {
      return absl::InvalidArgumentError("--silence-phones: not a list of phones like 1:2:3: " +
                                        silence);
    }
    options.silence.insert(phone);
  }
  GMM_ASSIGN_OR_RETURN(options.fmllr.update, ParseFmllrUpdate(fmllr.update_type));
  if (options.fmllr.num_iters < 1) {
    return absl::InvalidArgumentError("--fmllr-num-iters must be 1 or more");
  }
  return options;
}

absl::StatusOr<AlignTableSummary> AlignTableWithFmllr(
    const AlignFmllrOptions& options, const BackendRequest& request, const std::string& model_path,
    const std::string& graphs_in, const std::string& feats_in, const AlignTableOutputs& out,
    const std::string& program, std::FILE* log) {
  if (options.spk2utt.empty()) {
    return absl::InvalidArgumentError("fMLLR alignment needs the speakers (--spk2utt)");
  }
  const std::string& alignment_path =
      options.alignment_model.empty() ? model_path : options.alignment_model;
  GMM_ASSIGN_OR_RETURN(const KaldiStoredModel model, ReadKaldiStoredModel(model_path, true, true));
  GMM_ASSIGN_OR_RETURN(const KaldiStoredModel alignment,
                       ReadKaldiStoredModel(alignment_path, true, true));
  GMM_RETURN_IF_ERROR(CheckSamePdfs(alignment, model));
  GMM_ASSIGN_OR_RETURN(TempFolder temp, TempFolder::Make());

  // Pass 1: the speaker-independent alignment.
  KaldiLog(log, "LOG", program, "fMLLR pass 1: aligning with " + alignment_path);
  {
    GMM_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(alignment_path));
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<Int32VectorTableWriter> ali,
                         Int32VectorTableWriter::Open("ark:" + temp.file("pass1.ali")));
    GMM_ASSIGN_OR_RETURN(const AlignTableSummary pass1,
                         AlignPass(options.align, request, loaded.model, graphs_in, feats_in,
                                   AlignTableOutputs{ali.get()}, program, log));
    GMM_RETURN_IF_ERROR(ali->Close());
    LogAlignSummary(pass1, program, log);
  }
  GMM_ASSIGN_OR_RETURN(const auto alignments,
                       (ReadTableByKey<Int32VectorTableReader, std::vector<int32_t>>(
                           "ark:" + temp.file("pass1.ali"))));

  // The transforms: Gaussian posteriors under the alignment model, statistics of the model.
  KaldiLog(log, "LOG", program, "fMLLR: estimating a transform per speaker");
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TokenVectorTableReader> speakers,
                       TokenVectorTableReader::Open(options.spk2utt));
  GMM_ASSIGN_OR_RETURN(MatrixLookup feats, MatrixLookup::Open(feats_in));
  std::unique_ptr<MatrixTableWriter> transforms_out;
  if (!options.transforms_out.empty()) {
    GMM_ASSIGN_OR_RETURN(transforms_out, MatrixTableWriter::Open(options.transforms_out));
  }
  std::map<std::string, Matrix> transforms;
  std::map<std::string, std::string> utt2spk;
  KaldiRandom unused;  // no --rand-prune
  double improvement = 0.0, frames = 0.0;
  std::string speaker;
  std::vector<std::string> utterances;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, speakers->Next(&speaker, &utterances));
    if (!more) break;
    FmllrStats stats(model.dim);
    for (const std::string& utt : utterances) {
      utt2spk[utt] = speaker;
      const auto ali = alignments.find(utt);
      if (ali == alignments.end()) continue;  // pass 1 warned
      GMM_ASSIGN_OR_RETURN(std::optional<Matrix> frames_in, feats.Take(utt));
      if (!frames_in) continue;
      Posterior posterior = AlignmentToPosterior(ali->second);
      WeightSilencePosterior(*alignment.hmm, options.silence, options.silence_weight, false,
                             &posterior);
      float like = 0.0f, weight = 0.0f;
      auto gpost =
          ToGaussPosteriors(alignment, *frames_in, posterior, 0.0f, &unused, &like, &weight);
      if (!gpost.ok()) {
        return absl::Status(gpost.status().code(),
                            absl::StrCat("utterance ", utt, ": ", gpost.status().message()));
      }
      for (size_t t = 0; t < gpost->size(); ++t) {
        for (const auto& [pdf, posteriors] : (*gpost)[t]) {
          stats.AccumulateFromPosteriors(model.pdfs[size_t(pdf)], frames_in->row(int32_t(t)),
                                         posteriors.data());
        }
      }
    }
    const FmllrEstimate estimate = EstimateFmllr(options.fmllr, stats);
    for (const std::string& line : estimate.log_lines) KaldiLog(log, "LOG", program, line);
    for (const std::string& warning : estimate.warnings) {
      KaldiLog(log, "WARNING", program, warning);
    }
    KaldiLog(
        log, "LOG", program,
        absl::StrCat("For speaker ", speaker, ", auxf-impr from fMLLR is ",
                     KaldiNumber(static_cast<float>(estimate.objective_change / estimate.count)),
                     ", over ", KaldiNumber(static_cast<float>(estimate.count)), " frames."));
    improvement += estimate.objective_change;
    frames += estimate.count;
    if (transforms_out) GMM_RETURN_IF_ERROR(transforms_out->Write(speaker, estimate.transform));
    transforms[speaker] = estimate.transform;
  }
  if (transforms_out) GMM_RETURN_IF_ERROR(transforms_out->Close());
  KaldiLog(log, "LOG", program,
           "Overall fMLLR auxf impr per frame is " +
               KaldiNumber(static_cast<float>(improvement / frames)) + " over " +
               KaldiNumber(frames) + " frames.");

  // Pass 2: the adapted features aligned with the model.
  GMM_RETURN_IF_ERROR(
      WriteAdaptedFeatures(feats_in, UtteranceTransforms(std::move(transforms), std::move(utt2spk)),
                           "ark:" + temp.file("adapted.ark")));
  KaldiLog(log, "LOG", program, "fMLLR pass 2: aligning the adapted features with " + model_path);
  GMM_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(model_path));
  return AlignPass(options.align, request, loaded.model, graphs_in,
                   "ark:" + temp.file("adapted.ark"), out, program, log);
}

}  // namespace gmmscore
