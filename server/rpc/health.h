// grpc.health.v1 serving status, through gRPC's built-in health service:
//   ""                        the server: SERVING once the --model models are loaded;
//   "gmmscore.v1.Scorer"      the same, under the scoring service's own name;
//   "gmmscore.v1.Scorer/NAME" model NAME: NOT_SERVING while loading or after unload.
// Draining turns every name NOT_SERVING for good.
#pragma once

#include <grpcpp/health_check_service_interface.h>

#include <map>
#include <mutex>
#include <string>

namespace gmmscore::server {

class HealthStatus {
 public:
  static std::string ModelServiceName(const std::string& model);

  // The service exists once the gRPC server is built; states set before are replayed.
  void Attach(grpc::HealthCheckServiceInterface* service);
  void SetServerReady(bool ready);
  void SetModel(const std::string& name, bool serving);
  void Drain();

 private:
  void Set(const std::string& service_name, bool serving);  // with mu_ held

  std::mutex mu_;
  grpc::HealthCheckServiceInterface* service_ = nullptr;
  std::map<std::string, bool> states_;
  bool drained_ = false;
};

}  // namespace gmmscore::server
