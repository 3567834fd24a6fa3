// gmmscore compile-graphs: training graphs from transcripts (align/phone_graph.h), for people
// without Kaldi's compile-train-graphs: a table of phone sequences (ids, or names with
// --phone-symbols), or with --lexicon of word sequences, in; an archive of graphs out that
// `gmmscore align`, `gmmscore train` and Kaldi's gmm-align-compiled read.
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "align/phone_graph.h"
#include "formats/kaldi_fst.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_stream.h"
#include "formats/kaldi_tables.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore compile-graphs";

// phones.txt: "NAME ID" lines.
absl::StatusOr<std::map<std::string, int32_t>> ReadSymbols(const std::string& rxfilename) {
  auto input = InputStream::Open(rxfilename);
  if (!input.ok()) return input.status();
  std::map<std::string, int32_t> ids;
  std::string name, id_text;
  int line = 0;
  while ((*input)->stream() >> name >> id_text) {
    ++line;
    int32_t id = 0;
    if (!absl::SimpleAtoi(id_text, &id)) {
      return absl::InvalidArgumentError((*input)->name() + ": line " + std::to_string(line) +
                                        ": '" + id_text + "' is not a number");
    }
    ids[name] = id;
  }
  if (absl::Status s = (*input)->Close(); !s.ok()) return s;
  return ids;
}

// lexicon.txt: "WORD PHONE..." lines, a word's lines its pronunciations; phones resolved by
// phone_id.
template <typename PhoneId>
absl::StatusOr<std::map<std::string, Pronunciations>> ReadLexicon(const std::string& rxfilename,
                                                                  const PhoneId& phone_id) {
  auto input = InputStream::Open(rxfilename);
  if (!input.ok()) return input.status();
  std::map<std::string, Pronunciations> lexicon;
  std::string text;
  for (int line = 1; std::getline((*input)->stream(), text); ++line) {
    std::vector<std::string> fields =
        absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.empty()) continue;
    if (fields.size() == 1) {
      return absl::InvalidArgumentError((*input)->name() + ": line " + std::to_string(line) +
                                        ": word '" + fields[0] + "' has no phones");
    }
    std::vector<int32_t> phones;
    for (size_t i = 1; i < fields.size(); ++i) {
      auto id = phone_id(fields[i]);
      if (!id.ok()) {
        return absl::InvalidArgumentError((*input)->name() + ": line " + std::to_string(line) +
                                          ": " + std::string(id.status().message()));
      }
      phones.push_back(*id);
    }
    lexicon[fields[0]].push_back(std::move(phones));
  }
  if (absl::Status s = (*input)->Close(); !s.ok()) return s;
  if (lexicon.empty())
    return absl::InvalidArgumentError((*input)->name() + ": the lexicon is empty");
  return lexicon;
}

// The transcripts' words: phones (ids, or names in phones.txt) or, with a lexicon, words and
// their pronunciations.
class Vocabulary {
 public:
  static absl::StatusOr<Vocabulary> Load(const std::string& phone_symbols,
                                         const std::string& lexicon) {
    Vocabulary v;
    if (!phone_symbols.empty()) {
      GMM_ASSIGN_OR_RETURN(v.symbols_, ReadSymbols(phone_symbols));
    }
    if (!lexicon.empty()) {
      GMM_ASSIGN_OR_RETURN(v.lexicon_, ReadLexicon(lexicon, [&v](const std::string& phone) {
                             return v.PhoneId(phone);
                           }));
    }
    return v;
  }

  absl::StatusOr<int32_t> PhoneId(const std::string& phone) const {
    if (!symbols_.empty()) {
      const auto it = symbols_.find(phone);
      if (it == symbols_.end()) {
        return absl::InvalidArgumentError("phone '" + phone + "' is not in the symbol table");
      }
      return it->second;
    }
    int32_t id = 0;
    if (!absl::SimpleAtoi(phone, &id)) {
      return absl::InvalidArgumentError("'" + phone +
                                        "' is not a phone id (names need --phone-symbols)");
    }
    return id;
  }

  // A transcript's words (or phones, as one-phone words), each with its pronunciations.
  absl::StatusOr<std::vector<Pronunciations>> Pronounce(
      const std::vector<std::string>& words) const {
    std::vector<Pronunciations> sequence;
    for (const std::string& word : words) {
      if (lexicon_.empty()) {
        GMM_ASSIGN_OR_RETURN(const int32_t id, PhoneId(word));
        sequence.push_back(Pronunciations{{id}});
        continue;
      }
      const auto it = lexicon_.find(word);
      if (it == lexicon_.end()) {
        return absl::InvalidArgumentError("word '" + word + "' is not in the lexicon");
      }
      sequence.push_back(it->second);
    }
    return sequence;
  }

 private:
  std::map<std::string, int32_t> symbols_;
  std::map<std::string, Pronunciations> lexicon_;
};

}  // namespace

int RunCompileGraphs(int argc, char** argv) {
  Args args("compile-graphs",
            "[options] MODEL TRANSCRIPTS-RSPEC GRAPHS-WSPEC\n"
            "Compiles training graphs from phone transcripts (\"utt p1 p2 ...\", phone ids, or\n"
            "names with --phone-symbols), or with --lexicon from word transcripts, with the\n"
            "model's topology (monophone models).\n"
            "e.g.: gmmscore compile-graphs --phone-symbols=phones.txt --lexicon=lexicon.txt "
            "--optional-silence=SIL final.mdl ark,t:text ark:graphs.fsts");
  std::string phone_symbols, lexicon_file, optional_silence;
  PhoneGraphOptions options;
  args.Register("phone-symbols", &phone_symbols, "phones.txt: the transcripts hold phone names")
      .Register("lexicon", &lexicon_file,
                "lexicon.txt (\"WORD PHONE...\" lines, several for several pronunciations): the "
                "transcripts hold words")
      .Register("optional-silence", &optional_silence,
                "a phone (id, or name with --phone-symbols) optional at the start, between words "
                "(phones, without --lexicon) and at the end")
      .Register("silence-prob", &options.silence_prob,
                "probability of the optional silence at each place");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  auto model = ReadKaldiModelFile(pos[0]);
  if (!model.ok()) return Fail("compile-graphs", model.status());
  auto vocabulary = Vocabulary::Load(phone_symbols, lexicon_file);
  if (!vocabulary.ok()) return Fail("compile-graphs", vocabulary.status());
  if (!optional_silence.empty()) {
    auto sil = vocabulary->PhoneId(optional_silence);
    if (!sil.ok()) return Fail("compile-graphs", sil.status());
    options.optional_silence = *sil;
  }
  auto transcripts = TokenVectorTableReader::Open(pos[1]);
  if (!transcripts.ok()) return Fail("compile-graphs", transcripts.status());
  auto graphs = FstTableWriter::Open(pos[2]);
  if (!graphs.ok()) return Fail("compile-graphs", graphs.status());
  int64_t done = 0, errors = 0;
  std::string key;
  std::vector<std::string> words;
  while (true) {
    auto more = (*transcripts)->Next(&key, &words);
    if (!more.ok()) return Fail("compile-graphs", more.status());
    if (!*more) break;
    auto sequence = vocabulary->Pronounce(words);
    absl::StatusOr<AlignGraph> graph =
        sequence.ok() ? CompileWordGraph(model->hmm(), *sequence, options) : sequence.status();
    if (!graph.ok()) {
      KaldiLog(stderr, "WARNING", kProgram,
               "utterance " + key + ": " + std::string(graph.status().message()));
      ++errors;
      continue;
    }
    if (absl::Status s = (*graphs)->Write(key, *graph); !s.ok()) return Fail("compile-graphs", s);
    ++done;
  }
  if (absl::Status s = (*graphs)->Close(); !s.ok()) return Fail("compile-graphs", s);
  KaldiLog(stderr, "LOG", kProgram,
           "compile-graphs: succeeded for " + KaldiNumber(done) + " graphs, failed for " +
               KaldiNumber(errors));
  return done != 0 ? 0 : 1;
}

}  // namespace gmmscore
