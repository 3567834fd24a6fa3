// gmmscored: the scoring daemon. Serves until SIGTERM or SIGINT, then drains (server.h).
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/flags.h"
#include "server/server.h"
#include "server/socket_buffers.h"

int main(int argc, char** argv) {
  // Debian's Abseil is built without NDEBUG, so absl::Mutex (gRPC's lock) checks every
  // acquisition against a process-wide lock-order graph behind one global lock: a debugging aid
  // that serialises the daemon's threads. The tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::StatusOr<gmmscore::server::ServerConfig> config = gmmscore::server::ParseFlags(argc, argv);
  if (!config.ok()) {
    std::fprintf(stderr, "gmmscored: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  // Blocked before any thread starts, so every thread inherits the mask and the signals wait for
  // sigwait below instead of interrupting a thread at a random point.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const absl::Duration drain_timeout = config->drain_timeout;
  const std::string listen = config->listen;
  auto server = gmmscore::server::GmmscoreServer::Start(*std::move(config));
  if (!server.ok()) {
    std::fprintf(stderr, "gmmscored: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  // A Unix-domain socket has no port (gRPC reports 1): its address is what clients need.
  const std::string where =
      absl::StartsWith(listen, "unix") ? listen : absl::StrCat("port ", (*server)->port());
  std::fprintf(stderr, "gmmscored: listening on %s%s\n", where.c_str(),
               (*server)->metrics_port()
                   ? (", metrics on port " + std::to_string((*server)->metrics_port())).c_str()
                   : "");
  if (const std::string warning = gmmscore::server::UnixSocketBufferWarning(listen);
      !warning.empty()) {
    std::fprintf(stderr, "gmmscored: %s\n", warning.c_str());
  }
  if (absl::Status s = (*server)->LoadStartupModels(); !s.ok()) {
    std::fprintf(stderr, "gmmscored: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "gmmscored: serving\n");
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::fprintf(stderr, "gmmscored: %s, draining (up to %s)\n",
               signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
               absl::FormatDuration(drain_timeout).c_str());
  const bool clean = (*server)->Drain(drain_timeout);
  std::fprintf(stderr, "gmmscored: %s\n",
               clean ? "drained, every stream finished"
                     : "drain timeout: streams still open were cancelled");
  // gRPC is shut down and no stream is left. The metrics endpoint (civetweb) would take up to
  // two more seconds to stop its listener in the destructors, so exit now.
  std::fflush(stderr);
  std::_Exit(0);
}
