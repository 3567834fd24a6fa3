#include "feat/front_end_options.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "formats/matrix_table.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

absl::Status ParseBool(const std::string& name, const std::string& text, bool* out) {
  const std::string v = absl::AsciiStrToLower(text);
  if (v == "true" || v == "t" || v == "1" || v.empty()) {
    *out = true;
  } else if (v == "false" || v == "f" || v == "0") {
    *out = false;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " is true or false, not '", text, "'"));
  }
  return absl::OkStatus();
}

absl::Status ParseNumber(const std::string& name, const std::string& text, double* out) {
  if (!absl::SimpleAtod(text, out)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": '", text, "' is not a number"));
  }
  return absl::OkStatus();
}

absl::Status ParseInt(const std::string& name, const std::string& text, int32_t* out) {
  if (!absl::SimpleAtoi(text, out)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": '", text, "' is not an integer"));
  }
  return absl::OkStatus();
}

using Setter =
    std::function<absl::Status(const std::string&, const std::string&, FrontEndOptions*)>;
// An option's value as text, for its default: the value in FrontEndOptions{}, so that each
// default is written once, in front_end_options.h.
using Shower = std::function<std::string(FrontEndOptions*)>;

struct Binding {
  Setter set;
  Shower show;
};

struct Entry {
  FrontEndOptionInfo info;  // its default_value filled from FrontEndOptions{}
  Binding field;
};

const char* CmvnModeName(CmvnMode mode) {
  switch (mode) {
    case CmvnMode::kNone:
      return "none";
    case CmvnMode::kUtterance:
      return "utterance";
    case CmvnMode::kSpeaker:
      return "speaker";
    case CmvnMode::kOnline:
      return "online";
  }
  return "none";
}

template <typename Field>
Binding DoubleAt(Field field) {
  return {[field](const std::string& n, const std::string& v, FrontEndOptions* o) {
            return ParseNumber(n, v, &field(o));
          },
          [field](FrontEndOptions* o) { return absl::StrCat(field(o)); }};
}
template <typename Field>
Binding IntAt(Field field) {
  return {[field](const std::string& n, const std::string& v, FrontEndOptions* o) {
            return ParseInt(n, v, &field(o));
          },
          [field](FrontEndOptions* o) { return absl::StrCat(field(o)); }};
}
template <typename Field>
Binding BoolAt(Field field) {
  return {[field](const std::string& n, const std::string& v, FrontEndOptions* o) {
            return ParseBool(n, v, &field(o));
          },
          [field](FrontEndOptions* o) { return std::string(field(o) ? "true" : "false"); }};
}

const std::vector<Entry>& Entries() {
  using O = FrontEndOptions;
  static const std::vector<Entry> entries = {
      {{"sample-frequency", "HZ", "waveform sample frequency; audio must match it"},
       DoubleAt([](O* o) -> double& { return o->mfcc.frame.samp_freq; })},
      {{"frame-shift", "MS", "frame shift in milliseconds"},
       DoubleAt([](O* o) -> double& { return o->mfcc.frame.frame_shift_ms; })},
      {{"frame-length", "MS", "frame length in milliseconds"},
       DoubleAt([](O* o) -> double& { return o->mfcc.frame.frame_length_ms; })},
      {{"dither", "F", "dithering constant (0: no dither)"},
       DoubleAt([](O* o) -> double& { return o->mfcc.frame.dither; })},
      {{"preemphasis-coefficient", "F", "coefficient for the preemphasis filter"},
       DoubleAt([](O* o) -> double& { return o->mfcc.frame.preemph_coeff; })},
      {{"remove-dc-offset", "", "subtract the mean of the waveform in each frame"},
       BoolAt([](O* o) -> bool& { return o->mfcc.frame.remove_dc_offset; })},
      {{"window-type", "TYPE", "hamming, hanning, povey, rectangular, sine or blackman"},
       {[](const std::string&, const std::string& v, O* o) {
          o->mfcc.frame.window_type = v;
          return absl::OkStatus();
        },
        [](O* o) { return o->mfcc.frame.window_type; }}},
      {{"round-to-power-of-two", "", "round the window to a power of two for the FFT"},
       BoolAt([](O* o) -> bool& { return o->mfcc.frame.round_to_power_of_two; })},
      {{"blackman-coeff", "F", "constant coefficient of the generalized Blackman window"},
       DoubleAt([](O* o) -> double& { return o->mfcc.frame.blackman_coeff; })},
      {{"snip-edges", "",
        "only frames that fit wholly in the waveform; false: frames centred every shift, edges "
        "reflected"},
       BoolAt([](O* o) -> bool& { return o->mfcc.frame.snip_edges; })},
      {{"allow-downsample", "",
        "allow audio at a higher rate than --sample-frequency (it is downsampled)"},
       BoolAt([](O* o) -> bool& { return o->mfcc.frame.allow_downsample; })},
      {{"allow-upsample", "",
        "allow audio at a lower rate than --sample-frequency (it is upsampled)"},
       BoolAt([](O* o) -> bool& { return o->mfcc.frame.allow_upsample; })},
      {{"num-mel-bins", "N", "number of triangular mel-frequency bins"},
       IntAt([](O* o) -> int32_t& { return o->mfcc.mel.num_bins; })},
      {{"low-freq", "HZ", "low cutoff of the mel bins"},
       DoubleAt([](O* o) -> double& { return o->mfcc.mel.low_freq; })},
      {{"high-freq", "HZ", "high cutoff of the mel bins (<= 0: offset from Nyquist)"},
       DoubleAt([](O* o) -> double& { return o->mfcc.mel.high_freq; })},
      {{"vtln-low", "HZ", "low inflection point of the VTLN warping function"},
       DoubleAt([](O* o) -> double& { return o->mfcc.mel.vtln_low; })},
      {{"vtln-high", "HZ", "high inflection point of the VTLN warping (< 0: offset from Nyquist)"},
       DoubleAt([](O* o) -> double& { return o->mfcc.mel.vtln_high; })},
      {{"num-ceps", "N", "number of cepstra (including C0)"},
       IntAt([](O* o) -> int32_t& { return o->mfcc.num_ceps; })},
      {{"use-energy", "", "use the log energy in place of C0"},
       BoolAt([](O* o) -> bool& { return o->mfcc.use_energy; })},
      {{"energy-floor", "F", "floor on the energy (absolute, not log); 0: none"},
       DoubleAt([](O* o) -> double& { return o->mfcc.energy_floor; })},
      {{"raw-energy", "", "the energy before preemphasis and windowing"},
       BoolAt([](O* o) -> bool& { return o->mfcc.raw_energy; })},
      {{"cepstral-lifter", "F", "cepstral liftering constant (0: none)"},
       DoubleAt([](O* o) -> double& { return o->mfcc.cepstral_lifter; })},
      {{"htk-compat", "", "energy or C0 last, as HTK orders them"},
       BoolAt([](O* o) -> bool& { return o->mfcc.htk_compat; })},
      {{"cmvn", "MODE",
        "cepstral mean (and variance) normalisation: none, utterance (apply-cmvn), speaker "
        "(with --utt2spk) or online (OnlineCmvn's causal window)"},
       {[](const std::string& n, const std::string& v, O* o) {
          if (v == "none") {
            o->cmvn = CmvnMode::kNone;
          } else if (v == "utterance") {
            o->cmvn = CmvnMode::kUtterance;
          } else if (v == "speaker") {
            o->cmvn = CmvnMode::kSpeaker;
          } else if (v == "online") {
            o->cmvn = CmvnMode::kOnline;
          } else {
            return absl::InvalidArgumentError(
                absl::StrCat("--", n, " is none, utterance, speaker or online, not '", v, "'"));
          }
          return absl::OkStatus();
        },
        [](O* o) { return std::string(CmvnModeName(o->cmvn)); }}},
      {{"norm-vars", "", "normalise variances too (apply-cmvn --norm-vars)"},
       BoolAt([](O* o) -> bool& { return o->norm_vars; })},
      {{"cmn-window", "N", "--cmvn=online: frames in the causal window"},
       IntAt([](O* o) -> int32_t& { return o->cmn_window; })},
      {{"delta-order", "N", "add deltas up to this order (add-deltas --delta-order); 0: none"},
       IntAt([](O* o) -> int32_t& { return o->deltas.order; })},
      {{"delta-window", "N", "add-deltas --delta-window"},
       IntAt([](O* o) -> int32_t& { return o->deltas.window; })},
      {{"splice-left-context", "N",
        "splice each frame with this many frames before it (splice-feats --left-context)"},
       IntAt([](O* o) -> int32_t& { return o->splice_left; })},
      {{"splice-right-context", "N",
        "splice each frame with this many frames after it (splice-feats --right-context)"},
       IntAt([](O* o) -> int32_t& { return o->splice_right; })},
      {{"transform", "RXFILENAME",
        "apply this linear or affine transform to the frames (transform-feats; e.g. an LDA+MLLT "
        "model's final.mat)"},
       {[](const std::string& n, const std::string& v, O* o) -> absl::Status {
          o->transform_path = v;
          if (v.empty()) {
            o->transform.reset();
            return absl::OkStatus();
          }
          auto m = ReadMatrixFile(v);
          if (!m.ok())
            return absl::InvalidArgumentError(absl::StrCat("--", n, ": ", m.status().message()));
          o->transform = std::make_shared<const Matrix>(*std::move(m));
          return absl::OkStatus();
        },
        [](O* o) { return o->transform_path; }}},
      {{"dither-seed", "N", "seed of the dither's random numbers (per utterance or stream)"},
       {[](const std::string& n, const std::string& v, O* o) {
          if (!absl::SimpleAtoi(v, &o->dither_seed)) {
            return absl::InvalidArgumentError(
                absl::StrCat("--", n, ": '", v, "' is not a non-negative integer"));
          }
          return absl::OkStatus();
        },
        [](O* o) { return absl::StrCat(o->dither_seed); }}},
  };
  return entries;
}

}  // namespace

absl::Status FrontEndOptions::Validate() const {
  GMM_RETURN_IF_ERROR(mfcc.Validate());
  GMM_RETURN_IF_ERROR(deltas.Validate());
  if (cmn_window < 1 || cmn_window > 1000000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cmn-window ", cmn_window, " is not in [1, 1000000]"));
  }
  if (splice_left < 0 || splice_right < 0 || splice_left > 100 || splice_right > 100) {
    return absl::InvalidArgumentError(absl::StrCat("--splice-left-context ", splice_left,
                                                   " and --splice-right-context ", splice_right,
                                                   " must be in [0, 100]"));
  }
  if (spliced() && deltas.order > 0) {
    return absl::InvalidArgumentError(
        "a front end has deltas or spliced frames, not both (--delta-order with "
        "--splice-*-context)");
  }
  if (transform) {
    const int32_t in = untransformed_dim();
    if (transform->rows < 1 || (transform->cols != in && transform->cols != in + 1)) {
      return absl::InvalidArgumentError(absl::StrCat("--transform ", transform_path, " is ",
                                                     transform->rows, " x ", transform->cols,
                                                     "; the frames before it have dimension ", in,
                                                     " (", in, " or ", in + 1, " columns needed)"));
    }
    for (const float x : transform->data) {
      if (!std::isfinite(x)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--transform ", transform_path, " has a value that is not finite"));
      }
    }
  }
  return absl::OkStatus();
}

const std::vector<FrontEndOptionInfo>& FrontEndOptionList() {
  static const std::vector<FrontEndOptionInfo> list = [] {
    std::vector<FrontEndOptionInfo> out;
    FrontEndOptions defaults;
    for (const Entry& e : Entries()) {
      out.push_back(e.info);
      out.back().default_value = e.field.show(&defaults);
    }
    return out;
  }();
  return list;
}

absl::Status SetFrontEndOption(const std::string& name, const std::string& value,
                               FrontEndOptions* opts) {
  for (const Entry& e : Entries()) {
    if (e.info.name == name) return e.field.set(name, value, opts);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown front-end option --", name));
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ApplyFrontEndConfig(
    const std::string& path, const std::string& text, FrontEndOptions* opts,
    const std::vector<std::string>& allowed_other) {
  std::vector<std::pair<std::string, std::string>> other;
  std::istringstream lines(text);
  std::string line;
  for (int line_number = 1; std::getline(lines, line); ++line_number) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::string trimmed(absl::StripAsciiWhitespace(line));
    if (trimmed.empty()) continue;
    const auto where = [&] { return absl::StrCat(path, ":", line_number, ": "); };
    if (trimmed.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), "expected --name=value, got '", trimmed, "'"));
    }
    std::string name = trimmed.substr(2), value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (std::find(allowed_other.begin(), allowed_other.end(), name) != allowed_other.end()) {
      other.emplace_back(name, value);
      continue;
    }
    if (absl::Status s = SetFrontEndOption(name, value, opts); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where(), s.message()));
    }
  }
  return other;
}

absl::StatusOr<std::string> ReadFrontEndConfigText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open front-end config ", path));
  constexpr size_t kMaxBytes = 1 << 20;
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": over 1 MiB, not a config file"));
  }
  return text;
}

absl::StatusOr<FrontEndOptions> ReadFrontEndConfig(const std::string& path) {
  GMM_ASSIGN_OR_RETURN(const std::string text, ReadFrontEndConfigText(path));
  FrontEndOptions opts;
  GMM_RETURN_IF_ERROR(ApplyFrontEndConfig(path, text, &opts).status());
  if (absl::Status s = opts.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
  }
  return opts;
}

}  // namespace gmmscore
