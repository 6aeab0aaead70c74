// tprobed: the per-node dump daemon (docs/architecture.md, section 1). This
// file is only the wiring: flags, logger, control server, drain worker, and a
// clean drain-and-write on Shutdown, SIGTERM or SIGINT.

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <string>

#include "daemon/control/connection_policy.h"
#include "daemon/control/control_server.h"
#include "daemon/control/control_service.h"
#include "daemon/ingest/drain_worker.h"
#include "daemon/ingest/registry.h"
#include "daemon/process/crash_cleanup.h"
#include "daemon/process/daemonize.h"
#include "daemon/process/flags.h"
#include "daemon/process/logger.h"
#include "daemon/process/sd_notify.h"
#include "daemon/process/shm_space.h"

int main(int argc, char** argv) {
  using namespace tprobe::daemon;
  auto flags = ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "tprobed: %s\nRun 'tprobed --help' for the flags.\n",
                 flags.status().message().c_str());
    return 2;
  }
  if (flags->help) return std::fputs(Usage().c_str(), stdout) < 0 ? 1 : 0;

  if (tprobe::Status s = CheckExpectedRanks(flags->expect_ranks); !s.ok()) {
    std::fprintf(stderr, "tprobed: %s\n", s.message().c_str());
    return 1;
  }
  auto policy = MakeConnectionPolicy(flags->group, flags->max_connections,
                                     flags->request_timeout);
  if (!policy.ok()) {
    std::fprintf(stderr, "tprobed: %s\n", policy.status().message().c_str());
    return 2;
  }

  StartupReport startup;  // --foreground: reports go nowhere
  if (!flags->foreground) {
    auto detached = Daemonize(LogFilePath(flags->socket));
    if (!detached.ok()) {
      std::fprintf(stderr, "tprobed: %s\n",
                   detached.status().message().c_str());
      return 1;
    }
    startup = std::move(detached).value();
  }
  Logger log = MakeLogger(flags->log_level);
  std::signal(SIGPIPE, SIG_IGN);

  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  Registry registry;
  RankLimits limits;
  limits.max_tensor_bytes = flags->max_tensor_bytes;
  limits.max_open_steps = flags->max_open_steps;
  limits.max_open_bytes = flags->max_open_bytes;
  ControlService service(registry, log, limits);
  ControlServer server(io, flags->socket, service, log, flags->idle_exit,
                       std::move(policy).value());
  if (tprobe::Status s = server.Listen(); !s.ok()) {
    log->error("{}", s.message());
    startup.Failed(s.message());
    return 1;
  }
  DrainWorker drain(registry, log,
                    DrainWorkerOptions{.threads = flags->workers});
  drain.Start();
  signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (!ec) log->info("stopping: signal {}", signo);
    io.stop();
  });
  server.Run([&io](std::string_view) { io.stop(); });
  log->info("tprobed (pid {}) listening on {}", ::getpid(), flags->socket);
  startup.Ready();
  if (tprobe::Status s =
          NotifyService("READY=1\nMAINPID=" + std::to_string(::getpid()));
      !s.ok()) {
    log->warn("{}", s.message());
  }

  io.run();
  server.Close();
  drain.Stop();
  service.FinishAll();
  log->info("every producer drained and written; exiting");
  return 0;
}
