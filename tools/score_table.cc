#include "tools/score_table.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

struct Utterance {
  std::string key;
  Matrix feats;
  Matrix scores;
  absl::Status status;
  bool done = false;
};

absl::Status InUtterance(const std::string& key, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("utterance ", key, ": ", s.message()));
}

absl::Status ScoreOneAtATime(MatrixTableReader* reader, MatrixTableWriter* writer,
                             const FusedScorer& scorer,
                             const std::function<void(int64_t)>& written) {
  Utterance u;
  while (true) {
    absl::StatusOr<bool> more = reader->Next(&u.key, &u.feats);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    if (absl::Status s = scorer.Score(u.feats, &u.scores); !s.ok()) return InUtterance(u.key, s);
    if (absl::Status s = writer->Write(u.key, u.scores); !s.ok()) return s;
    written(u.feats.rows);
  }
}

}  // namespace

absl::Status ScoreTable(MatrixTableReader* reader, MatrixTableWriter* writer,
                        const std::vector<std::unique_ptr<FusedScorer>>& scorers,
                        const std::function<void(int64_t)>& written) {
  if (scorers.size() == 1) return ScoreOneAtATime(reader, writer, *scorers[0], written);
  std::mutex mu;
  std::condition_variable changed;
  std::deque<std::shared_ptr<Utterance>> todo;              // read, not yet taken by a scorer
  std::map<int64_t, std::shared_ptr<Utterance>> unwritten;  // by position in the table
  bool stop = false;
  std::vector<std::thread> workers;
  for (const std::unique_ptr<FusedScorer>& scorer : scorers) {
    workers.emplace_back([&, s = scorer.get()] {
      std::unique_lock lock(mu);
      while (true) {
        changed.wait(lock, [&] { return stop || !todo.empty(); });
        if (stop) return;
        std::shared_ptr<Utterance> u = std::move(todo.front());
        todo.pop_front();
        lock.unlock();
        u->status = s->Score(u->feats, &u->scores);
        lock.lock();
        u->done = true;
        changed.notify_all();
      }
    });
  }
  const int64_t read_ahead = 2 * int64_t(scorers.size());
  int64_t read = 0, next_to_write = 0;
  bool reading = true;
  absl::Status error;
  while (error.ok() && (reading || next_to_write < read)) {
    if (reading && read - next_to_write < read_ahead) {
      auto u = std::make_shared<Utterance>();
      absl::StatusOr<bool> more = reader->Next(&u->key, &u->feats);
      if (!more.ok()) {
        error = more.status();
      } else if (!*more) {
        reading = false;
      } else {
        std::lock_guard lock(mu);
        unwritten[read++] = u;
        todo.push_back(std::move(u));
        changed.notify_all();
      }
      continue;
    }
    std::shared_ptr<Utterance> u;
    {
      std::unique_lock lock(mu);
      changed.wait(lock, [&] { return unwritten.at(next_to_write)->done; });
      u = std::move(unwritten.at(next_to_write));
      unwritten.erase(next_to_write++);
    }
    error = u->status.ok() ? writer->Write(u->key, u->scores) : InUtterance(u->key, u->status);
    if (error.ok()) written(u->feats.rows);
  }
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  changed.notify_all();
  for (std::thread& w : workers) w.join();
  return error;
}

}  // namespace gmmscore
