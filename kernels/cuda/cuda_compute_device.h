// One GPU as a ComputeDevice (kernels/compute_device.h), for the daemon's lanes: models resident
// with their kernel choices made for every batch size when a slot is prepared, and two batch
// slots (a CudaWorkspace each: pinned staging, device buffers, a CUDA stream), so that one batch's
// features go in while the other's kernels run and its scores come out. Max, log-linear and
// log-add are fused on the device.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/compute_device.h"
#include "kernels/cuda/score/cuda_resident_model.h"
#include "kernels/cuda/score/cuda_workspace.h"
#include "kernels/cuda/score/kernel_chooser.h"

namespace gmmscore {

class CudaComputeDevice final : public ComputeDevice {
 public:
  // device: the CUDA ordinal; index: the residency index (one per GPU); max_frames: the frames
  // a batch can hold. Fails with Unavailable for no such device.
  static absl::StatusOr<std::unique_ptr<CudaComputeDevice>> Create(int device, int32_t index,
                                                                   int32_t max_frames);
  ~CudaComputeDevice() override;

  const std::string& name() const override { return name_; }
  int32_t residency_index() const override { return index_; }
  int32_t num_slots() const override { return kSlots; }
  BatchSlot& slot(int32_t i) override;
  // The model's layouts for the kernels kAuto chooses from; ResourceExhausted naming the device
  // and the bytes where they do not fit.
  absl::StatusOr<std::unique_ptr<ResidentModel>> MakeResident(const GmmModel& model) override;
  // Grows slot i's buffers for batches of max_frames frames of the model and, on the first slot
  // prepared, runs the model's autotune for every batch size at once.
  absl::Status Prepare(int32_t i, const ResidentModel& model) override;
  int64_t buffer_bytes() const override;
  // A CudaViterbi on this GPU.
  absl::StatusOr<std::unique_ptr<BatchViterbi>> MakeViterbi() override;

 private:
  static constexpr int32_t kSlots = 2;
  class Slot;

  CudaComputeDevice(int device, int32_t index, int32_t max_frames);

  const int device_;
  const int32_t index_;
  const int32_t max_frames_;
  const std::string name_;
  std::array<std::unique_ptr<Slot>, kSlots> slots_;
};

}  // namespace gmmscore
