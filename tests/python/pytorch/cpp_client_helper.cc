// A C++ user of libtprobe in a Python process: one_core_test.py loads this
// module with ctypes next to tprobe._C and dumps one API call through the
// public C++ Client.

#include <cstdint>
#include <string>

#include "tprobe/client.h"

// Dumps Functional.relu.0.forward (input [-1, 2], output [0, 2]) into the
// config's dump path through the daemon on `socket`. Returns the records the
// client wrote, or -1 when the client could not be created or no daemon
// answered.
extern "C" __attribute__((visibility("default"))) int64_t tprobe_test_cpp_dump(
    const char* config, const char* socket) {
  tprobe::ClientOptions options;
  options.config_path = config;
  options.socket_path = socket;
  std::string error;
  std::unique_ptr<tprobe::Client> client =
      tprobe::Client::Create(options, &error);
  if (!client || !client->connected()) return -1;
  client->Start();
  const float input[] = {-1.0f, 2.0f};
  const float output[] = {0.0f, 2.0f};
  const int64_t shape[] = {2};
  tprobe::Call call = client->BeginApi("Functional", "relu");
  client->AddTensor(
      call, tprobe::Section::kInput,
      {tprobe::TensorType::kFloat32, shape, 1, input, sizeof input, false});
  client->AddTensor(
      call, tprobe::Section::kOutput,
      {tprobe::TensorType::kFloat32, shape, 1, output, sizeof output, false});
  client->EndCall(call);
  client->Stop();
  client->Step();
  const int64_t written =
      static_cast<int64_t>(client->counters().records_written);
  client.reset();  // says goodbye: the daemon writes what it got
  return written;
}
