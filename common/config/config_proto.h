#ifndef TPROBE_COMMON_CONFIG_CONFIG_PROTO_H_
#define TPROBE_COMMON_CONFIG_CONFIG_PROTO_H_

// The config on the control socket: a validated Config (config.h) travels
// as a tprobe.v1.Config message, typed, so that the JSON is parsed once, by
// the client that read config.json. The receiver of a message trusts
// nothing: FromProto checks every invariant that ParseConfig guarantees and
// refuses a message that breaks one, naming the key.
//
// Thread safety: pure functions.

#include "common/config/config.h"
#include "common/status.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::config {

// The message for a valid config. REQUIRES: `config` is valid, as
// ParseConfig or FromProto return it.
v1::Config ToProto(const Config& config);

// The Config a message holds. Returns an error starting with "config: " and
// naming the key (as config.json spells it: "level", "tprobe.ring_bytes")
// when a value is out of range or breaks an invariant of Config.
Result<Config> FromProto(const v1::Config& message);

}  // namespace tprobe::config

#endif  // TPROBE_COMMON_CONFIG_CONFIG_PROTO_H_
