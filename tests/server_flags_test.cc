// gmmscored's command line (server/flags.cc): repeatable flags keep every value, however spelled.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/flags.h"

namespace gmmscore::server {
namespace {

TEST(ServerFlags, RepeatedModelsAndFrontEndsAreAllKept) {
  std::vector<std::string> args = {
      "gmmscored",         "--model",     "mono=a.mdl",   "--front-end=mfcc=online.conf",
      "--model=tri=b.mdl", "--front_end", "plp=plp.conf", "--listen=127.0.0.1:0",
      "--plaintext"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  auto config = ParseFlags(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->models.size(), 2u);
  EXPECT_EQ(config->models[0].name, "mono");
  EXPECT_EQ(config->models[1].path, "b.mdl");
  ASSERT_EQ(config->front_ends.size(), 2u);
  EXPECT_EQ(config->front_ends[0].name, "mfcc");
  EXPECT_EQ(config->front_ends[0].path, "online.conf");
  EXPECT_EQ(config->front_ends[1].name, "plp");
  EXPECT_EQ(config->listen, "127.0.0.1:0");
}

}  // namespace
}  // namespace gmmscore::server
