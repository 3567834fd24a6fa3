// The HTK MMF tokenizer and parser (see htk_mmf_parser.h).
#include "formats/htk_mmf_parser.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "formats/read_limits.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Mixture weights and transition-matrix rows must sum to 1 within this (HTK writes 6 digits).
constexpr double kSumTolerance = 1e-3;
constexpr int32_t kMaxHmmStates = 1000;
constexpr int32_t kMaxMixtures = 100000;

enum class TokenKind { kEnd, kKeyword, kMacro, kString, kWord };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // keywords upper-cased ("<MEAN>"), macro types ("~h"), strings unquoted
  int line = 0;
};

// What an error message calls a token.
std::string Show(const Token& t) {
  if (t.kind == TokenKind::kEnd) return "the end of the file";
  const std::string text = t.text.substr(0, 40);
  return t.kind == TokenKind::kString ? absl::StrCat("\"", text, "\"") : text;
}

// Splits an MMF into tokens: <keywords>, which may touch their neighbours as in
// "<VECSIZE> 39<NULLD><MFCC_D_A_Z><DIAGC>", ~x macro types, "quoted strings" with backslash
// escapes, and plain words (numbers, unquoted names).
class MmfLexer {
 public:
  explicit MmfLexer(std::string text) : text_(std::move(text)) { Advance(); }

  const Token& Peek() const { return next_; }
  // The bytes of text after the token Peek() shows.
  size_t BytesLeft() const { return text_.size() - std::min(pos_, text_.size()); }
  Token Next() {
    Token t = std::move(next_);
    Advance();
    return t;
  }

 private:
  void Advance();
  void SkipSpace();
  std::string QuotedString();

  std::string text_;
  size_t pos_ = 0;
  int line_ = 1;
  Token next_;
};

void MmfLexer::SkipSpace() {
  while (pos_ < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }
}

std::string MmfLexer::QuotedString() {
  std::string s;
  for (++pos_; pos_ < text_.size() && text_[pos_] != '"'; ++pos_) {
    if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
    if (text_[pos_] == '\n') ++line_;
    s += text_[pos_];
  }
  ++pos_;  // the closing quote
  return s;
}

void MmfLexer::Advance() {
  SkipSpace();
  next_ = Token{TokenKind::kEnd, "", line_};
  if (pos_ >= text_.size()) return;
  const char c = text_[pos_];
  if (c == '"') {
    next_.kind = TokenKind::kString;
    next_.text = QuotedString();
    return;
  }
  if (c == '~') {
    next_.kind = TokenKind::kMacro;
    next_.text = text_.substr(pos_, 2);
    pos_ += next_.text.size();
    return;
  }
  // A keyword ends after its '>'; a word at a space, '<' or '"'.
  size_t end = pos_ + 1;
  while (end < text_.size() && !absl::ascii_isspace(static_cast<unsigned char>(text_[end])) &&
         text_[end] != '<' && text_[end] != '"' && text_[end - 1] != '>') {
    ++end;
  }
  next_.text = text_.substr(pos_, end - pos_);
  pos_ = end;
  if (c == '<' && next_.text.back() == '>') {
    next_.kind = TokenKind::kKeyword;
    absl::AsciiStrToUpper(&next_.text);
  } else {
    next_.kind = TokenKind::kWord;
  }
}

// <MFCC_D_A_Z_0>, <USER>, <PLP_E_D_A>...: a base kind and single-letter qualifiers.
bool IsParameterKind(const std::string& keyword) {
  static const std::set<std::string> kBaseKinds = {
      "WAVEFORM", "LPC",     "LPREFC", "LPCEPSTRA", "LPDELCEP", "IREFC", "MFCC",
      "FBANK",    "MELSPEC", "USER",   "DISCRETE",  "PLP",      "ANON"};
  const std::vector<std::string> parts = absl::StrSplit(keyword.substr(1, keyword.size() - 2), '_');
  if (!kBaseKinds.contains(parts[0])) return false;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].size() != 1 || !absl::StrContains("ENDACZK0VT", parts[i])) return false;
  }
  return true;
}

bool IsUnsupportedCovarianceKind(const std::string& keyword) {
  return keyword == "<FULLC>" || keyword == "<LLTC>" || keyword == "<XFORMC>" ||
         keyword == "<INVDIAGC>";
}

// Options that say nothing the reader needs: diagonal covariance, durations, the parameter kind.
bool IsIgnoredOption(const std::string& keyword) {
  return keyword == "<DIAGC>" || keyword == "<NULLD>" || keyword == "<POISSOND>" ||
         keyword == "<GAMMAD>" || keyword == "<GEND>" || IsParameterKind(keyword);
}

struct MixPdf {
  std::vector<float> mean;
  std::vector<float> variance;
};

// A recursive-descent parser of the MMF grammar; macros must be defined before they are used, as
// HTK requires, so references are resolved as they are read.
//
// Macros let a few bytes stand for a whole vector, so what the parser keeps (macro definitions,
// the Gaussians of states, the transition matrices of HMMs) is charged against a budget of
// kMmfValuesPerByte values per byte of text (formats/read_limits.h), and a count is checked
// against the text left (a value takes at least one byte) before a vector is sized by it.
class MmfParser {
 public:
  MmfParser(std::string text, std::string name)
      : text_bytes_(text.size()),
        budget_(kMmfBaseValues + kMmfValuesPerByte * text.size()),
        lex_(std::move(text)),
        name_(std::move(name)) {}

  absl::StatusOr<HtkMmf> Parse();

 private:
  absl::Status Error(int line, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": line ", line, ": ", what));
  }
  // Charges `values` kept values to the budget.
  absl::Status Charge(uint64_t values, int line);
  // An error unless the text left can hold `values` more values, the next one included.
  absl::Status CheckTextHolds(uint64_t values, absl::string_view what, int line) const;
  bool AtKeyword(absl::string_view keyword) const {
    return lex_.Peek().kind == TokenKind::kKeyword && lex_.Peek().text == keyword;
  }
  bool AtMacro(absl::string_view type) const {
    return lex_.Peek().kind == TokenKind::kMacro && lex_.Peek().text == type;
  }
  absl::StatusOr<Token> ExpectKeyword(absl::string_view keyword);
  absl::StatusOr<int32_t> Int(absl::string_view what, int32_t min, int32_t max);
  absl::StatusOr<float> Float(absl::string_view what);
  absl::StatusOr<std::string> MacroName();
  template <typename T>
  absl::StatusOr<T> Reference(const std::map<std::string, T>& macros);
  template <typename T>
  absl::Status Define(std::map<std::string, T>& macros, const Token& type, const std::string& name,
                      T value);

  absl::Status ParseMacro(const Token& type);
  absl::Status ParseOptions();
  absl::Status ParseStreamInfo();
  absl::Status SetDim(int32_t dim, int line);
  absl::Status ParseStreamWeights();
  absl::StatusOr<std::vector<float>> ParseVector(absl::string_view keyword, bool positive);
  absl::StatusOr<std::vector<float>> ParseMean();
  absl::StatusOr<std::vector<float>> ParseVariance();
  absl::StatusOr<MixPdf> ParseMixPdf();
  absl::StatusOr<int32_t> ParseState(std::string name);
  absl::Status ParseMixtures(int32_t num_mixes, HtkStateDef& state);
  absl::StatusOr<int32_t> ParseStateRef(std::string inline_name);
  absl::StatusOr<HtkTransP> ParseTransP();
  absl::Status CheckTransP(const HtkHmmDef& hmm) const;
  absl::Status ParseHmm(const Token& type, std::string name);
  absl::Status AddGaussian(float weight, const MixPdf& pdf, HtkStateDef& state, int line);

  uint64_t text_bytes_;
  uint64_t budget_;  // values that may still be kept
  MmfLexer lex_;
  std::string name_;
  int32_t dim_ = 0;                                      // 0 until <VECSIZE>/<STREAMINFO>
  std::map<std::string, std::vector<float>> means_;      // ~u
  std::map<std::string, std::vector<float>> variances_;  // ~v
  std::map<std::string, float> sweights_;                // ~w, unused with one stream
  std::map<std::string, MixPdf> mixpdfs_;                // ~m
  std::map<std::string, int32_t> state_macros_;          // ~s, index into states_
  std::map<std::string, HtkTransP> transps_;             // ~t
  std::map<std::string, int32_t> hmm_names_;             // ~h, index into hmms_
  std::vector<HtkStateDef> states_;
  std::vector<HtkHmmDef> hmms_;
};

absl::Status MmfParser::Charge(uint64_t values, int line) {
  if (values > budget_) {
    return Error(
        line, absl::StrCat("the definitions so far keep more than ",
                           kMmfBaseValues + kMmfValuesPerByte * text_bytes_, " values, the most ",
                           text_bytes_, " bytes of text may stand for (macros used too often)"));
  }
  budget_ -= values;
  return absl::OkStatus();
}

absl::Status MmfParser::CheckTextHolds(uint64_t values, absl::string_view what, int line) const {
  // The peeked token may be the first value; each further one takes at least a byte.
  if (values > lex_.BytesLeft() + 1) {
    return Error(line, absl::StrCat(what, " says ", values, " values, but only ", lex_.BytesLeft(),
                                    " bytes of text are left"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Token> MmfParser::ExpectKeyword(absl::string_view keyword) {
  if (!AtKeyword(keyword)) {
    return Error(lex_.Peek().line,
                 absl::StrCat("expected ", keyword, ", found ", Show(lex_.Peek())));
  }
  return lex_.Next();
}

absl::StatusOr<int32_t> MmfParser::Int(absl::string_view what, int32_t min, int32_t max) {
  const Token t = lex_.Next();
  int32_t value = 0;
  if (t.kind != TokenKind::kWord || !absl::SimpleAtoi(t.text, &value)) {
    return Error(t.line, absl::StrCat("expected an integer after ", what, ", found ", Show(t)));
  }
  if (value < min || value > max) {
    return Error(t.line, absl::StrCat(what, " ", value, " is not in [", min, ", ", max, "]"));
  }
  return value;
}

absl::StatusOr<float> MmfParser::Float(absl::string_view what) {
  const Token t = lex_.Next();
  float value = 0.0f;
  if (t.kind != TokenKind::kWord || !absl::SimpleAtof(t.text, &value)) {
    return Error(t.line, absl::StrCat("expected a number in ", what, ", found ", Show(t)));
  }
  if (!std::isfinite(value)) {
    return Error(t.line, absl::StrCat(what, ": ", t.text, " is not a finite number"));
  }
  return value;
}

absl::StatusOr<std::string> MmfParser::MacroName() {
  const Token t = lex_.Next();
  if (t.kind != TokenKind::kString && t.kind != TokenKind::kWord) {
    return Error(t.line, absl::StrCat("expected a macro name, found ", Show(t)));
  }
  return t.text;
}

template <typename T>
absl::StatusOr<T> MmfParser::Reference(const std::map<std::string, T>& macros) {
  const Token type = lex_.Next();
  GMM_ASSIGN_OR_RETURN(std::string name, MacroName());
  const auto it = macros.find(name);
  if (it == macros.end()) {
    return Error(type.line, absl::StrCat("unknown macro ", type.text, " \"", name, "\""));
  }
  return it->second;
}

template <typename T>
absl::Status MmfParser::Define(std::map<std::string, T>& macros, const Token& type,
                               const std::string& name, T value) {
  if (!macros.emplace(name, std::move(value)).second) {
    return Error(type.line, absl::StrCat("macro ", type.text, " \"", name, "\" is defined twice"));
  }
  return absl::OkStatus();
}

absl::StatusOr<HtkMmf> MmfParser::Parse() {
  while (lex_.Peek().kind != TokenKind::kEnd) {
    const Token t = lex_.Next();
    if (t.kind != TokenKind::kMacro) {
      return Error(t.line, absl::StrCat("expected a macro (~o, ~h, ~s...), found ", Show(t)));
    }
    GMM_RETURN_IF_ERROR(ParseMacro(t));
  }
  if (hmms_.empty()) return Error(lex_.Peek().line, "no HMM (~h) in the file");
  return HtkMmf{dim_, std::move(states_), std::move(hmms_)};
}

absl::Status MmfParser::ParseMacro(const Token& type) {
  if (type.text == "~o") {
    GMM_RETURN_IF_ERROR(ParseOptions());
    if (lex_.Peek().kind == TokenKind::kKeyword) {
      return Error(lex_.Peek().line, absl::StrCat("unsupported global option ", Show(lex_.Peek())));
    }
    return absl::OkStatus();
  }
  if (type.text == "~i" || type.text == "~x") {
    return Error(type.line, absl::StrCat("unsupported macro ", type.text,
                                         ": only diagonal covariances are supported"));
  }
  GMM_ASSIGN_OR_RETURN(std::string name, MacroName());
  if (type.text == "~h") return ParseHmm(type, std::move(name));
  if (type.text == "~s") {
    GMM_ASSIGN_OR_RETURN(int32_t state, ParseState(name));
    return Define(state_macros_, type, name, state);
  }
  if (type.text == "~m") {
    GMM_ASSIGN_OR_RETURN(MixPdf pdf, ParseMixPdf());
    GMM_RETURN_IF_ERROR(Charge(pdf.mean.size() + pdf.variance.size(), type.line));
    return Define(mixpdfs_, type, name, std::move(pdf));
  }
  if (type.text == "~u") {
    GMM_ASSIGN_OR_RETURN(std::vector<float> mean, ParseVector("<MEAN>", false));
    GMM_RETURN_IF_ERROR(Charge(mean.size(), type.line));
    return Define(means_, type, name, std::move(mean));
  }
  if (type.text == "~v") {
    GMM_ASSIGN_OR_RETURN(std::vector<float> variance, ParseVector("<VARIANCE>", true));
    GMM_RETURN_IF_ERROR(Charge(variance.size(), type.line));
    return Define(variances_, type, name, std::move(variance));
  }
  if (type.text == "~t") {
    GMM_ASSIGN_OR_RETURN(HtkTransP transp, ParseTransP());
    GMM_RETURN_IF_ERROR(Charge(transp.probs.size(), type.line));
    return Define(transps_, type, name, std::move(transp));
  }
  if (type.text == "~w") {
    GMM_RETURN_IF_ERROR(ExpectKeyword("<SWEIGHTS>").status());
    GMM_RETURN_IF_ERROR(Int("<SWEIGHTS>", 1, 1).status());
    GMM_ASSIGN_OR_RETURN(float weight, Float("<SWEIGHTS>"));
    return Define(sweights_, type, name, weight);
  }
  return Error(type.line, absl::StrCat("unsupported macro type ", type.text));
}

// globalOpts: <STREAMINFO>, <VECSIZE>, <HMMSETID> and kinds of covariance, duration and
// parameters, up to the first token that is none of these.
absl::Status MmfParser::ParseOptions() {
  while (lex_.Peek().kind == TokenKind::kKeyword) {
    const Token& t = lex_.Peek();
    if (t.text == "<STREAMINFO>") {
      GMM_RETURN_IF_ERROR(ParseStreamInfo());
    } else if (t.text == "<VECSIZE>") {
      lex_.Next();
      const int line = lex_.Peek().line;
      GMM_ASSIGN_OR_RETURN(int32_t dim, Int("<VECSIZE>", 1, 1 << 20));
      GMM_RETURN_IF_ERROR(SetDim(dim, line));
    } else if (t.text == "<HMMSETID>") {
      lex_.Next();
      GMM_RETURN_IF_ERROR(MacroName().status());
    } else if (IsUnsupportedCovarianceKind(t.text)) {
      return Error(t.line, absl::StrCat("unsupported covariance kind ", t.text,
                                        ": only diagonal covariances (<DIAGC>) are supported"));
    } else if (IsIgnoredOption(t.text)) {
      lex_.Next();
    } else {
      break;
    }
  }
  return absl::OkStatus();
}

absl::Status MmfParser::ParseStreamInfo() {
  lex_.Next();
  const int line = lex_.Peek().line;
  GMM_ASSIGN_OR_RETURN(int32_t num_streams, Int("<STREAMINFO>", 1, 1 << 20));
  if (num_streams != 1) {
    return Error(line, absl::StrCat("unsupported: ", num_streams,
                                    " streams (only single-stream models are supported)"));
  }
  GMM_ASSIGN_OR_RETURN(int32_t dim, Int("<STREAMINFO>", 1, 1 << 20));
  return SetDim(dim, line);
}

absl::Status MmfParser::SetDim(int32_t dim, int line) {
  if (dim_ != 0 && dim != dim_) {
    return Error(line, absl::StrCat("vector size ", dim, " differs from the earlier ", dim_));
  }
  dim_ = dim;
  return absl::OkStatus();
}

// [<SWEIGHTS> 1 w | ~w "name"]: one stream, so its weight does not matter.
absl::Status MmfParser::ParseStreamWeights() {
  if (AtMacro("~w")) return Reference(sweights_).status();
  if (!AtKeyword("<SWEIGHTS>")) return absl::OkStatus();
  lex_.Next();
  GMM_RETURN_IF_ERROR(Int("<SWEIGHTS>", 1, 1).status());
  return Float("<SWEIGHTS>").status();
}

// KEYWORD n v_1 ... v_n, with n the vector size and, for variances, every v > 0.
absl::StatusOr<std::vector<float>> MmfParser::ParseVector(absl::string_view keyword,
                                                          bool positive) {
  GMM_ASSIGN_OR_RETURN(Token t, ExpectKeyword(keyword));
  if (dim_ == 0) return Error(t.line, absl::StrCat(keyword, " before any <VECSIZE>"));
  const int line = lex_.Peek().line;
  GMM_ASSIGN_OR_RETURN(int32_t n, Int(keyword, 1, 1 << 20));
  if (n != dim_) {
    return Error(line, absl::StrCat(keyword, " has ", n, " values, <VECSIZE> is ", dim_));
  }
  GMM_RETURN_IF_ERROR(CheckTextHolds(uint64_t(n), keyword, line));
  std::vector<float> v(n);
  for (int32_t d = 0; d < n; ++d) {
    const Token next = lex_.Peek();
    const std::string where = absl::StrCat(keyword, " value ", d + 1);
    GMM_ASSIGN_OR_RETURN(v[d], Float(where));
    if (positive && !(v[d] > 0.0f)) {
      return Error(next.line, absl::StrCat(where, " is ", next.text, ", not > 0"));
    }
  }
  return v;
}

absl::StatusOr<std::vector<float>> MmfParser::ParseMean() {
  if (AtMacro("~u")) return Reference(means_);
  return ParseVector("<MEAN>", false);
}

absl::StatusOr<std::vector<float>> MmfParser::ParseVariance() {
  if (AtMacro("~v")) return Reference(variances_);
  const Token& t = lex_.Peek();
  if (t.text == "<INVCOVAR>" || t.text == "<LLTCOVAR>" || t.text == "<XFORM>" || t.text == "~i" ||
      t.text == "~x") {
    return Error(t.line, absl::StrCat("unsupported full covariance ", t.text,
                                      ": only diagonal covariances (<VARIANCE>) are supported"));
  }
  return ParseVector("<VARIANCE>", true);
}

// mixpdf = ~m "name" | [<RCLASS> n] mean variance [<GCONST> g]; the gconst is recomputed.
absl::StatusOr<MixPdf> MmfParser::ParseMixPdf() {
  if (AtMacro("~m")) return Reference(mixpdfs_);
  if (AtKeyword("<RCLASS>")) {
    lex_.Next();
    GMM_RETURN_IF_ERROR(Int("<RCLASS>", 0, 1 << 30).status());
  }
  MixPdf pdf;
  GMM_ASSIGN_OR_RETURN(pdf.mean, ParseMean());
  GMM_ASSIGN_OR_RETURN(pdf.variance, ParseVariance());
  if (AtKeyword("<GCONST>")) {
    lex_.Next();
    GMM_RETURN_IF_ERROR(Float("<GCONST>").status());
  }
  return pdf;
}

absl::Status MmfParser::AddGaussian(float weight, const MixPdf& pdf, HtkStateDef& state, int line) {
  GMM_RETURN_IF_ERROR(Charge(1 + pdf.mean.size() + pdf.variance.size(), line));
  state.weights.push_back(weight);
  state.means.insert(state.means.end(), pdf.mean.begin(), pdf.mean.end());
  state.variances.insert(state.variances.end(), pdf.variance.begin(), pdf.variance.end());
  return absl::OkStatus();
}

// stateinfo = [<NUMMIXES> M] [stream weights] [<STREAM> 1] (mixpdf | {<MIXTURE> m w mixpdf});
// returns the index of the new HtkStateDef.
absl::StatusOr<int32_t> MmfParser::ParseState(std::string name) {
  HtkStateDef state;
  state.name = std::move(name);
  state.line = lex_.Peek().line;
  int32_t num_mixes = 1;
  if (AtKeyword("<NUMMIXES>")) {
    lex_.Next();
    GMM_ASSIGN_OR_RETURN(num_mixes, Int("<NUMMIXES>", 1, kMaxMixtures));
  }
  GMM_RETURN_IF_ERROR(ParseStreamWeights());
  if (AtKeyword("<STREAM>")) {
    lex_.Next();
    GMM_RETURN_IF_ERROR(Int("<STREAM>", 1, 1).status());
  }
  if (AtKeyword("<MIXTURE>")) {
    GMM_RETURN_IF_ERROR(ParseMixtures(num_mixes, state));
  } else if (num_mixes == 1) {
    const int line = lex_.Peek().line;
    GMM_ASSIGN_OR_RETURN(MixPdf pdf, ParseMixPdf());
    GMM_RETURN_IF_ERROR(AddGaussian(1.0f, pdf, state, line));
  } else {
    return Error(lex_.Peek().line, absl::StrCat("expected <MIXTURE> (<NUMMIXES> is ", num_mixes,
                                                "), found ", Show(lex_.Peek())));
  }
  states_.push_back(std::move(state));
  return static_cast<int32_t>(states_.size()) - 1;
}

// {<MIXTURE> m w mixpdf}: m increasing in 1..M, with gaps where HTK dropped a mixture of weight 0.
absl::Status MmfParser::ParseMixtures(int32_t num_mixes, HtkStateDef& state) {
  double weight_sum = 0.0;
  int32_t last = 0;
  while (AtKeyword("<MIXTURE>")) {
    lex_.Next();
    GMM_ASSIGN_OR_RETURN(int32_t m, Int("<MIXTURE>", last + 1, num_mixes));
    last = m;
    const int line = lex_.Peek().line;
    GMM_ASSIGN_OR_RETURN(float weight, Float(absl::StrCat("mixture ", m, " weight")));
    if (weight < 0.0f) {
      return Error(line, absl::StrCat("mixture ", m, " has a negative weight ", weight));
    }
    weight_sum += weight;
    GMM_ASSIGN_OR_RETURN(MixPdf pdf, ParseMixPdf());
    GMM_RETURN_IF_ERROR(AddGaussian(weight, pdf, state, line));
  }
  if (std::abs(weight_sum - 1.0) > kSumTolerance) {
    return Error(state.line, absl::StrCat("state \"", state.name, "\": mixture weights sum to ",
                                          weight_sum, ", not 1"));
  }
  return absl::OkStatus();
}

// ~s "name" | stateinfo written in the HMM, which is then called `inline_name`.
absl::StatusOr<int32_t> MmfParser::ParseStateRef(std::string inline_name) {
  int32_t index = 0;
  if (AtMacro("~s")) {
    GMM_ASSIGN_OR_RETURN(index, Reference(state_macros_));
  } else {
    GMM_ASSIGN_OR_RETURN(index, ParseState(std::move(inline_name)));
  }
  states_[index].used = true;
  return index;
}

// ~t "name" | <TRANSP> n, then n x n probabilities >= 0.
absl::StatusOr<HtkTransP> MmfParser::ParseTransP() {
  if (AtMacro("~t")) return Reference(transps_);
  GMM_ASSIGN_OR_RETURN(Token t, ExpectKeyword("<TRANSP>"));
  HtkTransP transp;
  transp.line = t.line;
  const int count_line = lex_.Peek().line;
  GMM_ASSIGN_OR_RETURN(transp.n, Int("<TRANSP>", 3, kMaxHmmStates));
  GMM_RETURN_IF_ERROR(
      CheckTextHolds(uint64_t(transp.n) * uint64_t(transp.n), "<TRANSP>", count_line));
  transp.probs.resize(size_t(transp.n) * transp.n);
  for (float& prob : transp.probs) {
    const int line = lex_.Peek().line;
    GMM_ASSIGN_OR_RETURN(prob, Float("<TRANSP>"));
    if (prob < 0.0f) return Error(line, absl::StrCat("negative transition probability ", prob));
  }
  return transp;
}

// Rows of the entry and emitting states sum to 1; the exit state has no transitions.
absl::Status MmfParser::CheckTransP(const HtkHmmDef& hmm) const {
  const HtkTransP& t = hmm.transp;
  for (int32_t row = 0; row < t.n; ++row) {
    double sum = 0.0;
    for (int32_t col = 0; col < t.n; ++col) sum += t.probs[size_t(row) * t.n + col];
    const double expected = row == t.n - 1 ? 0.0 : 1.0;
    if (std::abs(sum - expected) > kSumTolerance) {
      return Error(t.line, absl::StrCat("HMM \"", hmm.name, "\": <TRANSP> row ", row + 1,
                                        " sums to ", sum, ", not ", expected));
    }
  }
  return absl::OkStatus();
}

// <BEGINHMM> [globalOpts] <NUMSTATES> n {<STATE> i stateinfo} transP <ENDHMM>
absl::Status MmfParser::ParseHmm(const Token& type, std::string name) {
  GMM_RETURN_IF_ERROR(ExpectKeyword("<BEGINHMM>").status());
  GMM_RETURN_IF_ERROR(ParseOptions());
  GMM_RETURN_IF_ERROR(ExpectKeyword("<NUMSTATES>").status());
  GMM_ASSIGN_OR_RETURN(int32_t n, Int("<NUMSTATES>", 3, kMaxHmmStates));
  HtkHmmDef hmm;
  hmm.name = name;
  hmm.states.assign(n + 1, -1);
  while (AtKeyword("<STATE>")) {
    const Token t = lex_.Next();
    GMM_ASSIGN_OR_RETURN(int32_t i, Int("<STATE>", 2, n - 1));
    if (hmm.states[i] != -1) return Error(t.line, absl::StrCat("state ", i, " is defined twice"));
    GMM_ASSIGN_OR_RETURN(hmm.states[i], ParseStateRef(absl::StrCat(name, "_s", i)));
  }
  for (int32_t i = 2; i < n; ++i) {
    if (hmm.states[i] == -1) {
      return Error(lex_.Peek().line, absl::StrCat("HMM \"", name, "\": expected <STATE> ", i,
                                                  ", found ", Show(lex_.Peek())));
    }
  }
  const int transp_line = lex_.Peek().line;
  GMM_ASSIGN_OR_RETURN(hmm.transp, ParseTransP());
  GMM_RETURN_IF_ERROR(Charge(hmm.transp.probs.size(), transp_line));
  if (hmm.transp.n != n) {
    return Error(transp_line, absl::StrCat("HMM \"", name, "\" has ", n, " states but a ",
                                           hmm.transp.n, "x", hmm.transp.n, " <TRANSP>"));
  }
  GMM_RETURN_IF_ERROR(CheckTransP(hmm));
  GMM_RETURN_IF_ERROR(ExpectKeyword("<ENDHMM>").status());
  hmms_.push_back(std::move(hmm));
  return Define(hmm_names_, type, name, static_cast<int32_t>(hmms_.size()) - 1);
}

}  // namespace

absl::StatusOr<HtkMmf> ParseHtkMmf(std::string text, const std::string& name) {
  MmfParser parser(std::move(text), name);
  return parser.Parse();
}

}  // namespace gmmscore
