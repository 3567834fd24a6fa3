#include "tools/args.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gmmscore {

Args& Args::Add(Option option) {
  options_.push_back(std::move(option));
  return *this;
}

const Args::Option* Args::Find(const std::string& name) const {
  for (const Option& o : options_) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

absl::Status Args::Parse(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 3 || arg.rfind("--", 0) != 0) {
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    const Option* o = Find(name);
    if (o == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("gmmscore ", command_, ": unknown option --", name, "\n", Help()));
    }
    if (o->value_name.empty()) {
      // A switch: "--name", or Kaldi's "--name=true|false" (also t/f, 1/0).
      const std::string v = absl::AsciiStrToLower(value);
      if (has_value && v != "true" && v != "t" && v != "1" && v != "false" && v != "f" &&
          v != "0") {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " is true or false, not '", value, "'"));
      }
      value = (!has_value || v == "true" || v == "t" || v == "1") ? "true" : "false";
    } else if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = argv[++i];
    }
    auto& slot = values_[name];
    if (!slot.empty() && !o->repeatable) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " given twice"));
    }
    slot.push_back(value);
  }
  return absl::OkStatus();
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
  std::string out = absl::StrCat("usage: gmmscore ", command_, " ", usage_, "\n");
  for (const Option& o : options_) {
    std::string left = absl::StrCat("  --", o.name, o.value_name.empty() ? "" : " " + o.value_name);
    if (left.size() < 28) left.resize(28, ' ');
    absl::StrAppend(&out, left, " ", o.help);
    if (!o.default_value.empty()) absl::StrAppend(&out, " (default ", o.default_value, ")");
    if (o.repeatable) absl::StrAppend(&out, " [repeatable]");
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace gmmscore
