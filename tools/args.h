// Command-line options for gmmscore's subcommands: "--name value", "--name=value", switches as
// "--name" or Kaldi's "--name=true|false", and repeatable options (--model A --model B), which
// absl flags do not offer per subcommand.
// Each subcommand declares its options with help text; unknown options are errors.
#pragma once

#include <map>
#include <string>
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

  Args(std::string command, std::string usage)
      : command_(std::move(command)), usage_(std::move(usage)) {}
  Args& Add(Option option);

  // Parses argv[first..argc); positional arguments are kept in order.
  absl::Status Parse(int argc, char** argv, int first);
  std::string Help() const;

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::string Get(const std::string& name) const;
  std::vector<std::string> GetAll(const std::string& name) const;
  absl::StatusOr<int> GetInt(const std::string& name) const;
  absl::StatusOr<double> GetDouble(const std::string& name) const;
  // A switch: true where given as "--name" or "--name=true", else its default ("true" or none).
  bool GetBool(const std::string& name) const { return Get(name) == "true"; }
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  const Option* Find(const std::string& name) const;
  std::string command_;
  std::string usage_;
  std::vector<Option> options_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace gmmscore
