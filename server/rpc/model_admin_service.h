// gmmscore.v1.ModelAdmin: ListModels and GetModel for anyone; LoadModel, UnloadModel and
// AdaptModel only with
// the admin token (metadata "authorization: Bearer TOKEN"; --admin-token-file), refused with
// PERMISSION_DENIED when the server has no token. Loads and adaptations run on a loader thread,
// never on a gRPC thread.
#pragma once

#include <atomic>
#include <string>

#include "gmmscore/v1/model_admin.grpc.pb.h"
#include "server/config.h"
#include "server/kept_frames.h"
#include "server/model_registry.h"
#include "server/scheduling/task_queue.h"

namespace gmmscore::server {

class ModelAdminService final : public v1::ModelAdmin::CallbackService {
 public:
  // An empty token disables mutations.
  ModelAdminService(ModelRegistry* registry, TaskQueue* loader, std::string admin_token,
                    AdaptLimits adapt_limits, KeptFrames* kept_frames)
      : registry_(registry),
        loader_(loader),
        admin_token_(std::move(admin_token)),
        adapt_limits_(adapt_limits),
        kept_frames_(kept_frames) {}

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
  grpc::ServerUnaryReactor* AdaptModel(grpc::CallbackServerContext* context,
                                       const v1::AdaptModelRequest* request,
                                       v1::ModelInfo* response) override;

 private:
  grpc::Status Authorize(const grpc::CallbackServerContext& context) const;

  ModelRegistry* const registry_;
  TaskQueue* const loader_;
  const std::string admin_token_;
  const AdaptLimits adapt_limits_;
  KeptFrames* const kept_frames_;        // AdaptUtterance.from_stream
  std::atomic<int32_t> adaptations_{0};  // AdaptModel calls in progress
};

}  // namespace gmmscore::server
