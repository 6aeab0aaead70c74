// End to end: the real tprobed process, the real libtprobe client, real
// shared memory and a real socket, checked against exact bytes and numpy.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/client_daemon_test.h"
#include "tests/support/daemon_process.h"
#include "tprobe/client.h"

namespace tprobe {
namespace {

using testing::ReadFile;
using testing::RunCommand;

std::string WriteConfig(const std::string& dir, const std::string& task,
                        const std::string& level) {
  const std::string path = dir + "/config.json";
  std::ofstream(path) << R"({"task": ")" << task << R"(", "dump_path": ")"
                      << dir << R"(/dump", "rank": [], "step": [], "level": ")"
                      << level << R"("})";
  return path;
}

class ClientE2eTest : public testing::ClientDaemonTest {};

TEST_F(ClientE2eTest, ExampleTreeIsValidJsonAndAgreesWithNumpy) {
  ASSERT_TRUE(StartDaemon());
  const std::string config = WriteConfig(dir_.path(), "tensor", "L0");
  std::string out;
  ASSERT_EQ(RunCommand(std::string(EXAMPLE_PATH) + " --config " + config +
                           " --socket " + Socket() + " --steps 2",
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("dump tree: " + dir_.path() + "/dump"), std::string::npos)
      << out;
  for (const char* step : {"step0", "step1"}) {
    for (const char* file : {"dump.json", "stack.json", "construct.json"}) {
      EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/dump/" + step +
                                          "/rank/" + file))
          << step << "/" << file;
    }
  }
  const std::string dump = ReadFile(dir_.path() + "/dump/step1/rank/dump.json");
  EXPECT_NE(dump.find("\"Module.blocks.1.linear.Linear.forward.0\""),
            std::string::npos);
  EXPECT_NE(dump.find("\"Max\": NaN"), std::string::npos) << "the planted NaN";
  EXPECT_NE(dump.find("\"dtype\": \"torch.float16\""), std::string::npos);
  EXPECT_NE(dump.find("\"dtype\": \"torch.float64\""), std::string::npos);
  EXPECT_NE(dump.find("\"dtype\": \"torch.bool\""), std::string::npos);
  ASSERT_EQ(RunCommand(std::string(TPROBE_PYTHON) + " " + TPROBE_SOURCE_DIR +
                           "/tests/e2e/check_tree.py " + dir_.path() + "/dump",
                       &out),
            0)
      << out;
  EXPECT_EQ(daemon_->Terminate(), 0);
}

// One module call with hand-computable statistics; every byte is known.
TEST_F(ClientE2eTest, StatisticsTreeMatchesExpectedBytes) {
  ASSERT_TRUE(StartDaemon());
  auto client = Connect(WriteConfig(dir_.path(), "statistics", "L0"), 3);
  ASSERT_TRUE(client && client->connected());

  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const int64_t x_shape[2] = {2, 2};
  const int64_t ids[3] = {7, -1, 2};
  const int64_t ids_shape[1] = {3};
  const double scalar = 0.1;
  client->Start();
  Call outer = client->BeginModule("encoder", "Encoder");
  Call inner = client->BeginModule("encoder.embed", "Embedding");
  client->AddTensor(inner, Section::kInput,
                    {TensorType::kInt64, ids_shape, 1, ids, sizeof ids, false});
  client->AddTensor(inner, Section::kOutput,
                    {TensorType::kFloat32, x_shape, 2, x, sizeof x, true});
  client->AddParameter(
      inner, "weight",
      {TensorType::kFloat64, nullptr, 0, &scalar, sizeof scalar, true});
  client->EndCall(inner);
  client->EndCall(outer);
  client->Stop();
  client->Step();
  client.reset();  // goodbye: the daemon has flushed when this returns

  const std::string dir = dir_.path() + "/dump/step0/rank3/";
  EXPECT_EQ(ReadFile(dir + "construct.json"),
            "{\n"
            " \"Module.encoder.Encoder.forward.0\": null,\n"
            " \"Module.encoder.embed.Embedding.forward.0\": "
            "\"Module.encoder.Encoder.forward.0\"\n"
            "}");
  EXPECT_EQ(ReadFile(dir + "stack.json"), "{}");
  const std::string tensor_i64 =
      "    {\n"
      "     \"type\": \"torch.Tensor\",\n"
      "     \"dtype\": \"torch.int64\",\n"
      "     \"shape\": [\n"
      "      3\n"
      "     ],\n"
      "     \"Max\": 7,\n"
      "     \"Min\": -1,\n"
      "     \"Mean\": null,\n"
      "     \"Norm\": null,\n"
      "     \"requires_grad\": false\n"
      "    }\n";
  const std::string tensor_f32 =
      "    {\n"
      "     \"type\": \"torch.Tensor\",\n"
      "     \"dtype\": \"torch.float32\",\n"
      "     \"shape\": [\n"
      "      2,\n"
      "      2\n"
      "     ],\n"
      "     \"Max\": 4.0,\n"
      "     \"Min\": 1.0,\n"
      "     \"Mean\": 2.5,\n"
      "     \"Norm\": 5.4772257804870605,\n"
      "     \"requires_grad\": true\n"
      "    }\n";
  EXPECT_EQ(ReadFile(dir + "dump.json"),
            "{\n"
            " \"task\": \"statistics\",\n"
            " \"level\": \"L0\",\n"
            " \"framework\": \"pytorch\",\n"
            " \"dump_data_dir\": null,\n"
            " \"data\": {\n"
            "  \"Module.encoder.embed.Embedding.forward.0\": {\n"
            "   \"input_args\": [\n" +
                tensor_i64 +
                "   ],\n"
                "   \"input_kwargs\": {},\n"
                "   \"output\": [\n" +
                tensor_f32 +
                "   ],\n"
                "   \"parameters\": {\n"
                "    \"weight\": {\n"
                "     \"type\": \"torch.Tensor\",\n"
                "     \"dtype\": \"torch.float64\",\n"
                "     \"shape\": [],\n"
                "     \"Max\": 0.1,\n"
                "     \"Min\": 0.1,\n"
                "     \"Mean\": 0.1,\n"
                "     \"Norm\": 0.1,\n"
                "     \"requires_grad\": true\n"
                "    }\n"
                "   }\n"
                "  },\n"
                "  \"Module.encoder.Encoder.forward.0\": {\n"
                "   \"input_args\": [],\n"
                "   \"input_kwargs\": {},\n"
                "   \"output\": [],\n"
                "   \"parameters\": {}\n"
                "  }\n"
                " }\n"
                "}");
}

// A module's input tensors go into the ring when they are added, read from
// the caller's buffer then (no copy is kept), and its entry at EndCall, after
// its children's entries: the daemon keeps the inputs for it.
TEST_F(ClientE2eTest, ModuleInputsWrittenBeforeItsChildrenAreKept) {
  ASSERT_TRUE(StartDaemon());
  auto client = Connect(WriteConfig(dir_.path(), "tensor", "mix"));
  ASSERT_TRUE(client && client->connected());

  float input[3] = {1.0f, -2.0f, 7.0f};
  const float child_out[2] = {0.5f, 0.25f};
  const float out[1] = {7.0f};
  const int64_t input_shape[1] = {3};
  const int64_t child_shape[1] = {2};
  const int64_t out_shape[1] = {1};
  client->Start();
  Call outer = client->BeginModule("net", "Net");
  ASSERT_TRUE(client->AddTensor(
      outer, Section::kInput,
      {TensorType::kFloat32, input_shape, 1, input, sizeof input, false}));
  // Changed in place after it was added: the dump holds what was added.
  input[0] = 100.0f;
  Call inner = client->BeginModule("net.fc", "Linear");
  client->AddTensor(inner, Section::kOutput,
                    {TensorType::kFloat32, child_shape, 1, child_out,
                     sizeof child_out, false});
  client->EndCall(inner);
  Call api = client->BeginApi("Tensor", "add");
  client->AddTensor(api, Section::kOutput,
                    {TensorType::kFloat32, child_shape, 1, child_out,
                     sizeof child_out, false});
  client->EndCall(api);
  client->AddTensor(
      outer, Section::kOutput,
      {TensorType::kFloat32, out_shape, 1, out, sizeof out, false});
  client->EndCall(outer);
  client->Stop();
  client->Step();
  client.reset();  // goodbye: the daemon has flushed when this returns

  const std::string dir = dir_.path() + "/dump/step0/rank/";
  const std::string dump = ReadFile(dir + "dump.json");
  // The outer module's entry comes last, and its input has the values it had
  // when it was added.
  const size_t child = dump.find("\"Module.net.fc.Linear.forward.0\": {");
  const size_t add = dump.find("\"Tensor.add.0.forward\": {");
  const size_t net = dump.find("\"Module.net.Net.forward.0\": {");
  ASSERT_NE(net, std::string::npos) << dump;
  EXPECT_LT(child, add);
  EXPECT_LT(add, net);
  const std::string net_entry = dump.substr(net);
  EXPECT_NE(net_entry.find("\"Max\": 7.0,\n"
                           "     \"Min\": -2.0,\n"
                           "     \"Mean\": 2.0,\n"),
            std::string::npos)
      << net_entry;
  EXPECT_NE(net_entry.find("\"data_name\": "
                           "\"Module.net.Net.forward.0.input.0.npy\""),
            std::string::npos)
      << net_entry;
  // The .npy holds the bytes as added: 1, -2, 7 (float32, 12 bytes at the
  // end of the file).
  const std::string npy =
      ReadFile(dir + "dump_tensor_data/Module.net.Net.forward.0.input.0.npy");
  ASSERT_GE(npy.size(), sizeof input);
  float back[3];
  std::memcpy(back, npy.data() + npy.size() - sizeof back, sizeof back);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -2.0f);
  EXPECT_EQ(back[2], 7.0f);
  const std::string accounting = ReadFile(dir + "tprobe.json");
  EXPECT_NE(accounting.find("\"complete\": true"), std::string::npos)
      << accounting;
  EXPECT_EQ(daemon_->Terminate(), 0);
}

TEST_F(ClientE2eTest, ClientWithoutDaemonFinishesAndCountsDrops) {
  ClientOptions options;
  options.config_path = WriteConfig(dir_.path(), "statistics", "L0");
  options.socket_path = dir_.path() + "/nobody.sock";
  options.connect_timeout_ms = 200;
  std::string error;
  const auto begin = std::chrono::steady_clock::now();
  ::testing::internal::CaptureStderr();
  auto client = Client::Create(options, &error);
  ASSERT_TRUE(client) << error;
  EXPECT_FALSE(client->connected());
  const float x[2] = {1.0f, 2.0f};
  const int64_t shape[1] = {2};
  for (int step = 0; step < 3; ++step) {
    client->Start();
    for (int i = 0; i < 100; ++i) {
      Call call = client->BeginModule("m", "Linear");
      client->AddTensor(call, Section::kInput,
                        {TensorType::kFloat32, shape, 1, x, sizeof x, false});
      client->EndCall(call);
    }
    client->Stop();
    client->Step();
  }
  const ClientCounters c = client->counters();
  EXPECT_GE(c.dropped_no_daemon, 300u);
  EXPECT_EQ(c.records_written, 0u);
  client.reset();
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(10));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/dump"));
  // The user hears of it from the library, not from an empty folder: at
  // the end the total (a run this short may end before the outage line).
  EXPECT_NE(said.find("[tprobe] " + std::to_string(c.dropped_no_daemon) +
                      " records of this process were lost in all because no "
                      "daemon received them (socket " +
                      options.socket_path + ")\n"),
            std::string::npos)
      << said;
}

TEST_F(ClientE2eTest, ExampleStartsItsOwnDaemonWhenNoneAnswers) {
  const std::string socket = dir_.path() + "/auto.sock";
  const std::string config = WriteConfig(dir_.path(), "statistics", "L0");
  std::string out;
  ASSERT_EQ(RunCommand("TPROBED=" + std::string(TPROBED_PATH) + " " +
                           EXAMPLE_PATH + " --config " + config + " --socket " +
                           socket + " --steps 1",
                       &out),
            0)
      << out;
  EXPECT_TRUE(
      std::filesystem::exists(dir_.path() + "/dump/step0/rank/dump.json"))
      << out;
  // Shut the private daemon down now rather than waiting for its idle exit.
  RunCommand("pkill -TERM -f -- '--socket " + socket + "'", nullptr);
}

TEST_F(ClientE2eTest, ExampleRejectsBadArguments) {
  std::string out;
  EXPECT_EQ(RunCommand(std::string(EXAMPLE_PATH) + " --steps zero", &out), 2);
  EXPECT_NE(out.find("--steps must be an integer from 1 to 1000000"),
            std::string::npos);
  EXPECT_EQ(RunCommand(std::string(EXAMPLE_PATH), &out), 2);
  EXPECT_NE(out.find("--config FILE is required"), std::string::npos);
  std::ofstream(dir_.path() + "/bad.json") << R"({"task": "nope"})";
  EXPECT_EQ(RunCommand(std::string(EXAMPLE_PATH) + " --config " + dir_.path() +
                           "/bad.json",
                       &out),
            2);
  EXPECT_NE(out.find("task is invalid"), std::string::npos) << out;
}

}  // namespace
}  // namespace tprobe
