// Kaldi's compile-train-graphs (run under that name): each utterance's training graph from its
// transcript, the tree, the model and the lexicon FST (align/training_graph_compiler.h), written as
// Kaldi writes them, so that train_mono.sh, align_si.sh and the aligners read ours.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "align/training_graph_compiler.h"
#include "formats/kaldi_fst.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_stream.h"
#include "formats/kaldi_tables.h"
#include "formats/kaldi_tree.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "compile-train-graphs";

// One FST in OpenFst's binary format (L.fst), from an rxfilename.
absl::StatusOr<AlignGraph> ReadLexiconFst(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  std::string bytes((std::istreambuf_iterator<char>(input->stream())),
                    std::istreambuf_iterator<char>());
  GMM_RETURN_IF_ERROR(input->Close());
  return ParseBinaryFst(bytes, input->name());
}

// Whitespace-separated integers (phones/disambig.int).
absl::StatusOr<std::vector<int32_t>> ReadIntegers(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  std::vector<int32_t> values;
  std::string token;
  while (input->stream() >> token) {
    int32_t value = 0;
    if (!absl::SimpleAtoi(token, &value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          input->name(), ": '", token, "' is not an integer (a list of disambiguation symbols)"));
    }
    values.push_back(value);
  }
  GMM_RETURN_IF_ERROR(input->Close());
  return values;
}

struct Counts {
  int64_t succeeded = 0;
  int64_t failed = 0;
};

absl::Status CompileTrainGraphs(const std::vector<std::string>& pos, const std::string& disambig_in,
                                const TrainingGraphOptions& options, Counts* counts) {
  GMM_ASSIGN_OR_RETURN(ContextDependency tree, ReadKaldiTreeFile(pos[0]));
  GMM_ASSIGN_OR_RETURN(TransitionModel model, ReadKaldiTransitionModelFile(pos[1]));
  GMM_ASSIGN_OR_RETURN(AlignGraph lexicon, ReadLexiconFst(pos[2]));
  std::vector<int32_t> disambig;
  if (!disambig_in.empty()) {
    auto read = ReadIntegers(disambig_in);
    if (!read.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("Could not read disambiguation symbols from ",
                                                     disambig_in, ": ", read.status().message()));
    }
    disambig = std::move(*read);
  }
  PhoneContext context{tree.context_width(), tree.central_position(),
                       [&tree](std::span<const int32_t> window, int32_t pdf_class) {
                         return tree.Compute(window, pdf_class);
                       }};
  GMM_ASSIGN_OR_RETURN(
      TrainingGraphCompiler compiler,
      TrainingGraphCompiler::Create(model, std::move(context), lexicon, disambig, options));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<Int32VectorTableReader> transcripts,
                       Int32VectorTableReader::Open(pos[3]));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<FstTableWriter> writer, FstTableWriter::Open(pos[4]));
  std::string key;
  std::vector<int32_t> words;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, transcripts->Next(&key, &words));
    if (!more) break;
    absl::StatusOr<AlignGraph> graph = compiler.Compile(words);
    if (!graph.ok()) {
      return absl::Status(graph.status().code(),
                          absl::StrCat("utterance ", key, ": ", graph.status().message()));
    }
    if (graph->start < 0) {
      KaldiLog(stderr, "WARNING", kProgram, "Empty decoding graph for utterance " + key);
      ++counts->failed;
      continue;
    }
    GMM_RETURN_IF_ERROR(writer->Write(key, *graph));
    ++counts->succeeded;
  }
  return writer->Close();
}

}  // namespace

int RunCompileTrainGraphs(int argc, char** argv) {
  Args args(kProgram,
            "[options] TREE-IN MODEL-IN LEXICON-FST-IN TRANSCRIPTIONS-RSPECIFIER "
            "GRAPHS-WSPECIFIER\n"
            "Compiles a training graph per transcript (word ids) through the lexicon FST, the\n"
            "tree's phone contexts and the model's HMMs, without transition probabilities by\n"
            "default (the aligner adds them).\n"
            "e.g.: compile-train-graphs tree 1.mdl lex.fst "
            "'ark:sym2int.pl -f 2- words.txt text|' ark:graphs.fsts");
  // compile-train-graphs' defaults leave transition probabilities to the aligner.
  TrainingGraphOptions options{.transition_scale = 0.0f, .self_loop_scale = 0.0f};
  int32_t batch_size = 250;
  std::string disambig_in;
  args.Register("transition-scale", &options.transition_scale,
                "scale of transition probabilities (excluding self-loops)")
      .Register("self-loop-scale", &options.self_loop_scale,
                "scale of self-loop versus non-self-loop log probabilities")
      .Register("reorder", &options.reorder,
                "reorder transition ids for greater decoding efficiency")
      .Register("rm-eps", &options.rm_eps,
                "remove some epsilons locally before minimization (where the graph had "
                "disambiguation symbols)")
      .Register("batch-size", &batch_size,
                "number of FSTs to compile at a time (no effect on the output)")
      .Register("read-disambig-syms", &disambig_in,
                "file containing the list of disambiguation symbols in the phone symbol table");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 5) return Usage(args);
  Counts counts;
  if (absl::Status s = CompileTrainGraphs(pos, disambig_in, options, &counts); !s.ok()) {
    return Fail(kProgram, s);
  }
  KaldiLog(stderr, "LOG", kProgram,
           absl::StrCat("compile-train-graphs: succeeded for ", counts.succeeded,
                        " graphs, failed for ", counts.failed));
  return counts.succeeded != 0 ? 0 : 1;
}

}  // namespace gmmscore
