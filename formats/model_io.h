// Loading and saving models in any supported format, detected from the file's first bytes (or a
// directory, for Sphinx).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"

namespace gmmscore {

enum class ModelFormat { kKaldiBinary, kKaldiText, kHtk, kSphinx, kNative };

// "kaldi" (binary), "kaldi-text", "htk", "sphinx", "native".
absl::StatusOr<ModelFormat> ParseModelFormat(const std::string& name);
std::string ModelFormatName(ModelFormat format);
// From the content of path (a directory is a Sphinx model).
absl::StatusOr<ModelFormat> DetectModelFormat(const std::string& path);
// From an output path's name: *.mdl Kaldi, *.txt.mdl Kaldi text, *.mmf HTK, *.gmms native,
// an existing directory or a trailing '/' Sphinx.
absl::StatusOr<ModelFormat> ModelFormatForOutput(const std::string& path);

struct LoadedModel {
  GmmModel model;
  ModelFormat file_format;
};

// variance_floor > 0 raises every variance below it.
absl::StatusOr<LoadedModel> LoadModel(const std::string& path, float variance_floor = 0.0f);
absl::Status SaveModel(const GmmModel& model, const std::string& path, ModelFormat format);

}  // namespace gmmscore
