// A small trainer for the fault-injection suite (tests/faults/faults_test.py):
// it records modules with tensors through the public tprobe::Client, on the
// main thread and, with --threads, on extra threads at the same time (as
// autograd threads hook beside the forward thread). After each step it
// prints "step N" (flushed), so the test can kill it or the daemon at a
// chosen point. At the end it writes its counters and its longest step as
// JSON to --report.
//
// --fork S  forks after step S; the child (no exec) records a call through
//           the inherited Client and destroys it, which must neither write
//           into the parent's rings nor wait for a daemon; the parent goes
//           on.
// --hold F  after --steps steps, goes on stepping until file F exists (at
//           most 120 s), so the test can look at `tprobe status` while the
//           rank is alive.
// --gate F  after step --gate-step (0), waits until file F exists (at most
//           120 s), so the test can stop or kill the daemon at a known step.
// Threads: --threads T helper threads live for the whole run (as autograd
// threads do, each keeping its ring) and record while the main thread does.

#include <sys/wait.h>
#include <unistd.h>

#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tprobe/client.h"

namespace {

struct Args {
  std::string config, socket, dump, report, hold, gate;
  int rank = 0;
  int steps = 10;
  int entries = 8;
  int floats = 256;
  int threads = 0;
  int pause_ms = 0;
  int gate_step = 0;
  int fork_after = -1;
};

bool Parse(int argc, char** argv, Args* a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--config")
      a->config = v;
    else if (k == "--socket")
      a->socket = v;
    else if (k == "--dump")
      a->dump = v;
    else if (k == "--report")
      a->report = v;
    else if (k == "--hold")
      a->hold = v;
    else if (k == "--gate")
      a->gate = v;
    else if (k == "--gate-step")
      a->gate_step = std::atoi(v);
    else if (k == "--rank")
      a->rank = std::atoi(v);
    else if (k == "--steps")
      a->steps = std::atoi(v);
    else if (k == "--entries")
      a->entries = std::atoi(v);
    else if (k == "--floats")
      a->floats = std::atoi(v);
    else if (k == "--threads")
      a->threads = std::atoi(v);
    else if (k == "--pause-ms")
      a->pause_ms = std::atoi(v);
    else if (k == "--fork")
      a->fork_after = std::atoi(v);
    else
      return false;
  }
  return argc % 2 == 1;
}

// `count` module calls named {prefix}{i}, each with an input and an output.
void Record(tprobe::Client& client, const std::string& prefix, int count,
            const std::vector<float>& x) {
  const std::vector<int64_t> shape = {static_cast<int64_t>(x.size())};
  for (int i = 0; i < count; ++i) {
    auto call = client.Module(prefix + std::to_string(i), "Linear");
    call.Input(tprobe::TensorData::Of(x, shape));
    call.Output(tprobe::TensorData::Of(x, shape));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!Parse(argc, argv, &a)) {
    std::fprintf(stderr, "fault_trainer: bad arguments (see its header)\n");
    return 2;
  }
  tprobe::ClientOptions options;
  options.config_path = a.config;
  options.socket_path = a.socket;
  options.dump_path = a.dump;
  options.rank = a.rank;
  std::string error;
  auto client = tprobe::Client::Create(options, &error);
  if (!client) {
    std::printf("refused: %s\n", error.c_str());
    std::fflush(stdout);
    return 3;
  }
  std::vector<float> x(static_cast<size_t>(a.floats));
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i);
  double longest_step_ms = 0;
  const auto hold_deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto more = [&](int step) {
    if (step < a.steps) return true;
    return !a.hold.empty() && !std::filesystem::exists(a.hold) &&
           std::chrono::steady_clock::now() < hold_deadline;
  };
  // Two phases a step: the helpers record between the first two arrivals.
  std::barrier sync(a.threads + 1);
  bool done = false;
  std::vector<std::thread> helpers;
  for (int t = 0; t < a.threads; ++t) {
    helpers.emplace_back([&, t] {
      for (;;) {
        sync.arrive_and_wait();
        if (done) return;
        Record(*client, "thread" + std::to_string(t) + "_", a.entries, x);
        sync.arrive_and_wait();
      }
    });
  }
  for (int step = 0; more(step); ++step) {
    const auto begin = std::chrono::steady_clock::now();
    client->Start();
    sync.arrive_and_wait();
    Record(*client, "layer", a.entries, x);
    sync.arrive_and_wait();
    client->Stop();
    client->Step();
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - begin)
                          .count();
    if (ms > longest_step_ms) longest_step_ms = ms;
    std::printf("step %d\n", step);
    std::fflush(stdout);
    if (step == a.fork_after) {
      const pid_t child = ::fork();
      if (child == 0) {
        // Only this thread exists here: record, destroy the Client, leave.
        client->Start();
        Record(*client, "child", 1, x);
        client.reset();
        std::_Exit(0);
      }
      int status = 0;
      ::waitpid(child, &status, 0);
      std::printf("child exited %d\n",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      std::fflush(stdout);
    }
    if (a.pause_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(a.pause_ms));
    }
    if (step == a.gate_step && !a.gate.empty()) {
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(120);
      while (!std::filesystem::exists(a.gate) &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  }
  done = true;
  sync.arrive_and_wait();
  for (auto& h : helpers) h.join();
  const tprobe::ClientCounters c = client->counters();
  client.reset();
  if (!a.report.empty()) {
    if (FILE* f = std::fopen(a.report.c_str(), "w")) {
      std::fprintf(f,
                   "{\"records_written\": %llu, \"dropped_no_daemon\": %llu, "
                   "\"dropped_ring_full\": %llu, \"dropped_too_large\": %llu, "
                   "\"longest_step_ms\": %.3f}\n",
                   static_cast<unsigned long long>(c.records_written),
                   static_cast<unsigned long long>(c.dropped_no_daemon),
                   static_cast<unsigned long long>(c.dropped_ring_full),
                   static_cast<unsigned long long>(c.dropped_too_large),
                   longest_step_ms);
      std::fclose(f);
    }
  }
  return 0;
}
