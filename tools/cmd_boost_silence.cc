// gmmscore boost-silence: Kaldi's gmm-boost-silence. Multiplies the mixture weights of every pdf
// that the listed phones use by --boost (1.5), so that alignment and decoding prefer those phones
// (recipes boost silence by 1.25); same arguments, options, log lines and exit status.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "formats/kaldi_model.h"
#include "model/boost_pdfs.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore boost-silence";

// "1:2:3" (Kaldi's colon-separated list), sorted; repeated phones are an error, as in Kaldi.
absl::StatusOr<std::vector<int32_t>> ParsePhoneList(const std::string& list) {
  std::vector<int32_t> phones;
  if (list.empty()) return phones;
  for (const absl::string_view part : absl::StrSplit(list, ':')) {
    int32_t phone = 0;
    if (!absl::SimpleAtoi(part, &phone) || phone <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("silence phone list '", list, "': '", part, "' is not a phone id > 0"));
    }
    phones.push_back(phone);
  }
  std::sort(phones.begin(), phones.end());
  if (std::adjacent_find(phones.begin(), phones.end()) != phones.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("silence phone list '", list, "': a phone is listed twice"));
  }
  return phones;
}

}  // namespace

int RunBoostSilence(int argc, char** argv) {
  Args args("boost-silence",
            "[options] SILENCE-PHONES-LIST MODEL-IN MODEL-OUT\n"
            "Multiplies the GMM weights of every pdf the listed phones use by a factor (Kaldi's\n"
            "gmm-boost-silence). Pdfs shared with other phones are boosted for those too.\n"
            "e.g.: gmmscore boost-silence --boost=1.5 1:2:3 1.mdl 1_boostsil.mdl");
  bool binary = true;
  float boost = 1.5f;
  args.Register("binary", &binary, "write output in binary mode")
      .Register("boost", &boost, "factor by which to boost silence probabilities");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  auto phones = ParsePhoneList(pos[0]);
  if (!phones.ok()) return Fail("boost-silence", phones.status());
  if (phones->empty()) {
    KaldiLog(stderr, "WARNING", kProgram, "no silence phones specified, doing nothing.");
  }
  auto model = ReadKaldiModelFile(pos[1]);
  if (!model.ok()) return Fail("boost-silence", model.status());
  const PhonePdfs pdfs = PdfsForPhones(model->hmm(), *phones);
  if (!pdfs.exclusive) {
    KaldiLog(stderr, "WARNING", kProgram,
             "The pdfs for the silence phones may be shared by other phones (note: this probably "
             "does not matter.)");
  }
  auto boosted = ScalePdfWeights(*model, pdfs.pdfs, boost);
  if (!boosted.ok()) return Fail("boost-silence", boosted.status());
  KaldiLog(stderr, "LOG", kProgram,
           absl::StrCat("Boosted weights for ", pdfs.pdfs.size(), " pdfs, by factor of ",
                        KaldiNumber(boost)));
  if (absl::Status s = WriteKaldiModelFile(*boosted, pos[2], binary); !s.ok()) {
    return Fail("boost-silence", s);
  }
  KaldiLog(stderr, "LOG", kProgram, "Wrote model to " + pos[2]);
  return 0;
}

}  // namespace gmmscore
