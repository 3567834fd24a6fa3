#include "formats/model_io.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "formats/htk_model.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_stream.h"
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

namespace {

// The format of a model whose first bytes are `start` (up to 512 of them).
absl::StatusOr<ModelFormat> FormatFromHead(const std::string& start, const std::string& name) {
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
      name,
      ": not a model gmmscore knows (Kaldi final.mdl, HTK MMF, Sphinx model directory, "
      "gmmscore native)"));
}

constexpr size_t kHeadBytes = 512;

}  // namespace

absl::StatusOr<ModelFormat> DetectModelFormat(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return ModelFormat::kSphinx;
  std::ifstream is(path, std::ios::binary);
  if (!is) return absl::NotFoundError(absl::StrCat(path, ": cannot open for reading"));
  char head[kHeadBytes] = {};
  is.read(head, sizeof(head));
  return FormatFromHead(std::string(head, static_cast<size_t>(is.gcount())), path);
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

// A Kaldi or HTK model from a pipe, standard input or an offset into a file (Kaldi's
// rxfilenames, as recipes pass `gmm-boost-silence ... |`): read whole, then parsed. Native and
// Sphinx models are read from their files only.
absl::StatusOr<GmmModel> LoadStreamed(const Rxfilename& source, ModelFormat* format) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(source));
  std::string bytes;
  char chunk[1 << 16];
  while (input->stream().read(chunk, sizeof(chunk)) || input->stream().gcount() > 0) {
    bytes.append(chunk, static_cast<size_t>(input->stream().gcount()));
  }
  GMM_RETURN_IF_ERROR(input->Close());
  const std::string& name = input->name();
  GMM_ASSIGN_OR_RETURN(*format, FormatFromHead(bytes.substr(0, kHeadBytes), name));
  if (*format != ModelFormat::kKaldiBinary && *format != ModelFormat::kKaldiText &&
      *format != ModelFormat::kHtk) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": a ", ModelFormatName(*format),
                     " model is read from its file, not from a pipe or standard input"));
  }
  std::istringstream is(std::move(bytes));
  return *format == ModelFormat::kHtk ? ReadHtkModel(is, name) : ReadKaldiModel(is, name);
}

absl::StatusOr<LoadedModel> Load(const std::string& path, float variance_floor) {
  absl::StatusOr<GmmModel> model = absl::UnknownError("unreachable");
  ModelFormat format = ModelFormat::kKaldiBinary;
  absl::StatusOr<Rxfilename> source = ParseRxfilename(path);
  std::error_code ec;
  if (!path.empty() && source.ok() &&
      (source->kind != Rxfilename::Kind::kFile || source->offset != 0) &&
      !std::filesystem::exists(path, ec)) {
    model = LoadStreamed(*source, &format);
  } else {
    GMM_ASSIGN_OR_RETURN(format, DetectModelFormat(path));
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
