#include "server/rpc/model_admin_service.h"

#include <new>

#include "absl/strings/str_cat.h"
#include "server/rpc/model_adaptation.h"
#include "util/status_macros.h"

namespace gmmscore::server {
namespace {

grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

// Compares in time independent of where the strings differ, so the token cannot be guessed a
// byte at a time from response times.
bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

grpc::Status ModelAdminService::Authorize(const grpc::CallbackServerContext& context) const {
  if (admin_token_.empty()) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "model loading and unloading are disabled on this server "
                        "(start gmmscored with --admin-token-file)");
  }
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "ModelAdmin mutations need metadata 'authorization: Bearer TOKEN'");
  }
  const std::string value(it->second.data(), it->second.size());
  if (!ConstantTimeEquals(value, "Bearer " + admin_token_)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "wrong admin token");
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* ModelAdminService::ListModels(grpc::CallbackServerContext* context,
                                                        const v1::ListModelsRequest*,
                                                        v1::ListModelsResponse* response) {
  for (v1::ModelInfo& info : registry_->List()) *response->add_models() = std::move(info);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* ModelAdminService::GetModel(grpc::CallbackServerContext* context,
                                                      const v1::GetModelRequest* request,
                                                      v1::ModelInfo* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<v1::ModelInfo> info = registry_->Get(request->name());
  if (info.ok()) *response = *std::move(info);
  reactor->Finish(ToGrpc(info.status()));
  return reactor;
}

grpc::ServerUnaryReactor* ModelAdminService::LoadModel(grpc::CallbackServerContext* context,
                                                       const v1::LoadModelRequest* request,
                                                       v1::ModelInfo* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (grpc::Status auth = Authorize(*context); !auth.ok()) {
    reactor->Finish(auth);
    return reactor;
  }
  absl::StatusOr<std::string> path = registry_->ResolveUnderRoot(request->path());
  if (!path.ok()) {
    reactor->Finish(ToGrpc(path.status()));
    return reactor;
  }
  // request and response stay valid until Finish.
  loader_->Post([this, reactor, request, response, resolved = *path] {
    absl::StatusOr<v1::ModelInfo> info =
        registry_->Load(request->name(), resolved, request->replace());
    if (info.ok()) *response = *std::move(info);
    reactor->Finish(ToGrpc(info.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ModelAdminService::UnloadModel(grpc::CallbackServerContext* context,
                                                         const v1::UnloadModelRequest* request,
                                                         v1::ModelInfo* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  grpc::Status status = Authorize(*context);
  if (status.ok()) {
    absl::StatusOr<v1::ModelInfo> info = registry_->Unload(request->name());
    if (info.ok()) *response = *std::move(info);
    status = ToGrpc(info.status());
  }
  reactor->Finish(status);
  return reactor;
}

grpc::ServerUnaryReactor* ModelAdminService::AdaptModel(grpc::CallbackServerContext* context,
                                                        const v1::AdaptModelRequest* request,
                                                        v1::ModelInfo* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (grpc::Status auth = Authorize(*context); !auth.ok()) {
    reactor->Finish(auth);
    return reactor;
  }
  if (adaptations_.fetch_add(1) >= adapt_limits_.max_concurrent) {
    adaptations_.fetch_sub(1);
    reactor->Finish(grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat(adapt_limits_.max_concurrent,
                     " adaptations are running already (--max-concurrent-adaptations)")));
    return reactor;
  }
  absl::StatusOr<std::shared_ptr<ModelEntry>> base = registry_->Acquire(request->base_model());
  if (!base.ok()) {
    adaptations_.fetch_sub(1);
    reactor->Finish(ToGrpc(base.status()));
    return reactor;
  }
  // request and response stay valid until Finish; the base entry is held until then.
  loader_->Post([this, reactor, request, response, base = *std::move(base)] {
    absl::StatusOr<v1::ModelInfo> info = [&]() -> absl::StatusOr<v1::ModelInfo> {
      try {
        GMM_ASSIGN_OR_RETURN(GmmModel adapted, AdaptedModel(base->model(), *request, adapt_limits_,
                                                            *kept_frames_, Clock::now()));
        return registry_->Add(request->name(), std::move(adapted),
                              absl::StrCat("adapted from ", base->name(), " v", base->version()),
                              request->replace());
      } catch (const std::bad_alloc&) {
        return absl::ResourceExhaustedError("out of memory adapting the model");
      }
    }();
    if (info.ok()) *response = *std::move(info);
    adaptations_.fetch_sub(1);
    reactor->Finish(ToGrpc(info.status()));
  });
  return reactor;
}

}  // namespace gmmscore::server
