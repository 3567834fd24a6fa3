#include "tools/kaldi_tools.h"

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "tools/command_util.h"

namespace gmmscore {

const std::vector<KaldiTool>& KaldiTools() {
  static const std::vector<KaldiTool> tools = {
      {"add-deltas", "add-deltas", {}},
      {"ali-to-pdf", "ali-to-pdf", {}},
      {"ali-to-phones", "ali-to-phones", {}},
      {"ali-to-post", "ali-to-post", {}},
      {"align-equal-compiled", "align-equal-compiled", {}},
      {"apply-cmvn", "apply-cmvn", {}},
      {"compile-train-graphs", "compile-train-graphs", {}},
      {"compute-cmvn-stats", "compute-cmvn-stats", {}},
      {"compute-mfcc-feats", "compute-feats", {}},
      {"copy-feats", "copy-feats", {}},
      {"copy-int-vector", "copy-int-vector", {}},
      {"copy-matrix", "copy-matrix", {}},
      {"extract-segments", "extract-segments", {}},
      {"feat-to-dim", "feat-to-dim", {}},
      {"feat-to-len", "feat-to-len", {}},
      {"gmm-acc-stats", "acc-stats", {"--posteriors"}},
      {"gmm-acc-stats-ali", "acc-stats", {}},
      {"gmm-adapt-map", "adapt", {}},
      {"gmm-align-compiled", "align", {}},
      {"gmm-boost-silence", "boost-silence", {}},
      {"gmm-compute-likes", "gmm-compute-likes", {}},
      {"gmm-copy", "gmm-copy", {}},
      {"gmm-est-fmllr", "gmm-est-fmllr", {}},
      {"gmm-est", "est", {}},
      {"gmm-info", "gmm-info", {}},
      {"gmm-init-mono", "gmm-init-mono", {}},
      {"gmm-mixup", "gmm-mixup", {}},
      {"gmm-sum-accs", "sum-accs", {}},
      {"show-alignments", "show-alignments", {}},
      {"splice-feats", "splice-feats", {}},
      {"subset-feats", "subset-feats", {}},
      {"transform-feats", "transform-feats", {}},
      {"tree-info", "tree-info", {}},
      {"wav-to-duration", "wav-to-duration", {}},
      {"weight-silence-post", "weight-silence-post", {}},
  };
  return tools;
}

const KaldiTool* FindKaldiTool(const std::string& program_path) {
  const std::string name = std::filesystem::path(program_path).filename().string();
  for (const KaldiTool& tool : KaldiTools()) {
    if (name == tool.name) return &tool;
  }
  return nullptr;
}

int RunKaldiLinks(int argc, char** argv) {
  Args args("kaldi-links",
            "[options] DIR\n"
            "Makes DIR (where it is missing) and in it a link named as each Kaldi tool that\n"
            "gmmscore implements; run under that name, gmmscore is that tool. With DIR first on\n"
            "PATH, Kaldi's recipes run these tools without Kaldi.\n"
            "e.g.: gmmscore kaldi-links ~/gmmscore-kaldi && export PATH=~/gmmscore-kaldi:$PATH");
  args.Add({"list", "", "print the tools' names (and the subcommand each runs), make nothing"});
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (args.GetBool("list")) {
    for (const KaldiTool& tool : KaldiTools()) {
      std::string line = absl::StrCat(tool.name, "\tgmmscore ", tool.command);
      for (const char* option : tool.implied) absl::StrAppend(&line, " ", option);
      std::printf("%s\n", line.c_str());
    }
    return 0;
  }
  if (args.positional().size() != 1) return Usage(args);
  namespace fs = std::filesystem;
  const fs::path dir = args.positional()[0];
  std::error_code ec;
  const fs::path binary = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return Fail("kaldi-links",
                absl::InternalError(absl::StrCat(
                    "cannot tell where this binary is (/proc/self/exe): ", ec.message())));
  }
  fs::create_directories(dir, ec);
  if (ec) {
    return Fail("kaldi-links", absl::PermissionDeniedError(absl::StrCat(
                                   dir.string(), ": cannot make the folder: ", ec.message())));
  }
  for (const KaldiTool& tool : KaldiTools()) {
    const fs::path link = dir / tool.name;
    // Links of an earlier run (or to another build) are replaced; anything else is left alone.
    if (fs::is_symlink(link, ec)) fs::remove(link, ec);
    if (fs::exists(fs::symlink_status(link, ec))) {
      return Fail(
          "kaldi-links",
          absl::AlreadyExistsError(absl::StrCat(
              link.string(), " exists and is not a link; remove it or choose another DIR")));
    }
    fs::create_symlink(binary, link, ec);
    if (ec) {
      return Fail("kaldi-links", absl::PermissionDeniedError(absl::StrCat(
                                     link.string(), ": cannot make the link: ", ec.message())));
    }
  }
  std::printf(
      "%zu Kaldi tools in %s (links to %s); put the folder first on PATH:\n"
      "  export PATH=%s:$PATH\n",
      KaldiTools().size(), dir.string().c_str(), binary.string().c_str(),
      fs::absolute(dir).string().c_str());
  return 0;
}

}  // namespace gmmscore
