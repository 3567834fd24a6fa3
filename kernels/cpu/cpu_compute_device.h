// The CPU as a ComputeDevice (kernels/compute_device.h), for the daemon's lanes: each model
// resident as a CpuScorer (the packed layout; OpenMP threads per call), one slot that scores on
// the calling thread. Several CPU devices (the daemon's --batch-workers) share residency index 0,
// so a model is packed once for all of them. Fusion is left to the caller (fused() is null for
// several models): the host fuses window by window.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/compute_device.h"
#include "util/matrix.h"

namespace gmmscore {

class CpuComputeDevice final : public ComputeDevice {
 public:
  // threads: OpenMP threads per scoring call (<= 0: all hardware threads); max_frames: the frames
  // a batch can hold.
  CpuComputeDevice(int32_t threads, int32_t max_frames);
  ~CpuComputeDevice() override;

  const std::string& name() const override { return name_; }
  int32_t residency_index() const override { return 0; }
  int32_t num_slots() const override { return 1; }
  BatchSlot& slot(int32_t i) override;
  absl::StatusOr<std::unique_ptr<ResidentModel>> MakeResident(const GmmModel& model) override;
  absl::Status Prepare(int32_t i, const ResidentModel& model) override;
  int64_t buffer_bytes() const override;

 private:
  class Slot;

  const std::string name_ = "cpu";
  const int32_t threads_;
  std::unique_ptr<Slot> slot_;
};

}  // namespace gmmscore
