// node_bench: what one tprobed costs and sustains on a node (not a timed
// test: it reports figures, see README "Performance"). It starts its own
// tprobed and forks real trainer processes that use libtprobe:
//
//   1. daemon CPU per entry: one rank, small tensors, statistics at L0;
//      the daemon's CPU time (user + system, from /proc) over the entries
//      written, from the first Start to the last step's files.
//   2. ingest: N ranks at once (default 8) under policy block, larger
//      tensors: entries/s, tensor GB/s and the records dropped (from every
//      step's tprobe.json; the target is 0).
//   3. warm rings: one rank, the mean step time of the first three dumped
//      steps over the median of the later ones (target <= 1.2), with a
//      pause between steps long enough for the daemon to drain each one,
//      so that the ratio measures the rings' first touch, not the daemon.
//   4. steps: N ranks of small steps (one entry each) at full speed under
//      policy block: the node's sustained steps per second on disk, and
//      the CPU of the daemon's control thread (its main thread, which runs
//      the socket server) per step.
//
// Usage: node_bench --tprobed PATH [--ranks N] [--quick]

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tprobe/client.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Load {
  int steps = 0;
  int calls_per_step = 0;        // module calls: one entry each
  size_t floats_per_tensor = 0;  // input and output of every call
  // Untimed pause after each step, so that the daemon has drained it and
  // the next step's time is the trainer's own, not a wait for ring space.
  std::chrono::milliseconds pause{0};
};

// User and system CPU of process `pid`, or of its thread `tid`.
double CpuSeconds(pid_t pid, pid_t tid = 0) {
  std::ifstream in(tid == 0 ? "/proc/" + std::to_string(pid) + "/stat"
                            : "/proc/" + std::to_string(pid) + "/task/" +
                                  std::to_string(tid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string WriteConfig(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name + ".json";
  std::ofstream(path) << R"({"task": "statistics", "dump_path": ")" << dir
                      << "/" << name
                      << R"(", "rank": [], "step": [], "level": "L0",
                      "tprobe": {"policy": "block", "block_timeout_ms": 10000}})";
  return path;
}

// The trainer: `load` through libtprobe; writes its step times (seconds)
// to `times` when not empty. Runs in a forked child; never returns.
[[noreturn]] void Trainer(const std::string& config, const std::string& socket,
                          const Load& load, const std::string& times) {
  tprobe::ClientOptions options;
  options.config_path = config;
  options.socket_path = socket;
  std::string error;
  auto client = tprobe::Client::Create(options, &error);
  if (!client || !client->connected()) {
    std::fprintf(stderr, "node_bench: trainer cannot connect: %s\n",
                 error.c_str());
    ::_exit(1);
  }
  std::vector<float> values(load.floats_per_tensor);
  std::iota(values.begin(), values.end(), 0.0f);
  const int64_t shape[] = {static_cast<int64_t>(values.size())};
  tprobe::TensorData t;
  t.shape = shape;
  t.ndim = 1;
  t.data = values.data();
  t.nbytes = values.size() * sizeof(float);
  std::vector<double> step_times;
  for (int step = 0; step < load.steps; ++step) {
    const auto begin = Clock::now();
    client->Start();
    for (int i = 0; i < load.calls_per_step; ++i) {
      auto call = client->BeginModule("layers." + std::to_string(i), "Linear");
      client->AddTensor(call, tprobe::Section::kInput, t);
      client->AddTensor(call, tprobe::Section::kOutput, t);
      client->EndCall(call);
    }
    client->Stop();
    client->Step();
    step_times.push_back(
        std::chrono::duration<double>(Clock::now() - begin).count());
    std::this_thread::sleep_for(load.pause);
  }
  client.reset();  // Goodbye
  if (!times.empty()) {
    std::ofstream out(times);
    for (double s : step_times) out << s << "\n";
  }
  ::_exit(0);
}

struct Daemon {
  pid_t pid = -1;
  std::string socket;
};

Daemon StartDaemon(const std::string& binary, const std::string& dir) {
  Daemon d;
  d.socket = dir + "/tprobed.sock";
  d.pid = ::fork();
  if (d.pid == 0) {
    std::freopen((dir + "/tprobed.log").c_str(), "w", stderr);
    ::execl(binary.c_str(), binary.c_str(), "--socket", d.socket.c_str(),
            "--foreground", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!fs::exists(d.socket) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return d;
}

void StopDaemon(const Daemon& d) {
  ::kill(d.pid, SIGTERM);
  ::waitpid(d.pid, nullptr, 0);
}

// Waits until the last step of every rank is written.
void WaitWritten(const std::vector<std::string>& dumps, int steps) {
  for (const std::string& dump : dumps) {
    const std::string last =
        dump + "/step" + std::to_string(steps - 1) + "/rank/tprobe.json";
    while (!fs::exists(last)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

// Sums a counter over every step's tprobe.json of `dump`.
uint64_t SumAccounting(const std::string& dump, const std::string& key) {
  uint64_t total = 0;
  for (const auto& step : fs::directory_iterator(dump)) {
    std::ifstream in(step.path() / "rank" / "tprobe.json");
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    const auto at = text.find("\"" + key + "\": ");
    if (at != std::string::npos) {
      total += std::stoull(text.substr(at + key.size() + 4));
    }
  }
  return total;
}

struct Run {
  double wall_s = 0;
  double daemon_cpu_s = 0;
  double control_cpu_s = 0;  // the daemon's main thread: the socket server
  uint64_t entries = 0;
  uint64_t dropped = 0;
  std::vector<std::string> times;  // per rank, when asked
};

Run RunRanks(const std::string& tprobed, const std::string& dir, int ranks,
             const Load& load, bool keep_times) {
  const Daemon daemon = StartDaemon(tprobed, dir);
  std::vector<std::string> dumps;
  std::vector<pid_t> pids;
  Run run;
  const double cpu0 = CpuSeconds(daemon.pid);
  const double control0 = CpuSeconds(daemon.pid, daemon.pid);
  const auto begin = Clock::now();
  for (int r = 0; r < ranks; ++r) {
    const std::string name = "rank" + std::to_string(r);
    const std::string config = WriteConfig(dir, name);
    dumps.push_back(dir + "/" + name);
    run.times.push_back(keep_times ? dir + "/" + name + ".times" : "");
    const pid_t pid = ::fork();
    if (pid == 0) Trainer(config, daemon.socket, load, run.times.back());
    pids.push_back(pid);
  }
  for (pid_t pid : pids) ::waitpid(pid, nullptr, 0);
  WaitWritten(dumps, load.steps);
  run.wall_s = std::chrono::duration<double>(Clock::now() - begin).count();
  run.daemon_cpu_s = CpuSeconds(daemon.pid) - cpu0;
  run.control_cpu_s = CpuSeconds(daemon.pid, daemon.pid) - control0;
  StopDaemon(daemon);
  for (const std::string& dump : dumps) {
    run.entries += SumAccounting(dump, "entries");
    run.dropped += SumAccounting(dump, "ring_full") +
                   SumAccounting(dump, "too_large") +
                   SumAccounting(dump, "no_daemon");
  }
  return run;
}

std::vector<double> ReadTimes(const std::string& path) {
  std::vector<double> out;
  std::ifstream in(path);
  for (double v; in >> v;) out.push_back(v);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string tprobed;
  int ranks = 8;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tprobed" && i + 1 < argc) {
      tprobed = argv[++i];
    } else if (arg == "--ranks" && i + 1 < argc) {
      ranks = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr,
                   "Usage: node_bench --tprobed PATH [--ranks N] [--quick]\n"
                   "Starts its own tprobed and forks trainer processes; "
                   "prints the daemon's CPU per entry, the ingest of N ranks "
                   "(default 8) under policy block, the first-steps "
                   "ratio, and the sustained steps per second of N ranks "
                   "with the control thread's CPU per step. --quick runs a "
                   "smaller load.\n");
      return arg == "--help" ? 0 : 2;
    }
  }
  if (tprobed.empty()) {
    std::fprintf(stderr, "node_bench: --tprobed PATH is required\n");
    return 2;
  }
  const int scale = quick ? 1 : 4;
  char tmpl[] = "/tmp/node_bench.XXXXXX";
  const std::string root = ::mkdtemp(tmpl);

  // 1. Daemon CPU per entry, small tensors (64 floats).
  {
    const std::string dir = root + "/cpu";
    fs::create_directories(dir);
    const Load load{50 * scale, 170, 64};
    const Run run = RunRanks(tprobed, dir, 1, load, false);
    std::printf(
        "daemon CPU per entry (1 rank, %d steps x %d entries, 2 x 256 B "
        "tensors each): %.2f us  [%llu entries, %.3f s daemon CPU, %llu "
        "dropped]\n",
        load.steps, load.calls_per_step,
        1e6 * run.daemon_cpu_s / static_cast<double>(run.entries),
        static_cast<unsigned long long>(run.entries), run.daemon_cpu_s,
        static_cast<unsigned long long>(run.dropped));
  }
  // 2. Ingest of `ranks` producer processes, 64 KiB tensors.
  {
    const std::string dir = root + "/ingest";
    fs::create_directories(dir);
    const Load load{10 * scale, 20, 16384};
    const Run run = RunRanks(tprobed, dir, ranks, load, false);
    const double bytes = static_cast<double>(run.entries) * 2.0 *
                         static_cast<double>(load.floats_per_tensor) * 4.0;
    std::printf(
        "ingest (%d ranks, policy block, %d steps x %d entries, 2 x 64 KiB "
        "tensors each): %.0f entries/s, %.2f GB/s, %llu dropped  [%.2f s "
        "wall, %.2f s daemon CPU]\n",
        ranks, load.steps, load.calls_per_step,
        static_cast<double>(run.entries) / run.wall_s, bytes / run.wall_s / 1e9,
        static_cast<unsigned long long>(run.dropped), run.wall_s,
        run.daemon_cpu_s);
  }
  // 3. First three dumped steps against the steady state.
  {
    const std::string dir = root + "/warm";
    fs::create_directories(dir);
    const Load load{30, 170, 1024, std::chrono::milliseconds(100)};
    const Run run = RunRanks(tprobed, dir, 1, load, true);
    std::vector<double> t = ReadTimes(run.times[0]);
    if (t.size() >= 10) {
      const double first = (t[0] + t[1] + t[2]) / 3;
      std::vector<double> steady(t.begin() + 5, t.end());
      std::sort(steady.begin(), steady.end());
      const double median = steady[steady.size() / 2];
      std::printf(
          "first 3 steps / steady step time (1 rank, %d entries of 2 x 4 KiB "
          "per step): %.2f  [%.2f ms vs %.2f ms]\n",
          load.calls_per_step, first / median, 1e3 * first, 1e3 * median);
    }
  }
  // 4. Small steps of `ranks` ranks at full speed.
  {
    const std::string dir = root + "/steps";
    fs::create_directories(dir);
    const Load load{500 * scale, 1, 16};
    const Run run = RunRanks(tprobed, dir, ranks, load, false);
    const double steps = static_cast<double>(ranks) * load.steps;
    std::printf(
        "steps (%d ranks, policy block, %d steps x 1 entry each): %.0f "
        "steps/s on disk, control thread %.1f us CPU per step  [%.2f s wall, "
        "%.2f s daemon CPU, %.3f s control thread, %llu dropped]\n",
        ranks, load.steps, steps / run.wall_s, 1e6 * run.control_cpu_s / steps,
        run.wall_s, run.daemon_cpu_s, run.control_cpu_s,
        static_cast<unsigned long long>(run.dropped));
  }
  fs::remove_all(root);
  return 0;
}
