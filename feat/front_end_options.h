// The whole front end's options in one place: Kaldi's MFCC options (compute-mfcc-feats's names
// and defaults), then CMVN, then deltas or spliced frames, then a feature transform (an LDA+MLLT
// matrix, final.mat), as gmmscore compute-feats adds them and as a tri1 (deltas) or tri2b/tri3b
// (LDA+MLLT) model reads its features. The offline command,
// `score --feat-config` and the daemon's audio streams all read them from here, from the command
// line or from a Kaldi-style config file (one "--name=value" per line, '#' starts a comment).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "feat/deltas.h"
#include "feat/mfcc.h"
#include "util/matrix.h"

namespace gmmscore {

enum class CmvnMode { kNone, kUtterance, kSpeaker, kOnline };

struct FrontEndOptions {
  MfccOptions mfcc;
  CmvnMode cmvn = CmvnMode::kNone;
  bool norm_vars = false;
  int32_t cmn_window = 600;  // --cmvn=online: frames in the causal window (OnlineCmvn's default)
  DeltaOptions deltas{.order = 0, .window = 2};
  // Spliced frames (splice-feats --left-context/--right-context); 0 and 0: none. Not with deltas.
  int32_t splice_left = 0;
  int32_t splice_right = 0;
  // A linear or affine transform of the (spliced or delta) frames (transform-feats), read from
  // transform_path when the option is set; null: none.
  std::string transform_path;
  std::shared_ptr<const Matrix> transform;
  uint64_t dither_seed = 0;

  absl::Status Validate() const;
  bool spliced() const { return splice_left > 0 || splice_right > 0; }
  // The frames' dimension before the transform, and after it (what a model must take).
  int32_t untransformed_dim() const {
    return mfcc.num_ceps * (spliced() ? splice_left + splice_right + 1 : deltas.order + 1);
  }
  int32_t dim() const { return transform ? transform->rows : untransformed_dim(); }
  // Frames of look-ahead the deltas or the splice need before a frame is final.
  int32_t lookahead() const { return spliced() ? splice_right : deltas.lookahead(); }
};

// One option as a command line or config file names it.
struct FrontEndOptionInfo {
  std::string name;        // without "--"
  std::string value_name;  // empty for a boolean
  std::string help;
  std::string default_value;
};

// Every front-end option, for a command to declare.
const std::vector<FrontEndOptionInfo>& FrontEndOptionList();

// Sets one option from its text ("true"/"false" for booleans); errors name the option.
absl::Status SetFrontEndOption(const std::string& name, const std::string& value,
                               FrontEndOptions* opts);

// Applies a Kaldi-style config file's lines to *opts. Errors name the file and line. Options that
// are not front-end options are errors, unless allowed_other lists them: those are returned, as
// "name=value" pairs, for the caller to handle.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ApplyFrontEndConfig(
    const std::string& path, const std::string& text, FrontEndOptions* opts,
    const std::vector<std::string>& allowed_other = {});

// A config file's text: NOT_FOUND if it cannot be opened, INVALID_ARGUMENT past 1 MiB (no config
// file is that long; a device or a wrong path may be).
absl::StatusOr<std::string> ReadFrontEndConfigText(const std::string& path);

// Reads and applies a config file.
absl::StatusOr<FrontEndOptions> ReadFrontEndConfig(const std::string& path);

}  // namespace gmmscore
