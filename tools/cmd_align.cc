// gmmscore align and gmm-align-compiled (tools/align_command.h): Kaldi's gmm-align-compiled, same
// arguments, options, defaults, outputs and exit status, with the scoring on the fast CPU path or
// a GPU (--backend).
#include <cstdio>
#include <string>
#include <utility>

#include "align/align_utterance.h"
#include "formats/kaldi_fst.h"
#include "formats/kaldi_stream.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_lookup.h"
#include "formats/model_io.h"
#include "kernels/backend.h"
#include "tools/align_command.h"
#include "tools/align_fmllr.h"
#include "tools/align_table.h"
#include "tools/align_table_files.h"
#include "tools/command_util.h"
#include "tools/commands.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore align";

// The options that need the model here, refused with --server.
absl::Status CheckLocalOnly(bool remote, bool fmllr, const AlignTableFiles::Specifiers& files) {
  if (!remote) return absl::OkStatus();
  if (fmllr) return absl::InvalidArgumentError("--fmllr needs the models here: not with --server");
  for (const auto& [local_only, value] :
       {std::pair<const char*, const std::string*>{"write-per-frame-acoustic-loglikes",
                                                   &files.frame_loglikes},
        {"posteriors", &files.posteriors},
        {"ctm", &files.ctm}}) {
    if (!value->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", local_only, " needs the model here: not with --server"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int RunAlignCommand(int argc, char** argv, const AlignCommand& command) {
  const AlignServerOption* server = command.server;
  Args args(
      "align",
      absl::StrCat("[options] MODEL GRAPHS-RSPEC FEATS-RSPEC ALIGNMENTS-WSPEC [SCORES-WSPEC]\n",
                   server != nullptr
                       ? "(with --server, MODEL is the name of a model the server has loaded)\n"
                       : "",
                   "Aligns features to compiled training graphs, as Kaldi's gmm-align-compiled.\n"
                   "e.g.: gmmscore align --beam=10 --retry-beam=40 final.mdl ark:graphs.fsts "
                   "ark:feats.ark ark:1.ali"));
  AlignOptions options;
  AlignTableFiles::Specifiers files;
  // Scored on the CPU unless --backend says otherwise (BackendRequest's own default is auto, the
  // daemon's).
  BackendRequest request{.backend = "cpu", .program = kProgram};
  FmllrAlignArgs fmllr_args;
  args.Register("beam", &options.beam, "decoding beam used in alignment")
      .Register("retry-beam", &options.retry_beam,
                "decoding beam for the second try at alignment (0: none)")
      .Register("careful", &options.careful,
                "careful alignment: better at detecting alignment failure (a loop to the start "
                "of the graph)")
      .Register("transition-scale", &options.transition_scale,
                "transition-probability scale (relative to acoustics)")
      .Register("self-loop-scale", &options.self_loop_scale,
                "scale of self-loop versus non-self-loop log probabilities")
      .Register("acoustic-scale", &options.acoustic_scale,
                "scaling factor for acoustic likelihoods")
      .Register("write-per-frame-acoustic-loglikes", &files.frame_loglikes,
                "table of vectors: each utterance's acoustic log-likelihood per frame")
      .Register("posteriors", &files.posteriors,
                "also write each utterance's forward-backward posteriors over transition-ids "
                "(Kaldi's Posterior table, as gmm-acc-stats reads)")
      .Register("ctm", &files.ctm,
                "also write phone segments, as ali-to-phones --ctm-output: UTT 1 START DURATION "
                "PHONE (a file, - or '| command')")
      .Register("backend", &request.backend,
                "cpu, cuda or auto: where frames are scored and aligned (on a GPU the Viterbi is "
                "exact and batched: the beams do not prune)")
      .Register("devices", &request.devices,
                "GPUs for --backend cuda or auto: all, or numbers like 0")
      .Register("threads", &request.cpu_threads, "CPU threads, 0 for all");
  if (server != nullptr) server->add_options(args);
  if (command.fmllr) AddFmllrAlignOptions(args, &fmllr_args);
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (args.positional().size() < 4 || args.positional().size() > 5) return Usage(args);
  const std::vector<std::string>& pos = args.positional();

  if (absl::Status s = ValidateAlignOptions(options); !s.ok()) return Fail("align", s);

  const bool remote = server != nullptr && args.Has("server");
  const bool fmllr = fmllr_args.fmllr;  // an option only where command.fmllr
  if (absl::Status s = CheckLocalOnly(remote, fmllr, files); !s.ok()) return Fail("align", s);
  // The outputs, the same in every mode.
  files.alignments = pos[3];
  if (pos.size() == 5) files.scores = pos[4];
  auto opened = AlignTableFiles::Open(files);
  if (!opened.ok()) return Fail("align", opened.status());
  const AlignTableOutputs outputs = opened->outputs();

  absl::StatusOr<AlignTableSummary> summary;
  if (fmllr) {
    // Two passes over the graphs and features, by their specifiers.
    auto fmllr_options = FmllrAlignOptionsFrom(fmllr_args, options);
    if (!fmllr_options.ok()) return Fail("align", fmllr_options.status());
    summary = AlignTableWithFmllr(*fmllr_options, request, pos[0], pos[1], pos[2], outputs,
                                  kProgram, stderr);
  } else {
    auto graphs = FstTableReader::Open(pos[1]);
    if (!graphs.ok()) return Fail("align", graphs.status());
    auto feats = MatrixLookup::Open(pos[2]);
    if (!feats.ok()) return Fail("align", feats.status());
    if (remote) {  // MODEL names the model on the server
      auto aligner = server->connect(args, options, pos[0]);
      if (!aligner.ok()) return Fail("align", aligner.status());
      summary = AlignTable(options, **aligner, nullptr, graphs->get(), &*feats, outputs, kProgram,
                           stderr);
    } else {
      auto loaded = LoadModel(pos[0]);
      if (!loaded.ok()) return Fail("align", loaded.status());
      if (loaded->model.hmm().empty()) {
        return Fail("align",
                    absl::InvalidArgumentError(pos[0] + ": the model has no HMM to align with"));
      }
      auto backend = MakeAlignBackend(request, loaded->model);
      if (!backend.ok()) return Fail("align", backend.status());
      const std::unique_ptr<Aligner> aligner = MakeAligner(options, loaded->model, *backend);
      summary = AlignTable(options, *aligner, &loaded->model, graphs->get(), &*feats, outputs,
                           kProgram, stderr);
    }
  }
  if (!summary.ok()) return Fail("align", summary.status());
  if (absl::Status s = opened->Close(); !s.ok()) return Fail("align", s);
  LogAlignSummary(*summary, kProgram, stderr);
  return summary->done != 0 ? 0 : 1;
}

int RunGmmAlignCompiled(int argc, char** argv) { return RunAlignCommand(argc, argv, {}); }

}  // namespace gmmscore
