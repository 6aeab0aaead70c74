// `tprobe configure FILE` end to end: the real tprobe binary and the real
// tprobed, with a rank played by the public C++ Client (libtprobe). A new
// config given while step N runs is what step N + 1 is recorded under (its
// level and list, seen in the written tree, or its dump_path); a bad one is
// refused naming the key, and nothing changes.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/client_daemon_test.h"
#include "tests/support/daemon_process.h"
#include "tprobe/client.h"

namespace tprobe {
namespace {

using Json = nlohmann::json;
using testing::ReadFile;

class LiveConfigureTest : public testing::ClientDaemonTest {
 protected:
  void SetUp() override { ASSERT_TRUE(StartDaemon()); }

  // Writes a config file with `body` plus this test's dump_path (unless
  // `body` sets one) and returns its path.
  std::string Config(const std::string& name, Json body) {
    if (!body.contains("dump_path")) body["dump_path"] = Dump();
    const std::string path = dir_.path() + "/" + name + ".json";
    std::ofstream(path) << body.dump();
    return path;
  }

  std::unique_ptr<Client> Rank(const std::string& config) {
    return Connect(config, /*rank=*/0);
  }

  // Runs `tprobe ARGS --socket SOCKET`; returns the exit status.
  int Tprobe(const std::string& args, std::string* output) const {
    return testing::RunCommand(
        std::string(TPROBE_BIN) + " " + args + " --socket " + Socket(), output);
  }

  // One step of a small model: module "net" calling the API "add" and then
  // "mul"; configure runs `between` once the calls are made, before the
  // step ends.
  void Step(Client& client, const std::function<void()>& between = {}) {
    client.Start();
    {
      ScopedCall net = client.Module("net", "Net");
      net.Input(TensorData::Of(x_, shape_));
      {
        ScopedCall add = client.Api("Torch", "add");
        add.Input(TensorData::Of(x_, shape_));
        add.Output(TensorData::Of(x_, shape_));
      }
      {
        ScopedCall mul = client.Api("Torch", "mul");
        mul.Input(TensorData::Of(x_, shape_));
        mul.Output(TensorData::Of(x_, shape_));
      }
      net.Output(TensorData::Of(x_, shape_));
    }
    client.Stop();
    if (between) between();
    client.Step();
  }

  // dump.json of rank 0's step `step` (Dump() is the dump path).
  using ClientDaemonTest::Dump;
  Json Dump(uint32_t step) {
    return Json::parse(
        ReadFile(Dump() + "/step" + std::to_string(step) + "/rank0/dump.json"));
  }
  static std::vector<std::string> Names(const Json& dump) {
    std::vector<std::string> names;
    for (const auto& [name, entry] : dump["data"].items()) {
      names.push_back(name);
    }
    return names;
  }

  const std::vector<float> x_{1, 2, 3, 4};
  const std::vector<int64_t> shape_{2, 2};
};

TEST_F(LiveConfigureTest, ANewLevelAndListTakeEffectAtTheNextStep) {
  auto client = Rank(Config("l0", {{"task", "statistics"}, {"level", "L0"}}));
  ASSERT_TRUE(client);
  const std::string mix = Config("mix", {{"task", "statistics"},
                                         {"level", "mix"},
                                         {"statistics", {{"list", {"add"}}}}});
  std::string output;
  int status = -1;
  Step(*client, [&] { status = Tprobe("configure " + mix, &output); });
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output, "tprobe configure: done (1 rank)\n");
  Step(*client);
  // The next live config: the JSON form of the reply, back to L0.
  const std::string l0 =
      Config("l0-again", {{"task", "statistics"}, {"level", "L0"}});
  Step(*client,
       [&] { status = Tprobe("configure " + l0 + " --json", &output); });
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output,
            R"({"command":"configure","ok":true,"ranks":1,"error":null})"
            "\n");
  Step(*client);
  client.reset();

  // Step 0 ran under the first config: modules only.
  EXPECT_EQ(Dump(0)["level"], "L0");
  EXPECT_EQ(Names(Dump(0)),
            std::vector<std::string>{"Module.net.Net.forward.0"});
  // Steps 1 and 2 under the new one: APIs too, and only names with "add".
  for (uint32_t step : {1u, 2u}) {
    EXPECT_EQ(Dump(step)["level"], "mix") << step;
    EXPECT_EQ(Names(Dump(step)),
              std::vector<std::string>{"Torch.add.0.forward"})
        << step;
  }
  EXPECT_EQ(Dump(3)["level"], "L0");
  EXPECT_EQ(Names(Dump(3)),
            std::vector<std::string>{"Module.net.Net.forward.0"});
}

TEST_F(LiveConfigureTest, ABadValueIsRefusedNamingTheKeyAndNothingChanges) {
  auto client = Rank(Config("l0", {{"task", "statistics"}, {"level", "L0"}}));
  ASSERT_TRUE(client);
  const std::string file_in_the_way = dir_.path() + "/a-file";
  std::ofstream(file_in_the_way) << "not a folder";
  struct Case {
    Json body;
    std::string expected;  // in the message
  };
  const std::vector<Case> cases = {
      // Invalid in itself: the CLI's own check, before tprobed is asked.
      {{{"level", "L7"}}, "level is invalid"},
      {{{"statistics", {{"data_mode", {"sideways"}}}}}, "data_mode"},
      // Valid, but fixed since the rank registered: tprobed refuses it,
      // and the new dump_path beside it is not made.
      {{{"level", "mix"},
        {"dump_path", dir_.path() + "/elsewhere"},
        {"tprobe", {{"ring_count", 2}}}},
       "config: tprobe.ring_count cannot change while the training runs"},
      // A dump_path the rank's user cannot use.
      {{{"level", "mix"}, {"dump_path", file_in_the_way + "/dump"}},
       "config: for rank 0: dump_path " + file_in_the_way +
           "/dump cannot "
           "be used"},
  };
  int i = 0;
  Step(*client, [&] {
    for (const Case& c : cases) {
      const std::string file = Config("bad" + std::to_string(i++), c.body);
      std::string output;
      EXPECT_EQ(Tprobe("configure " + file, &output), 2) << output;
      EXPECT_NE(output.find(c.expected), std::string::npos) << output;
      EXPECT_EQ(output.find("done"), std::string::npos) << output;
      EXPECT_EQ(Tprobe("configure " + file + " --json", &output), 2);
      // The JSON line (stdout); the message is on stderr too.
      const size_t json_at = output.find("{\"command\"");
      ASSERT_NE(json_at, std::string::npos) << output;
      const Json doc = Json::parse(
          output.substr(json_at, output.find('\n', json_at) - json_at));
      EXPECT_EQ(doc["ok"], false);
      EXPECT_NE(doc["error"].get<std::string>().find(c.expected),
                std::string::npos)
          << doc;
    }
  });
  Step(*client);
  client.reset();
  for (uint32_t step : {0u, 1u}) {
    EXPECT_EQ(Dump(step)["level"], "L0") << step;
    EXPECT_EQ(Names(Dump(step)),
              std::vector<std::string>{"Module.net.Net.forward.0"})
        << step;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/elsewhere"))
      << "a refused dump_path is never created";
}

TEST_F(LiveConfigureTest, ANewDumpPathTakesTheStepsFromTheNextOn) {
  auto client = Rank(Config("l0", {{"task", "statistics"}, {"level", "L0"}}));
  ASSERT_TRUE(client);
  const std::string moved = dir_.path() + "/moved";
  const std::string file = Config(
      "moved", {{"task", "statistics"}, {"level", "L0"}, {"dump_path", moved}});
  std::string output;
  int status = -1;
  Step(*client, [&] { status = Tprobe("configure " + file, &output); });
  EXPECT_EQ(status, 0) << output;
  Step(*client);
  Step(*client);
  client.reset();

  auto steps = [](const std::string& root) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(root)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  // Step 0 was running when the config came: it stays where it began.
  EXPECT_EQ(steps(Dump()), std::vector<std::string>{"step0"});
  EXPECT_EQ(steps(moved), (std::vector<std::string>{"step1", "step2"}));
  for (uint32_t step : {1u, 2u}) {
    const std::string dir = moved + "/step" + std::to_string(step) + "/rank0";
    EXPECT_EQ(Names(Json::parse(ReadFile(dir + "/dump.json"))),
              std::vector<std::string>{"Module.net.Net.forward.0"});
    EXPECT_EQ(Json::parse(ReadFile(dir + "/tprobe.json"))["complete"], true);
  }
}

TEST_F(LiveConfigureTest, NoRankOrNoFileSaysWhy) {
  const std::string file = Config("ok", {{"level", "mix"}});
  std::string output;
  EXPECT_EQ(Tprobe("configure " + file, &output), 3);
  EXPECT_NE(output.find("no rank is registered with tprobed on " + Socket() +
                        ": nothing to configure"),
            std::string::npos)
      << output;
  EXPECT_EQ(Tprobe("configure", &output), 2);
  EXPECT_NE(output.find("tprobe configure: FILE is missing"), std::string::npos)
      << output;
  EXPECT_EQ(Tprobe("configure " + dir_.path() + "/missing.json", &output), 2);
  EXPECT_NE(output.find("config: cannot open " + dir_.path() + "/missing.json"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace tprobe
