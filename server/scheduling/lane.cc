#include "server/scheduling/lane.h"

#include <algorithm>
#include <new>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"
#include "util/thread_name.h"

namespace gmmscore::server {

Lane::Lane(std::unique_ptr<ComputeDevice> device, Metrics* metrics)
    : device_(std::move(device)),
      metrics_(metrics),
      busy_(size_t(device_->num_slots()), false),
      busy_seconds_(&metrics->device_busy_seconds(device_->name())),
      completer_([this] {
        NameThisThread(absl::StrCat("lane-", this->device()));
        Complete();
      }) {}

Lane::~Lane() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (completer_.joinable()) completer_.join();
}

absl::StatusOr<std::unique_ptr<ResidentModel>> Lane::MakeResident(const GmmModel& model) {
  return device_->MakeResident(model);
}

absl::Status Lane::Prepare(const ResidentModel& model) {
  for (int32_t i = 0; i < depth(); ++i) {
    // A slot grows only while no job uses it.
    AcquireSlot(i);
    const absl::Status prepared = device_->Prepare(i, model);
    ReleaseSlot(i);
    GMM_RETURN_IF_ERROR(prepared);
  }
  metrics_->buffer_bytes(device()).Set(double(device_->buffer_bytes()));
  return absl::OkStatus();
}

int32_t Lane::AcquireSlot(int32_t wanted) {
  std::unique_lock lock(mu_);
  int32_t slot = -1;
  changed_.wait(lock, [&] {
    if (wanted >= 0) {
      slot = busy_[size_t(wanted)] ? -1 : wanted;
    } else {
      const auto free = std::find(busy_.begin(), busy_.end(), false);
      slot = free == busy_.end() ? -1 : int32_t(free - busy_.begin());
    }
    return slot >= 0;
  });
  busy_[size_t(slot)] = true;
  return slot;
}

void Lane::ReleaseSlot(int32_t slot) {
  {
    std::lock_guard lock(mu_);
    busy_[size_t(slot)] = false;
  }
  changed_.notify_all();
}

void Lane::Run(std::unique_ptr<LaneJob> job, std::function<void()> done) {
  InFlight f;
  f.start = Clock::now();
  f.slot = AcquireSlot(-1);
  BatchSlot& slot = device_->slot(f.slot);
  absl::Status s;
  try {
    s = job->Enqueue(slot, residency_index());
  } catch (const std::bad_alloc&) {
    s = absl::ResourceExhaustedError("out of memory staging a job");
  } catch (const std::exception& e) {
    s = absl::InternalError(absl::StrCat("staging a job failed: ", e.what()));
  }
  if (!s.ok()) {
    job->Complete(slot, absl::Status(s.code(), absl::StrCat(device(), ": ", s.message())),
                  [this, index = f.slot, done = std::move(done)] {
                    ReleaseSlot(index);
                    done();
                  });
    return;
  }
  f.job = std::move(job);
  f.done = std::move(done);
  {
    std::lock_guard lock(mu_);
    if (in_flight_.empty()) busy_since_ = f.start;
    in_flight_.push_back(std::move(f));
  }
  changed_.notify_all();
}

void Lane::Complete() {
  std::unique_lock lock(mu_);
  while (true) {
    changed_.wait(lock, [this] { return stop_ || !in_flight_.empty(); });
    if (in_flight_.empty()) return;  // stopping, nothing left
    InFlight f = std::move(in_flight_.front());
    in_flight_.pop_front();
    lock.unlock();
    BatchSlot& slot = device_->slot(f.slot);
    absl::Status status = slot.Wait();
    const Clock::time_point now = Clock::now();
    metrics_->compute_seconds.Observe(std::chrono::duration<double>(now - f.start).count());
    {
      // Busy time is the union of the jobs' spans (the slots overlap), counted at every
      // completion so that a device never idle still reports it.
      std::lock_guard busy_lock(mu_);
      busy_seconds_->Increment(std::chrono::duration<double>(now - busy_since_).count());
      busy_since_ = in_flight_.empty() ? Clock::time_point::max() : now;
    }
    if (!status.ok()) {
      status = absl::Status(status.code(), absl::StrCat(device(), ": ", status.message()));
    }
    f.job->Complete(slot, status, [this, index = f.slot, done = std::move(f.done)] {
      ReleaseSlot(index);
      done();
    });
    lock.lock();
  }
}

}  // namespace gmmscore::server
