// libFuzzer target: the config parser (common/config), which reads a
// user's config.json in the trainer. Any text must give a Config or an
// error starting with "config: ", and a Config must survive ToJson and
// ParseConfig unchanged, and ToProto and FromProto (config_proto.h: the
// Register and Configure messages) unchanged: the daemon reads back
// exactly what the client validated.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/config/config.h"
#include "common/config/config_proto.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tprobe::fuzz::Check;
  namespace config = tprobe::config;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = config::ParseConfig(text);
  if (!parsed.ok()) {
    Check(parsed.status().message().starts_with("config: "),
          "a config error starts with \"config: \"");
    return 0;
  }
  const std::string canonical = config::ToJson(parsed.value());
  auto again = config::ParseConfig(canonical);
  Check(again.ok(), "ToJson of a parsed config parses");
  Check(again.value() == parsed.value(),
        "ToJson then ParseConfig gives the same Config");
  Check(config::ToJson(again.value()) == canonical, "ToJson is canonical");
  auto received = config::FromProto(config::ToProto(parsed.value()));
  Check(received.ok(), "FromProto takes the message of a parsed config");
  Check(received.value() == parsed.value(),
        "ToProto then FromProto gives the same Config");
  return 0;
}
