// The LOG lines gmm-est and gmm-mixup print after mixing (Kaldi's AmDiagGmm::MergeByCount and
// SplitByCount word them): one for merging down, one for splitting up, each where it was asked.
#pragma once

#include <cstdio>
#include <string>

#include "tools/kaldi_log.h"
#include "train/kaldi_form_update.h"

namespace gmmscore {

inline void LogKaldiMix(const std::string& program, const MixDownOptions& down,
                        const MixUpOptions& up, const KaldiMixSummary& mixed, int32_t num_pdfs) {
  if (down.target != 0) {
    KaldiLog(stderr, "LOG", program,
             "Merged " + KaldiNumber(num_pdfs) + " states with target = " +
                 KaldiNumber(down.target) + ", power = " + KaldiNumber(down.power) +
                 " and min_count = " + KaldiNumber(down.min_count) + ", merged from " +
                 KaldiNumber(mixed.before_down) + " to " + KaldiNumber(mixed.after_down));
  }
  if (up.target != 0) {
    KaldiLog(stderr, "LOG", program,
             "Split " + KaldiNumber(num_pdfs) + " states with target = " + KaldiNumber(up.target) +
                 ", power = " + KaldiNumber(up.power) +
                 ", perturb_factor = " + KaldiNumber(up.perturb_factor) +
                 " and min_count = " + KaldiNumber(up.min_count) + ", split #Gauss from " +
                 KaldiNumber(mixed.before_up) + " to " + KaldiNumber(mixed.after_up));
  }
}

}  // namespace gmmscore
