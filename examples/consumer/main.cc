// tprobe-consumer: a small program built against an installed tprobe
// (find_package(tprobe) or `pkg-config tprobe`), the way a trainer written
// in C++ would use it. It plays one layer for a few steps with scoped calls
// and typed tensors:
//
//   Module.net.Net        the model block, forward and backward
//     Torch.matmul        an API call inside it
//   Module.net.Net.parameters_grad.N
//
//   tprobe-consumer --config FILE [--socket PATH] [--steps N]
//
// The tensors hold fixed values, so a dump can be checked by hand: x is
// 1..6 (float32, 2x3), w is 0.5 everywhere (float64, 3x2), y = x·w.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tprobe/client.h"

namespace {

int Usage(FILE* out, int code) {
  std::fprintf(out,
               "usage: tprobe-consumer --config FILE [--socket PATH] "
               "[--steps N]\n\n"
               "Plays one layer (a module with a matmul inside, its backward "
               "and a parameter\n"
               "gradient) for N steps (default 2) through libtprobe %s and "
               "dumps it as the\n"
               "msprobe-style config FILE says. A private tprobed is started "
               "when none answers.\n",
               TPROBE_VERSION_STRING);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  tprobe::ClientOptions options;
  options.autostart_daemon = true;
  long steps = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return Usage(stdout, 0);
    if (i + 1 >= argc) return Usage(stderr, 2);
    const char* value = argv[++i];
    if (arg == "--config") {
      options.config_path = value;
    } else if (arg == "--socket") {
      options.socket_path = value;
    } else if (arg == "--steps") {
      steps = std::strtol(value, nullptr, 10);
      if (steps < 1) return Usage(stderr, 2);
    } else {
      std::fprintf(stderr, "tprobe-consumer: unknown argument '%s'\n\n",
                   arg.c_str());
      return Usage(stderr, 2);
    }
  }
  if (options.config_path.empty()) return Usage(stderr, 2);

  std::string error;
  std::unique_ptr<tprobe::Client> client =
      tprobe::Client::Create(options, &error);
  if (!client) {
    std::fprintf(stderr, "tprobe-consumer: %s\n", error.c_str());
    return 2;
  }

  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> x_shape{2, 3};
  const std::vector<double> w(6, 0.5);
  const std::vector<int64_t> w_shape{3, 2};
  std::vector<float> y(4, 0.0f);
  const std::vector<int64_t> y_shape{2, 2};
  for (size_t r = 0; r < 2; ++r) {
    for (size_t c = 0; c < 2; ++c) {
      for (size_t k = 0; k < 3; ++k) {
        y[r * 2 + c] += x[r * 3 + k] * static_cast<float>(w[k * 2 + c]);
      }
    }
  }
  const std::vector<float> grad_y(4, 1.0f);
  const std::vector<float> grad_x(6, 0.25f);
  const std::vector<double> grad_w(6, -1.0);

  for (long step = 0; step < steps; ++step) {
    client->Start();
    uint32_t forward_index = 0;
    {
      auto net = client->Module("net", "Net");
      net.Input(tprobe::TensorData::Of(x, x_shape, /*requires_grad=*/true));
      net.Kwarg("scale", tprobe::Value::OfFloat(1.0));
      {
        auto matmul = client->Api("Torch", "matmul");
        matmul.Input(tprobe::TensorData::Of(x, x_shape, true));
        matmul.Input(tprobe::TensorData::Of(w, w_shape, true));
        matmul.Output(tprobe::TensorData::Of(y, y_shape, true));
      }  // matmul ends here
      net.Output(tprobe::TensorData::Of(y, y_shape, true));
      net.Parameter("weight", tprobe::TensorData::Of(w, w_shape, true));
      forward_index = net.index();
    }  // net ends here
    {
      auto back = client->Module("net", "Net", tprobe::Direction::kBackward,
                                 forward_index);
      back.Input(tprobe::TensorData::Of(grad_y, y_shape));
      back.Output(tprobe::TensorData::Of(grad_x, x_shape));
    }
    client->ParamGrad("net", "Net", "weight",
                      tprobe::TensorData::Of(grad_w, w_shape));
    client->Stop();
    client->Step();
  }

  const tprobe::ClientCounters c = client->counters();
  std::printf(
      "tprobe %s, daemon %s: records written %llu, dropped %llu, misused "
      "calls %llu\n",
      TPROBE_VERSION_STRING, client->connected() ? "connected" : "absent",
      static_cast<unsigned long long>(c.records_written),
      static_cast<unsigned long long>(
          c.dropped_no_daemon + c.dropped_ring_full + c.dropped_too_large),
      static_cast<unsigned long long>(c.calls_refused + c.calls_unclosed));
  client.reset();  // flushes through the daemon
  return c.calls_refused + c.calls_unclosed == 0 ? 0 : 1;
}
