// One version of a served model: the whole model (GMMs and, where the file had one, the HMM) and
// its copies resident on the devices, with its byte gauges and the number of streams using it.
// Shared by the registry, the streams that hold it and the scheduling that scores with it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gmmscore/v1/model_admin.pb.h"
#include "kernels/compute_device.h"
#include "model/gmm_model.h"
#include "server/metrics.h"

namespace gmmscore::server {

// A model resident on one device (or, for the CPU's lanes, on all of them).
struct Residency {
  std::unique_ptr<ResidentModel> model;
  std::string device;  // "cpu", "cuda:0"
};

class ModelEntry {
 public:
  // residents: the model on each device (Lane::residency_index order).
  ModelEntry(std::string name, int64_t version, std::string path, std::string format,
             std::shared_ptr<const GmmModel> model, std::vector<Residency> residents,
             Metrics* metrics);
  ~ModelEntry();
  ModelEntry(const ModelEntry&) = delete;
  ModelEntry& operator=(const ModelEntry&) = delete;

  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  // The whole model: GMMs and, where the file had one, the HMM (alignment needs it).
  const GmmModel& model() const { return *model_; }
  const ResidentModel& resident(int32_t index) const { return *residents_[size_t(index)].model; }
  int32_t num_states() const { return model_->num_states(); }
  int32_t dim() const { return model_->dim(); }
  // Streams that have this entry in their configuration, now.
  std::atomic<int32_t>& active_streams() { return active_streams_; }
  v1::ModelInfo Info(v1::ModelInfo::Status status) const;

 private:
  const std::string name_;
  const int64_t version_;
  const std::string path_;
  const std::string format_;
  const std::shared_ptr<const GmmModel> model_;
  const std::vector<Residency> residents_;
  Metrics* const metrics_;
  std::vector<prometheus::Gauge*> bytes_gauges_;  // per resident
  std::atomic<int32_t> active_streams_{0};
};

}  // namespace gmmscore::server
