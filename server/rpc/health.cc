#include "server/rpc/health.h"

namespace gmmscore::server {

namespace {
constexpr char kScorerService[] = "gmmscore.v1.Scorer";
}  // namespace

std::string HealthStatus::ModelServiceName(const std::string& model) {
  return std::string(kScorerService) + "/" + model;
}

void HealthStatus::Attach(grpc::HealthCheckServiceInterface* service) {
  std::lock_guard lock(mu_);
  service_ = service;
  for (const auto& [name, serving] : states_) service_->SetServingStatus(name, serving);
  if (drained_) service_->Shutdown();
}

void HealthStatus::SetServerReady(bool ready) {
  std::lock_guard lock(mu_);
  Set("", ready);
  Set(kScorerService, ready);
}

void HealthStatus::SetModel(const std::string& name, bool serving) {
  std::lock_guard lock(mu_);
  Set(ModelServiceName(name), serving);
}

void HealthStatus::Drain() {
  std::lock_guard lock(mu_);
  drained_ = true;
  for (auto& [name, serving] : states_) serving = false;
  // Sets every name NOT_SERVING and ignores later updates.
  if (service_ != nullptr) service_->Shutdown();
}

void HealthStatus::Set(const std::string& service_name, bool serving) {
  if (drained_) return;
  states_[service_name] = serving;
  if (service_ != nullptr) service_->SetServingStatus(service_name, serving);
}

}  // namespace gmmscore::server
