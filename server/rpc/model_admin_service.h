// gmmscore.v1.ModelAdmin: ListModels and GetModel for anyone; LoadModel and UnloadModel only with
// the admin token (metadata "authorization: Bearer TOKEN"; --admin-token-file), refused with
// PERMISSION_DENIED when the server has no token. Loads run on a loader thread, never on a gRPC
// thread.
#pragma once

#include <string>

#include "gmmscore/v1/model_admin.grpc.pb.h"
#include "server/model_registry.h"
#include "server/scheduling/task_queue.h"

namespace gmmscore::server {

class ModelAdminService final : public v1::ModelAdmin::CallbackService {
 public:
  // An empty token disables mutations.
  ModelAdminService(ModelRegistry* registry, TaskQueue* loader, std::string admin_token)
      : registry_(registry), loader_(loader), admin_token_(std::move(admin_token)) {}

  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;
  grpc::ServerUnaryReactor* GetModel(grpc::CallbackServerContext* context,
                                     const v1::GetModelRequest* request,
                                     v1::ModelInfo* response) override;
  grpc::ServerUnaryReactor* LoadModel(grpc::CallbackServerContext* context,
                                      const v1::LoadModelRequest* request,
                                      v1::ModelInfo* response) override;
  grpc::ServerUnaryReactor* UnloadModel(grpc::CallbackServerContext* context,
                                        const v1::UnloadModelRequest* request,
                                        v1::ModelInfo* response) override;

 private:
  grpc::Status Authorize(const grpc::CallbackServerContext& context) const;

  ModelRegistry* const registry_;
  TaskQueue* const loader_;
  const std::string admin_token_;
};

}  // namespace gmmscore::server
