// gmmscore kaldi-links: the folder of links that puts gmmscore's Kaldi tools on PATH.
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "tools/command_util.h"
#include "tools/kaldi_tools.h"

namespace gmmscore {

int RunKaldiLinks(int argc, char** argv) {
  Args args("kaldi-links",
            "[options] DIR\n"
            "Makes DIR (where it is missing) and in it a link named as each Kaldi tool that\n"
            "gmmscore implements; run under that name, gmmscore is that tool. With DIR first on\n"
            "PATH, Kaldi's recipes run these tools without Kaldi.\n"
            "e.g.: gmmscore kaldi-links ~/gmmscore-kaldi && export PATH=~/gmmscore-kaldi:$PATH");
  bool list = false;
  args.Register("list", &list,
                "print the tools' names (and the subcommand each runs), make nothing");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (list) {
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
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return Fail("kaldi-links",
                absl::InternalError(absl::StrCat(
                    "cannot tell where this binary is (/proc/self/exe): ", ec.message())));
  }
  // gmmscore-kaldi (tools/kaldi_main.cc) is these tools without the server client: it starts in
  // a few milliseconds where gmmscore takes tens, and a recipe starts the tools thousands of times.
  const fs::path lean = self.parent_path() / "gmmscore-kaldi";
  const fs::path binary = fs::exists(lean, ec) ? lean : self;
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
