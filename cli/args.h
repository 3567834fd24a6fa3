// Command-line options for gmmscore's subcommands, with Kaldi's standard options and conventions
// (src/util/parse-options.h) in every one of them:
//
//   --config=FILE     options from FILE, one "--name=value" a line, '#' comments; read first,
//                     so the command line overrides it (several --config files are read in order)
//   --print-args      print the command line to stderr (Kaldi's tools do by default)
//   --verbose=N       detail in the logs
//   --help            the usage and every option
//
// Names are compared as Kaldi compares them: '_' is '-' and case does not matter. Switches take
// "--name", "--name=true|false" (also t/f, 1/0).
//
// Run as `gmmscore COMMAND`, a valued option may also be "--name value", options and positional
// arguments may interleave, and repeatable options (--model A --model B) collect every value.
// Run under a Kaldi tool's name (cli/invocation.h), the parser is Kaldi's: options come before
// the positional arguments (a lone "--" ends them), a valued option needs "=", the last of a
// repeated option wins, and --print-args defaults to true.
//
// Each subcommand declares its options with help text and default; unknown options are errors.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"

namespace gmmscore {

class Args {
 public:
  struct Option {
    std::string name;
    std::string value_name;  // empty: a boolean switch
    std::string help;
    std::string default_value;
    bool repeatable = false;
  };

  Args(std::string command, std::string usage);
  Args& Add(Option option);
  // An option bound to *field, as Kaldi's ParseOptions::Register binds them: its default is the
  // field's value when registered (printed as Kaldi prints it), and Parse sets the field from the
  // command line or a config file; a value that is not of the field's type is an error naming the
  // option. bool fields are switches; int32_t, float and double take numbers.
  template <typename T>
  Args& Register(const std::string& name, T* field, const std::string& help);

  // Parses argv[first..argc); positional arguments are kept in order. Errors name the option
  // (and for a config file, the file and line).
  absl::Status Parse(int argc, char** argv, int first);
  std::string Help() const;
  const std::string& command() const { return command_; }

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::string Get(const std::string& name) const;
  std::vector<std::string> GetAll(const std::string& name) const;
  absl::StatusOr<int> GetInt(const std::string& name) const;
  absl::StatusOr<double> GetDouble(const std::string& name) const;
  // A switch: true where given as "--name" or "--name=true", else its default ("true" or none).
  bool GetBool(const std::string& name) const { return Get(name) == "true"; }
  const std::vector<std::string>& positional() const { return positional_; }
  // Where an option's value came from, for errors about the value: "FILE:LINE: " for a config
  // file's line, "" for the command line or the default.
  std::string Origin(const std::string& name) const;

 private:
  using Values = std::map<std::string, std::vector<std::string>>;
  const Option* Find(const std::string& name) const;
  // Sets one option from "--name[=value]" (value taken from argv[*i + 1] where allowed).
  absl::Status SetOption(const std::string& arg, bool kaldi, int argc, char** argv, int* i,
                         Values* values) const;
  absl::Status ReadConfigFile(const std::string& path, Values* values,
                              std::map<std::string, std::string>* origins) const;

  // Sets a registered field from its option's value.
  using Binding = std::function<absl::Status(const Args& args)>;
  static std::string DefaultText(bool value) { return value ? "true" : "false"; }
  static std::string DefaultText(int32_t value) { return std::to_string(value); }
  static std::string DefaultText(double value);
  static std::string DefaultText(const std::string& value) { return value; }
  static absl::Status SetField(const Args& args, const std::string& name, bool* field);
  static absl::Status SetField(const Args& args, const std::string& name, int32_t* field);
  static absl::Status SetField(const Args& args, const std::string& name, float* field);
  static absl::Status SetField(const Args& args, const std::string& name, double* field);
  static absl::Status SetField(const Args& args, const std::string& name, std::string* field);

  std::string command_;
  std::string usage_;
  std::vector<Option> options_;
  std::vector<Binding> bindings_;
  Values values_;
  std::map<std::string, std::string> origins_;  // options set by a config file: "FILE:LINE: "
  std::vector<std::string> positional_;
};

template <typename T>
Args& Args::Register(const std::string& name, T* field, const std::string& help) {
  std::string value_name;
  if constexpr (std::is_same_v<T, int32_t>) value_name = "N";
  if constexpr (std::is_floating_point_v<T>) value_name = "F";
  if constexpr (std::is_same_v<T, std::string>) value_name = "STRING";
  if constexpr (std::is_floating_point_v<T>) {
    Add({name, value_name, help, DefaultText(static_cast<double>(*field))});
  } else {
    Add({name, value_name, help, DefaultText(*field)});
  }
  bindings_.push_back([name, field](const Args& args) { return SetField(args, name, field); });
  return *this;
}

// A command line as Kaldi's --print-args prints it: each argument quoted where bash needs it.
std::string QuotedCommandLine(int argc, char** argv);

}  // namespace gmmscore
