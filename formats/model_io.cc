#include "formats/model_io.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "formats/htk_model.h"
#include "formats/kaldi_model.h"
#include "formats/native_model.h"
#include "formats/read_limits.h"
#include "formats/sphinx_model.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<ModelFormat> ParseModelFormat(const std::string& name) {
  if (name == "kaldi") return ModelFormat::kKaldiBinary;
  if (name == "kaldi-text") return ModelFormat::kKaldiText;
  if (name == "htk") return ModelFormat::kHtk;
  if (name == "sphinx") return ModelFormat::kSphinx;
  if (name == "native") return ModelFormat::kNative;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown model format '", name, "' (kaldi, kaldi-text, htk, sphinx, native)"));
}

std::string ModelFormatName(ModelFormat format) {
  switch (format) {
    case ModelFormat::kKaldiBinary:
      return "kaldi";
    case ModelFormat::kKaldiText:
      return "kaldi-text";
    case ModelFormat::kHtk:
      return "htk";
    case ModelFormat::kSphinx:
      return "sphinx";
    case ModelFormat::kNative:
      return "native";
  }
  return "unknown";
}

absl::StatusOr<ModelFormat> DetectModelFormat(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return ModelFormat::kSphinx;
  std::ifstream is(path, std::ios::binary);
  if (!is) return absl::NotFoundError(absl::StrCat(path, ": cannot open for reading"));
  char head[512] = {};
  is.read(head, sizeof(head));
  const std::string start(head, static_cast<size_t>(is.gcount()));
  if (start.size() >= 8 && std::memcmp(start.data(), kNativeMagic, 8) == 0)
    return ModelFormat::kNative;
  if (absl::StartsWith(start, std::string("\0B<TransitionModel>", 19)))
    return ModelFormat::kKaldiBinary;
  const absl::string_view text = absl::StripLeadingAsciiWhitespace(start);
  if (absl::StartsWith(text, "<TransitionModel>")) return ModelFormat::kKaldiText;
  const std::string lower = absl::AsciiStrToLower(start);
  if (absl::StartsWith(text, "~") || absl::StrContains(lower, "<beginhmm>"))
    return ModelFormat::kHtk;
  return absl::InvalidArgumentError(absl::StrCat(
      path,
      ": not a model gmmscore knows (Kaldi final.mdl, HTK MMF, Sphinx model directory, "
      "gmmscore native)"));
}

absl::StatusOr<ModelFormat> ModelFormatForOutput(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || absl::EndsWith(path, "/"))
    return ModelFormat::kSphinx;
  if (absl::EndsWith(path, ".txt.mdl")) return ModelFormat::kKaldiText;
  if (absl::EndsWith(path, ".mdl")) return ModelFormat::kKaldiBinary;
  if (absl::EndsWith(path, ".mmf") || absl::EndsWith(path, ".MMF")) return ModelFormat::kHtk;
  if (absl::EndsWith(path, ".gmms")) return ModelFormat::kNative;
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot tell the output format from '", path,
      "': use --to kaldi|kaldi-text|htk|sphinx|native, or a name ending in .mdl, .txt.mdl, .mmf, "
      ".gmms or /"));
}

namespace {

absl::StatusOr<LoadedModel> Load(const std::string& path, float variance_floor) {
  GMM_ASSIGN_OR_RETURN(const ModelFormat format, DetectModelFormat(path));
  absl::StatusOr<GmmModel> model = absl::UnknownError("unreachable");
  switch (format) {
    case ModelFormat::kNative:
      model = ReadNativeModel(path);
      break;
    case ModelFormat::kSphinx:
      model = ReadSphinxModel(path);
      break;
    case ModelFormat::kKaldiBinary:
    case ModelFormat::kKaldiText:
    case ModelFormat::kHtk: {
      std::ifstream is(path, std::ios::binary);
      if (!is) return absl::NotFoundError(absl::StrCat(path, ": cannot open for reading"));
      model = format == ModelFormat::kHtk ? ReadHtkModel(is, path) : ReadKaldiModel(is, path);
      break;
    }
  }
  if (!model.ok()) return model.status();
  if (variance_floor > 0.0f) {
    GmmModelSpec spec = model->spec();
    spec.variance_floor = variance_floor;
    model = GmmModel::Create(std::move(spec));
    if (!model.ok()) return model.status();
  }
  return LoadedModel{*std::move(model), format};
}

}  // namespace

absl::StatusOr<LoadedModel> LoadModel(const std::string& path, float variance_floor) {
  return CatchAllocation(path, [&] { return Load(path, variance_floor); });
}

absl::Status SaveModel(const GmmModel& model, const std::string& path, ModelFormat format) {
  switch (format) {
    case ModelFormat::kNative:
      return WriteNativeModel(model, path);
    case ModelFormat::kSphinx:
      return WriteSphinxModel(model, path);
    case ModelFormat::kKaldiBinary:
    case ModelFormat::kKaldiText:
    case ModelFormat::kHtk: {
      std::ofstream os(path, std::ios::binary | std::ios::trunc);
      if (!os) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open for writing"));
      absl::Status s = format == ModelFormat::kHtk
                           ? WriteHtkModel(model, os)
                           : WriteKaldiModel(model, os, format == ModelFormat::kKaldiBinary);
      if (!s.ok()) return s;
      os.close();
      if (!os) return absl::DataLossError(absl::StrCat(path, ": write failed"));
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError("unknown model format");
}

}  // namespace gmmscore
