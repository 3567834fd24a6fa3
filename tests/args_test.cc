// cli/args: options bound to the fields that hold their defaults (Register, as Kaldi's
// ParseOptions::Register): the default printed from the field, the field set from the command
// line and from a config file, switches, and errors that name the option.
#include "cli/args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

struct Options {
  float beam = 200.0f;
  double floor = 1.0e-5;
  int32_t threads = 0;
  bool careful = false;
  bool binary = true;
  std::string name = "mono";
};

absl::Status Parse(Args& args, std::vector<std::string> words) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return args.Parse(static_cast<int>(argv.size()), argv.data(), 0);
}

Args Registered(Options* o) {
  Args args("test", "[options]");
  args.Register("beam", &o->beam, "a beam")
      .Register("floor", &o->floor, "a floor")
      .Register("threads", &o->threads, "threads")
      .Register("careful", &o->careful, "a switch")
      .Register("binary", &o->binary, "a switch on by default")
      .Register("name", &o->name, "a name");
  return args;
}

TEST(ArgsRegister, DefaultsComeFromTheFieldsAndParsingSetsThem) {
  Options o;
  Args args = Registered(&o);
  const std::string help = args.Help();
  for (const char* line : {"--beam=F", "(default 200)", "(default 1e-05)", "--threads=N",
                           "--careful", "(default false)", "(default true)", "(default mono)"}) {
    EXPECT_NE(help.find(line), std::string::npos) << line << "\n" << help;
  }
  ASSERT_TRUE(Parse(args, {"--beam=10.5", "--threads", "3", "--careful", "--binary=false",
                           "--name=tri3b", "a.mdl"})
                  .ok());
  EXPECT_EQ(o.beam, 10.5f);
  EXPECT_EQ(o.floor, 1.0e-5);  // not given: the default
  EXPECT_EQ(o.threads, 3);
  EXPECT_TRUE(o.careful);
  EXPECT_FALSE(o.binary);
  EXPECT_EQ(o.name, "tri3b");
  EXPECT_EQ(args.positional(), std::vector<std::string>{"a.mdl"});
}

TEST(ArgsRegister, AConfigFileSetsFieldsUnderTheCommandLine) {
  TempDir dir;
  WriteFile(dir.file("c.conf"), "--beam=6 # comment\n--floor=0.25\n");
  Options o;
  Args args = Registered(&o);
  ASSERT_TRUE(Parse(args, {"--config=" + dir.file("c.conf"), "--beam=8"}).ok());
  EXPECT_EQ(o.beam, 8.0f);
  EXPECT_EQ(o.floor, 0.25);
}

TEST(ArgsRegister, ABadValueIsAnErrorNamingTheOption) {
  for (const char* bad : {"--beam=wide", "--threads=1.5", "--threads=many"}) {
    Options o;
    Args args = Registered(&o);
    const absl::Status s = Parse(args, {bad});
    ASSERT_FALSE(s.ok()) << bad;
    const std::string name = std::string(bad).substr(2, std::string(bad).find('=') - 2);
    EXPECT_NE(s.message().find("--" + name), absl::string_view::npos) << s;
  }
}

}  // namespace
}  // namespace gmmscore::testing
