#include "server/model_entry.h"

#include <utility>

namespace gmmscore::server {

ModelEntry::ModelEntry(std::string name, int64_t version, std::string path, std::string format,
                       std::shared_ptr<const GmmModel> model, std::vector<Residency> residents,
                       Metrics* metrics)
    : name_(std::move(name)),
      version_(version),
      path_(std::move(path)),
      format_(std::move(format)),
      model_(std::move(model)),
      residents_(std::move(residents)),
      metrics_(metrics) {
  for (const Residency& r : residents_) {
    bytes_gauges_.push_back(&metrics->model_bytes(name_, version_, r.device));
    bytes_gauges_.back()->Set(double(r.model->bytes()));
  }
}

ModelEntry::~ModelEntry() {
  for (prometheus::Gauge* gauge : bytes_gauges_) metrics_->RemoveModelBytes(gauge);
}

v1::ModelInfo ModelEntry::Info(v1::ModelInfo::Status status) const {
  v1::ModelInfo info;
  info.set_name(name_);
  info.set_version(version_);
  info.set_status(status);
  info.set_num_states(num_states());
  info.set_num_gaussians(model_->num_gauss());
  info.set_dim(dim());
  for (const Residency& r : residents_) {
    v1::DeviceBytes* bytes = info.add_bytes_per_device();
    bytes->set_device(r.device);
    bytes->set_bytes(r.model->bytes());
  }
  info.set_path(path_);
  info.set_format(format_);
  info.set_active_streams(active_streams_.load());
  return info;
}

}  // namespace gmmscore::server
