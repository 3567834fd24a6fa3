// What the guard kernel (score_guard_kernel.h) reads of a resident model beside the SIMT layout:
// the per-state guard constants, the outlier Gaussians in the direct form, and what the fallback
// needs to score a whole state in the direct form from the SIMT layout. Plain device pointers,
// C++17, like simt_model_view.h.
#pragma once

#include <cstdint>

#include "model/score_guard.h"

namespace gmmscore {

struct GuardModelView {
  const StateGuard* guards = nullptr;      // [num_states]
  const int32_t* outlier_begin = nullptr;  // [num_states + 1] into the outlier arrays
  const float* outlier_params = nullptr;   // [outlier][mu x dim, -1/(2 var) x dim], mu not shifted
  const float* outlier_lconst = nullptr;   // [outlier] L_g, nats
  const int32_t* state_slot = nullptr;     // [num_states] group * kGroupStates + slot
  const int32_t* state_gauss = nullptr;    // [num_states] Gaussians of the state in the layout
  // L_g in nats, indexed as the SIMT layout's gconst; kPadGconst for a Gaussian the expanded form
  // leaves out (zero weight, outlier) and for padding.
  const float* lconst = nullptr;
};

}  // namespace gmmscore
