// The 3xF16 tensor-core kernel (tensor_f16_kernel.cu), launched by TensorKernel
// (tensor_kernel.h) for CudaKernelKind::kTensor3xF16. C++17.
//
// The same blocking and row pipeline as the 3xTF32 kernel, with half-precision products: mma.sync
// m16n8k16 multiplies twice the k of the TF32 m16n8k8 in one instruction at the same rate, so the
// three products of the split take half the tensor-core time and half the frames' registers.
// Half precision has the 11 significant bits of TF32 but 5 exponent bits, so the operands are
// scaled by powers of two (exact) into its range: each parameter column d of the layout by 2^s_d
// (its largest value to [2^13, 2^14)), each frame's row of [x', x'^2] by 2^-s_d and then by 2^-e,
// e chosen per frame so that its largest value is below 2^15; a frame's products are scaled back
// by 2^e as they are added in float32. Each scaled operand a is split as hi = half(a),
// lo = half((a - hi) 2^11), and a.b = hi.hi + (hi.lo_b + lo_a.hi) 2^-11: hi.hi in one accumulator
// restarted every 16 products (as the 3xTF32 kernel does, against the tensor cores' truncation),
// the two corrections, 2^11 smaller in the sum, in one k = 16 product a chunk, accumulated apart.
#pragma once

#include <cstdint>

#include "kernels/cuda/score/tensor_model_view.h"

namespace gmmscore {

using TensorKernelFunction = void (*)(TensorModelView, const float*, int32_t, float*, float*);

// The 3xF16 kernel for models of `chunks` chunks of 4 dimensions (1 to kTensorMaxChunks).
TensorKernelFunction TensorF16KernelFor(int32_t chunks);

}  // namespace gmmscore
