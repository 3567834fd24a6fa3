#include "server/cuda_lane.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/util/status_macros.h"
#include "server/batch_delivery.h"

namespace gmmscore::server {

absl::StatusOr<std::unique_ptr<CudaLane>> CudaLane::Create(int device, int32_t index,
                                                           int32_t max_frames, TaskQueue* delivery,
                                                           Metrics* metrics) {
  std::unique_ptr<CudaLane> lane(new CudaLane(device, index, max_frames, delivery, metrics));
  for (std::unique_ptr<CudaSetWorkspace>& slot : lane->slots_) {
    GMM_ASSIGN_OR_RETURN(slot, CudaSetWorkspace::Create(device));
  }
  lane->completer_ = std::thread([raw = lane.get()] { raw->Complete(); });
  return lane;
}

CudaLane::CudaLane(int device, int32_t index, int32_t max_frames, TaskQueue* delivery,
                   Metrics* metrics)
    : device_(device),
      index_(index),
      max_frames_(max_frames),
      name_(absl::StrCat("cuda:", device)),
      delivery_(delivery),
      metrics_(metrics) {}

CudaLane::~CudaLane() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (completer_.joinable()) completer_.join();
}

absl::StatusOr<ResidentScorer> CudaLane::MakeScorer(const GmmModel& model) {
  CudaScorerOptions options;
  options.device = device_;
  options.max_frames = max_frames_;
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaScorer> scorer, CudaScorer::Create(model, options));
  for (int32_t frames = 1; frames < max_frames_; frames *= 2) {
    GMM_RETURN_IF_ERROR(scorer->ConfigFor(frames).status());
  }
  GMM_RETURN_IF_ERROR(scorer->ConfigFor(max_frames_).status());
  const WorkspaceCapacity capacity{max_frames_, scorer->dim(), scorer->num_states(), 1,
                                   scorer->split_scratch_floats(max_frames_)};
  for (int32_t i = 0; i < kSlots; ++i) {
    // A slot grows only while no batch uses it.
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return !busy_[size_t(i)]; });
      busy_[size_t(i)] = true;
    }
    const absl::Status reserved = slots_[size_t(i)]->Reserve(capacity);
    ReleaseSlot(i);
    GMM_RETURN_IF_ERROR(reserved);
  }
  int64_t buffers = 0;
  for (const auto& slot : slots_) buffers += slot->device_bytes();
  metrics_->buffer_bytes(name_).Set(double(buffers));
  ResidentScorer resident;
  resident.device = name_;
  resident.bytes = scorer->device_bytes();
  resident.scorer = std::move(scorer);
  return resident;
}

int32_t CudaLane::AcquireSlot() {
  std::unique_lock lock(mu_);
  int32_t slot = -1;
  changed_.wait(lock, [&] {
    const auto free = std::find(busy_.begin(), busy_.end(), false);
    slot = free == busy_.end() ? -1 : int32_t(free - busy_.begin());
    return slot >= 0;
  });
  busy_[size_t(slot)] = true;
  return slot;
}

void CudaLane::ReleaseSlot(int32_t slot) {
  {
    std::lock_guard lock(mu_);
    busy_[size_t(slot)] = false;
  }
  changed_.notify_all();
}

absl::Status CudaLane::Enqueue(CudaSetWorkspace& workspace, const Batch& batch, bool* per_model) {
  const ModelSet& set = *batch.models;
  std::vector<const CudaScorer*> models;
  int64_t split_floats = 0;
  for (const std::shared_ptr<ModelEntry>& entry : set.models) {
    const auto* scorer = dynamic_cast<const CudaScorer*>(&entry->scorer(index_));
    if (scorer == nullptr) {
      return absl::InternalError(
          absl::StrCat("model '", entry->name(), "' has no CUDA scorer on ", name_));
    }
    split_floats = std::max(split_floats, scorer->split_scratch_floats(max_frames_));
    models.push_back(scorer);
  }
  // A set of several models needs room for their scores side by side: grown at its first batch.
  GMM_RETURN_IF_ERROR(workspace.Reserve({max_frames_, models[0]->dim(), models[0]->num_states(),
                                         int32_t(models.size()), split_floats}));
  std::vector<FusionSegment> segments;
  float* staged = workspace.staged_feats();
  for (const Window& w : batch.windows) {
    const bool fused = FusedByBackend(set, w);
    *per_model = *per_model || !fused;
    segments.push_back({w.feats.rows, fused && models.size() > 1 ? w.fusion.get() : nullptr});
    std::memcpy(staged, w.feats.data.data(), w.feats.data.size() * sizeof(float));
    staged += w.feats.data.size();
  }
  return workspace.Enqueue(models, segments, int32_t(batch.frames), *per_model);
}

void CudaLane::Run(Batch batch, std::function<void()> done) {
  InFlight f;
  f.start = Clock::now();
  f.slot = AcquireSlot();
  if (absl::Status s = Enqueue(*slots_[size_t(f.slot)], batch, &f.per_model); !s.ok()) {
    ReleaseSlot(f.slot);
    done();
    DeliverFailure(std::move(batch), absl::Status(s.code(), absl::StrCat(name_, ": ", s.message())),
                   delivery_);
    return;
  }
  f.batch = std::move(batch);
  f.done = std::move(done);
  {
    std::lock_guard lock(mu_);
    in_flight_.push_back(std::move(f));
  }
  changed_.notify_all();
}

void CudaLane::Complete() {
  std::unique_lock lock(mu_);
  while (true) {
    changed_.wait(lock, [this] { return stop_ || !in_flight_.empty(); });
    if (in_flight_.empty()) return;  // stopping, nothing left
    InFlight f = std::move(in_flight_.front());
    in_flight_.pop_front();
    lock.unlock();
    CudaSetWorkspace& workspace = *slots_[size_t(f.slot)];
    const absl::Status status = workspace.Wait();
    metrics_->compute_seconds.Observe(
        std::chrono::duration<double>(Clock::now() - f.start).count());
    auto release = [this, slot = f.slot, done = std::move(f.done)] {
      ReleaseSlot(slot);
      done();
    };
    if (!status.ok()) {
      release();
      DeliverFailure(std::move(f.batch),
                     absl::Status(status.code(), absl::StrCat(name_, ": ", status.message())),
                     delivery_);
    } else {
      const ModelSet& set = *f.batch.models;
      BatchScores scores;
      scores.states = set.models.front()->num_states();
      scores.fused = workspace.fused();
      if (f.per_model) {
        for (size_t k = 0; k < set.models.size(); ++k) {
          scores.per_model.push_back(workspace.model_scores(int32_t(k)));
        }
      }
      DeliverScores(std::move(f.batch), scores, delivery_, std::move(release));
    }
    lock.lock();
  }
}

}  // namespace gmmscore::server
