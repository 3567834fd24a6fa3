#include "cli/args.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/invocation.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;

// Kaldi's NormalizeArgName: '_' is '-', and case does not matter.
std::string Normalized(std::string name) {
  for (char& c : name) c = c == '_' ? '-' : absl::ascii_tolower(static_cast<unsigned char>(c));
  return name;
}

bool ParseSwitch(const std::string& value, bool* out) {
  const std::string v = absl::AsciiStrToLower(value);
  if (v.empty() || v == "true" || v == "t" || v == "1") {
    *out = true;
    return true;
  }
  if (v == "false" || v == "f" || v == "0") {
    *out = false;
    return true;
  }
  return false;
}

// Characters bash leaves alone in an unquoted word (Kaldi's --print-args quotes the rest).
bool NeedsQuotes(const std::string& arg) {
  if (arg.empty()) return true;
  for (const char c : arg) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("[]~#^_-+=:.,/").find(c) == std::string_view::npos) {
      return true;
    }
  }
  return false;
}

std::string Quoted(const std::string& arg) {
  if (!NeedsQuotes(arg)) return arg;
  // Single quotes, a quote inside written '\''; double quotes where that reads better and is safe.
  if (absl::StrContains(arg, '\'') && arg.find_first_of("\"`$\\") == std::string::npos) {
    return absl::StrCat("\"", arg, "\"");
  }
  std::string out = "'";
  for (const char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

std::string QuotedCommandLine(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&line, Quoted(argv[i]), " ");
  return line;
}

Args::Args(std::string command, std::string usage)
    : command_(std::move(command)), usage_(std::move(usage)) {
  Add({"config", "FILE", "read options from FILE (lines --name=value; the command line overrides)",
       "", true});
  Add({"print-args", "", "print the command line to stderr",
       KaldiToolName().empty() ? "false" : "true"});
  Add({"verbose", "N", "verbose level (higher: more logging)", "0"});
  Add({"help", "", "print this help"});
}

Args& Args::Add(Option option) {
  option.name = Normalized(std::move(option.name));
  options_.push_back(std::move(option));
  return *this;
}

const Args::Option* Args::Find(const std::string& name) const {
  for (const Option& o : options_) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

absl::Status Args::SetOption(const std::string& arg, bool kaldi, int argc, char** argv, int* i,
                             Values* values) const {
  std::string name = arg.substr(2), value;
  bool has_value = false;
  if (const auto eq = name.find('='); eq != std::string::npos) {
    value = name.substr(eq + 1);
    name.resize(eq);
    has_value = true;
  }
  if (name.empty())
    return absl::InvalidArgumentError(absl::StrCat("Invalid option (no key): ", arg));
  name = Normalized(name);
  const Option* o = Find(name);
  if (o == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid option ", arg, "\n\n", Help()));
  }
  if (o->value_name.empty()) {
    bool on = false;
    if ((has_value && value.empty()) || !ParseSwitch(value, &on)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid option ", arg, ": --", name, " is true or false (t/f, 1/0), not '", value, "'"));
    }
    value = on ? "true" : "false";
  } else if (!has_value) {
    if (kaldi || i == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid option ", arg, " (option format is --x=y)"));
    }
    if (*i + 1 >= argc) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
    }
    value = argv[++*i];
  }
  if (name == "config") {
    // Parse() reads the command line's config files; one named inside a config file is not read,
    // as in Kaldi.
    return i == nullptr ? absl::OkStatus() : ReadConfigFile(value, values, nullptr);
  }
  auto& slot = (*values)[name];
  if (!slot.empty() && !o->repeatable) {
    if (!kaldi) return absl::InvalidArgumentError(absl::StrCat("--", name, " given twice"));
    slot.clear();  // Kaldi: the last one wins
  }
  slot.push_back(value);
  return absl::OkStatus();
}

absl::Status Args::ReadConfigFile(const std::string& path, Values* values,
                                  std::map<std::string, std::string>* origins) const {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("Cannot open config file: ", path));
  // Read whole, bounded: no config file is 1 MiB long; a device or a wrong path may be.
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": over 1 MiB; is it a config file?"));
  }
  int number = 0;
  for (absl::string_view piece : absl::StrSplit(text, '\n')) {
    ++number;
    std::string line(piece);
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::string stripped(absl::StripAsciiWhitespace(line));
    if (stripped.empty()) continue;
    const std::string where = absl::StrCat(path, ":", number, ": ");
    if (!absl::StartsWith(stripped, "--")) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "'", stripped,
                       "' is not of the form --x=y (files sourced by shell scripts "
                       "lack the '--')"));
    }
    // A config file's values are Kaldi's --x=y, whoever reads them; later lines win.
    if (absl::Status s = SetOption(stripped, /*kaldi=*/true, 0, nullptr, nullptr, values);
        !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(where, s.message()));
    }
    if (origins != nullptr) {
      const std::string name = stripped.substr(2, stripped.find('=') - 2);
      (*origins)[Normalized(name)] = where;
    }
  }
  return absl::OkStatus();
}

absl::Status Args::Parse(int argc, char** argv, int first) {
  const bool kaldi = !KaldiToolName().empty();
  // Config files first (in order), then the command line over them.
  Values from_config;
  Values from_line;
  std::map<std::string, std::string> config_origins;
  bool options_ended = false;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool is_option = !options_ended && arg.size() > 2 && arg.rfind("--", 0) == 0;
    if (arg == "--" && !options_ended) {
      options_ended = true;
      continue;
    }
    if (!is_option) {
      positional_.push_back(arg);
      if (kaldi) options_ended = true;  // Kaldi: options come before the positional arguments
      continue;
    }
    if (Normalized(arg.substr(2, 7)) == "config=" || Normalized(arg) == "--config") {
      std::string path;
      if (arg.find('=') != std::string::npos) {
        path = arg.substr(arg.find('=') + 1);
      } else if (!kaldi && i + 1 < argc) {
        path = argv[++i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("Invalid option ", arg, " (option format is --config=FILE)"));
      }
      if (absl::Status s = ReadConfigFile(path, &from_config, &config_origins); !s.ok()) return s;
      continue;
    }
    if (absl::Status s = SetOption(arg, kaldi, argc, argv, &i, &from_line); !s.ok()) return s;
  }
  values_ = std::move(from_config);
  for (auto& [name, value] : from_line) values_[name] = std::move(value);
  for (auto& [name, where] : config_origins) {
    if (from_line.count(name) == 0) origins_[name] = std::move(where);
  }

  for (const Binding& bind : bindings_) {
    if (absl::Status s = bind(*this); !s.ok()) return s;
  }
  absl::StatusOr<int> verbose = GetInt("verbose");
  if (!verbose.ok()) return verbose.status();
  SetVerboseLevel(*verbose);
  if (GetBool("print-args")) {
    // Under a Kaldi name, that name and its arguments, as Kaldi prints them (main() put the
    // subcommand in argv[1]); else "gmmscore COMMAND ...".
    std::string line = QuotedCommandLine(kaldi ? 1 : first, argv);
    if (kaldi) absl::StrAppend(&line, QuotedCommandLine(argc - first, argv + first));
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  return absl::OkStatus();
}

std::string Args::Origin(const std::string& name) const {
  const auto it = origins_.find(name);
  return it == origins_.end() ? "" : it->second;
}

std::string Args::Get(const std::string& name) const {
  const auto it = values_.find(name);
  if (it != values_.end()) return it->second.back();
  const Option* o = Find(name);
  return o ? o->default_value : "";
}

std::vector<std::string> Args::GetAll(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::string Args::DefaultText(double value) {
  std::ostringstream text;  // an ostream's default notation, as Kaldi prints defaults
  text << value;
  return text.str();
}

absl::Status Args::SetField(const Args& args, const std::string& name, bool* field) {
  *field = args.GetBool(name);
  return absl::OkStatus();
}

absl::Status Args::SetField(const Args& args, const std::string& name, int32_t* field) {
  GMM_ASSIGN_OR_RETURN(*field, args.GetInt(name));
  return absl::OkStatus();
}

absl::Status Args::SetField(const Args& args, const std::string& name, float* field) {
  GMM_ASSIGN_OR_RETURN(const double value, args.GetDouble(name));
  *field = static_cast<float>(value);
  return absl::OkStatus();
}

absl::Status Args::SetField(const Args& args, const std::string& name, double* field) {
  GMM_ASSIGN_OR_RETURN(*field, args.GetDouble(name));
  return absl::OkStatus();
}

absl::Status Args::SetField(const Args& args, const std::string& name, std::string* field) {
  *field = args.Get(name);
  return absl::OkStatus();
}

absl::StatusOr<int> Args::GetInt(const std::string& name) const {
  int v = 0;
  if (!absl::SimpleAtoi(Get(name), &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": '", Get(name), "' is not an integer"));
  }
  return v;
}

absl::StatusOr<double> Args::GetDouble(const std::string& name) const {
  double v = 0;
  if (!absl::SimpleAtod(Get(name), &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": '", Get(name), "' is not a number"));
  }
  return v;
}

std::string Args::Help() const {
  const std::string& kaldi = KaldiToolName();
  std::string out =
      absl::StrCat("usage: ", kaldi.empty() ? "gmmscore " + command_ : kaldi, " ", usage_, "\n");
  for (const Option& o : options_) {
    std::string left = absl::StrCat("  --", o.name, o.value_name.empty() ? "" : "=" + o.value_name);
    if (left.size() < 28) left.resize(28, ' ');
    absl::StrAppend(&out, left, " ", o.help);
    if (!o.default_value.empty()) absl::StrAppend(&out, " (default ", o.default_value, ")");
    if (o.repeatable) absl::StrAppend(&out, " [repeatable]");
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace gmmscore
