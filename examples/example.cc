// tprobe-example: plays a small nested model for a few steps through the
// tprobe client, with several dtypes and one NaN, and dumps it according to
// an msprobe-style config.json.
//
//   tprobe-example --config FILE [--socket PATH] [--steps N]
//
// It uses the daemon on the socket, or starts a private one when none
// answers, and prints where the dump tree is.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tprobe/client.h"

namespace {

struct Tensor {
  tprobe::TensorType dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  bool requires_grad;

  tprobe::TensorData view() const {
    return {dtype,        shape.data(), shape.size(),
            bytes.data(), bytes.size(), requires_grad};
  }
};

size_t Numel(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

template <typename T>
Tensor Make(tprobe::TensorType dtype, std::vector<int64_t> shape,
            bool requires_grad, std::mt19937& rng, double scale) {
  std::normal_distribution<double> dist(0.0, scale);
  Tensor t{dtype, shape, std::vector<unsigned char>(Numel(shape) * sizeof(T)),
           requires_grad};
  auto* data = reinterpret_cast<T*>(t.bytes.data());
  for (size_t i = 0; i < Numel(shape); ++i) data[i] = static_cast<T>(dist(rng));
  return t;
}

// float -> IEEE half (round to nearest even), for the fp16 tensor.
uint16_t ToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (exp <= 0) return static_cast<uint16_t>(sign);
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(h);
}

Tensor MakeHalf(std::vector<int64_t> shape, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Tensor t{tprobe::TensorType::kFloat16, shape,
           std::vector<unsigned char>(Numel(shape) * 2), false};
  auto* data = reinterpret_cast<uint16_t*>(t.bytes.data());
  for (size_t i = 0; i < Numel(shape); ++i) data[i] = ToHalf(dist(rng));
  return t;
}

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: tprobe-example --config FILE [--socket PATH] "
               "[--steps N]\n\n"
               "Plays a small nested model (embedding, two blocks of "
               "linear+activation, a head)\n"
               "for N steps (default 2) through the tprobe client and dumps "
               "it as FILE says\n"
               "(an msprobe config.json: task, dump_path, level, step, "
               "rank).\n\n"
               "  --config FILE   msprobe-style config.json (required)\n"
               "  --socket PATH   tprobed control socket; a private daemon "
               "is started when\n"
               "                  none answers (default: $TPROBE_SOCKET or "
               "the per-user path)\n"
               "  --steps N       steps to play, 1 to 1000000 (default 2)\n"
               "  --help          this text\n");
}

}  // namespace

int main(int argc, char** argv) {
  tprobe::ClientOptions options;
  options.autostart_daemon = true;
  int steps = 2;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tprobe-example: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--config") {
      options.config_path = value();
    } else if (arg == "--socket") {
      options.socket_path = value();
    } else if (arg == "--steps") {
      std::string v = value();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 1000000) {
        std::fprintf(stderr,
                     "tprobe-example: --steps must be an integer from 1 "
                     "to 1000000, got '%s'\n",
                     v.c_str());
        return 2;
      }
      steps = static_cast<int>(n);
    } else if (arg == "--help" || arg == "-h") {
      Usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "tprobe-example: unknown argument '%s'\n\n",
                   arg.c_str());
      Usage(stderr);
      return 2;
    }
  }
  if (options.config_path.empty()) {
    std::fprintf(stderr, "tprobe-example: --config FILE is required\n\n");
    Usage(stderr);
    return 2;
  }

  std::string error;
  auto client = tprobe::Client::Create(options, &error);
  if (!client) {
    std::fprintf(stderr, "tprobe-example: %s\n", error.c_str());
    return 2;
  }
  if (!client->connected()) {
    std::fprintf(stderr,
                 "tprobe-example: no daemon; running without dumping\n");
  }

  std::mt19937 rng(1234);
  using TT = tprobe::TensorType;
  const Tensor emb_w = Make<float>(TT::kFloat32, {16, 8}, true, rng, 1.0);
  const Tensor w1 = Make<float>(TT::kFloat32, {8, 8}, true, rng, 0.3);
  const Tensor w2 = Make<double>(TT::kFloat64, {8, 8}, true, rng, 0.3);
  const Tensor head_w = MakeHalf({4, 8}, rng);

  for (int step = 0; step < steps; ++step) {
    client->Start();
    Tensor ids = Make<int64_t>(TT::kInt64, {2, 4}, false, rng, 4.0);
    for (size_t i = 0; i < 8; ++i) {
      reinterpret_cast<int64_t*>(ids.bytes.data())[i] =
          static_cast<int64_t>((i * 7 + step) % 16);
    }
    Tensor hidden = Make<float>(TT::kFloat32, {2, 4, 8}, true, rng, 1.0);

    // Scoped calls: each ends (and writes its entry) at the end of its
    // block; a call opened inside another is its child in construct.json.
    {
      auto emb = client->Module("embed", "Embedding");
      emb.Input(ids.view());
      emb.Output(hidden.view());
      emb.Parameter("weight", emb_w.view());
    }

    for (int b = 0; b < 2; ++b) {
      const std::string path = "blocks." + std::to_string(b);
      auto block = client->Module(path, "Block");
      block.Input(hidden.view());
      Tensor out = Make<float>(TT::kFloat32, {2, 4, 8}, true, rng, 1.0);
      {
        auto lin = client->Module(path + ".linear", "Linear");
        lin.Input(hidden.view());
        if (b == 1) {  // the NaN an engineer would be hunting for
          reinterpret_cast<float*>(out.bytes.data())[5] =
              std::numeric_limits<float>::quiet_NaN();
        }
        lin.Output(out.view());
        lin.Parameter("weight", (b == 0 ? w1 : w2).view());
      }
      Tensor mask = Make<uint8_t>(TT::kBool, {2, 4}, false, rng, 0.0);
      for (size_t i = 0; i < 8; ++i) mask.bytes[i] = (i + b) % 3 == 0;
      {
        auto act = client->Module(path + ".act", "ReLU");
        act.Input(out.view());
        act.Output(mask.view());
      }
      block.Output(out.view());
      hidden = out;
    }

    {
      auto head = client->Module("head", "Linear");
      head.Input(hidden.view());
      Tensor logits = MakeHalf({2, 4, 4}, rng);
      head.Output(logits.view());
      head.Parameter("weight", head_w.view());
    }

    client->Stop();
    client->Step();
    std::printf("step %d done\n", step);
  }

  const auto c = client->counters();
  std::printf(
      "records written %llu, dropped: no daemon %llu, ring full %llu, "
      "too large %llu\n",
      static_cast<unsigned long long>(c.records_written),
      static_cast<unsigned long long>(c.dropped_no_daemon),
      static_cast<unsigned long long>(c.dropped_ring_full),
      static_cast<unsigned long long>(c.dropped_too_large));
  std::string last_dir = client->dump_dir();
  last_dir = last_dir.substr(0, last_dir.rfind("/step"));
  client.reset();  // flushes through the daemon
  std::printf("dump tree: %s\n", last_dir.c_str());
  return 0;
}
