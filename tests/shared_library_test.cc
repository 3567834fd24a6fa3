// util/shared_library.h: a library opened by name and its functions found, and the errors a user
// sees where either is missing.
#include "util/shared_library.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gmmscore {
namespace {

TEST(SharedLibraryTest, LoadsALibraryAndItsFunctions) {
  auto libm = SharedLibrary::Open("libm.so.6", "this test", "the C library");
  ASSERT_TRUE(libm.ok()) << libm.status();
  double (*cosine)(double) = nullptr;
  ASSERT_TRUE(libm->Load("cos", &cosine).ok());
  EXPECT_EQ(cosine(0.25), std::cos(0.25));
  const absl::Status missing = libm->Load("gmmscore_no_such_function", &cosine);
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find("libm.so.6 has no gmmscore_no_such_function"),
            absl::string_view::npos)
      << missing;
}

TEST(SharedLibraryTest, AMissingLibrarySaysWhoNeedsItAndWhatToInstall) {
  auto library = SharedLibrary::Open("libgmmscore-no-such-library.so.7", "reading audio",
                                     "Debian: apt-get install libsndfile1");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(library.status().message());
  EXPECT_EQ(message.rfind("reading audio needs libgmmscore-no-such-library.so.7 (Debian: "
                          "apt-get install libsndfile1): ",
                          0),
            0u)
      << message;
}

}  // namespace
}  // namespace gmmscore
