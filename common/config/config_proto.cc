#include "common/config/config_proto.h"

#include <optional>
#include <string>
#include <utility>

#include "common/config/config_keys.h"

namespace tprobe::config {
namespace {

Status Bad(const std::string& key, const std::string& why) {
  return Status::Error("config: " + key + " is invalid, " + why);
}

// Each of the config's enums beside control.proto's, value for value: the
// one table both directions read.
template <typename Core, typename Proto>
struct Pair {
  Core core;
  Proto proto;
};
template <typename E>
struct ProtoEnum;
template <>
struct ProtoEnum<Task> {
  static constexpr Pair<Task, v1::Config::Task> kPairs[] = {
      {Task::kStatistics, v1::Config::STATISTICS},
      {Task::kTensor, v1::Config::TENSOR},
      {Task::kOverflowCheck, v1::Config::OVERFLOW_CHECK},
      {Task::kStructure, v1::Config::STRUCTURE}};
};
template <>
struct ProtoEnum<Level> {
  static constexpr Pair<Level, v1::Config::Level> kPairs[] = {
      {Level::kL0, v1::Config::L0},
      {Level::kL1, v1::Config::L1},
      {Level::kMix, v1::Config::MIX},
      {Level::kDebug, v1::Config::DEBUG}};
};
template <>
struct ProtoEnum<RiskLevel> {
  static constexpr Pair<RiskLevel, v1::Config::RiskLevel> kPairs[] = {
      {RiskLevel::kFocus, v1::Config::FOCUS},
      {RiskLevel::kCore, v1::Config::CORE},
      {RiskLevel::kAll, v1::Config::ALL}};
};
template <>
struct ProtoEnum<SummaryMode> {
  static constexpr Pair<SummaryMode, v1::Config::SummaryMode> kPairs[] = {
      {SummaryMode::kStatistics, v1::Config::SUMMARY_STATISTICS},
      {SummaryMode::kMd5, v1::Config::MD5},
      {SummaryMode::kXor, v1::Config::XOR}};
};
template <>
struct ProtoEnum<FullRingPolicy> {
  static constexpr Pair<FullRingPolicy, v1::Config::Policy> kPairs[] = {
      {FullRingPolicy::kBlock, v1::Config::BLOCK},
      {FullRingPolicy::kDrop, v1::Config::DROP}};
};
template <>
struct ProtoEnum<StatisticsOn> {
  static constexpr Pair<StatisticsOn, v1::Config::StatisticsOn> kPairs[] = {
      {StatisticsOn::kAuto, v1::Config::STATISTICS_ON_AUTO},
      {StatisticsOn::kFramework, v1::Config::STATISTICS_ON_FRAMEWORK},
      {StatisticsOn::kDaemon, v1::Config::STATISTICS_ON_DAEMON}};
};

// The accessors of control.proto's Config field `member` for each KEY row
// of TPROBE_CONFIG_KEYS: Set for a scalar, Mutable for a repeated field or
// a message (templates, so that only the one a type uses is instantiated).
#define TPROBE_PROTO_FIELD_(sections, key, member, Type, lo, hi, live) \
  struct member##_field {                                              \
    template <typename M, typename V>                                  \
    static void Set(M& m, const V& value) {                            \
      m.set_##member(value);                                           \
    }                                                                  \
    template <typename M>                                              \
    static auto* Mutable(M& m) {                                       \
      return m.mutable_##member();                                     \
    }                                                                  \
  };
#define TPROBE_PROTO_SKIP_CHECK_(sections, key, Check)
TPROBE_CONFIG_KEYS(TPROBE_PROTO_FIELD_, TPROBE_PROTO_SKIP_CHECK_)
#undef TPROBE_PROTO_FIELD_

// The handling of each value type of TPROBE_CONFIG_KEYS: Put writes the
// member into its field, Take reads a field back into the member and checks
// what ParseConfig guarantees (or returns the error that names the key).

template <typename F, typename E>
void Put(EnumName, E value, v1::Config& m) {
  for (const auto& pair : ProtoEnum<E>::kPairs) {
    if (pair.core == value) return F::Set(m, pair.proto);
  }
  F::Set(m, ProtoEnum<E>::kPairs[0].proto);
}
template <typename E, typename Proto>
Status Take(EnumName, Proto proto, const KeySpec& spec, E* out) {
  for (const auto& pair : ProtoEnum<E>::kPairs) {
    if (pair.proto == proto) {
      *out = pair.core;
      return Status::Ok();
    }
  }
  return Bad(spec.Name(),
             "it should be one of " + std::string(EnumNames<E>::kChoices));
}
template <typename F, typename E>
void Put(RiskName, E value, v1::Config& m) {
  Put<F>(EnumName{}, value, m);
}
template <typename E, typename Proto>
Status Take(RiskName, Proto proto, const KeySpec& spec, E* out) {
  return Take(EnumName{}, proto, spec, out);
}
template <typename F, typename E>
void Put(SummaryName, E value, v1::Config& m) {
  Put<F>(EnumName{}, value, m);
}
template <typename E, typename Proto>
Status Take(SummaryName, Proto proto, const KeySpec& spec, E* out) {
  return Take(EnumName{}, proto, spec, out);
}

template <typename F>
void Put(DumpPath, const std::string& value, v1::Config& m) {
  F::Set(m, value);
}
Status Take(DumpPath, const std::string& in, const KeySpec& spec,
            std::string* out) {
  if (in.empty()) return Bad(spec.Name(), "it should not be empty");
  *out = in;
  return Status::Ok();
}

template <typename F>
void Put(SocketPath, const std::string& value, v1::Config& m) {
  F::Set(m, value);
}
Status Take(SocketPath, const std::string& in, const KeySpec& spec,
            std::string* out) {
  if (in.size() > static_cast<size_t>(spec.hi)) {
    return Bad(spec.Name(), "a Unix socket path holds at most " +
                                std::to_string(spec.hi) + " bytes");
  }
  *out = in;
  return Status::Ok();
}

template <typename F>
void Put(Ranges, const std::vector<int64_t>& values, v1::Config& m) {
  F::Mutable(m)->Add(values.begin(), values.end());
}
// Sorted, without duplicates, each in [spec.lo, spec.hi], as ParseConfig
// expands them.
Status Take(Ranges, const google::protobuf::RepeatedField<int64_t>& in,
            const KeySpec& spec, std::vector<int64_t>* out) {
  if (in.size() > spec.hi + 1) {
    return Bad(spec.Name(),
               "it holds more than " + std::to_string(spec.hi + 1) + " values");
  }
  for (int i = 0; i < in.size(); ++i) {
    if (in[i] < spec.lo || in[i] > spec.hi) {
      return Bad(spec.Name(), "each value must be between " +
                                  std::to_string(spec.lo) + " and " +
                                  std::to_string(spec.hi) + ", one is " +
                                  std::to_string(in[i]));
    }
    if (i > 0 && in[i] <= in[i - 1]) {
      return Bad(spec.Name(), "its values must be sorted and distinct");
    }
  }
  out->assign(in.begin(), in.end());
  return Status::Ok();
}

template <typename F>
void Put(Names, const std::vector<std::string>& values, v1::Config& m) {
  for (const std::string& s : values) *F::Mutable(m)->Add() = s;
}
Status Take(Names, const google::protobuf::RepeatedPtrField<std::string>& in,
            const KeySpec&, std::vector<std::string>* out) {
  out->assign(in.begin(), in.end());
  return Status::Ok();
}

template <typename F>
void Put(Scope, const std::vector<std::string>& values, v1::Config& m) {
  Put<F>(Names{}, values, m);
}
Status Take(Scope, const google::protobuf::RepeatedPtrField<std::string>& in,
            const KeySpec& spec, std::vector<std::string>* out) {
  if (in.size() != 0 && in.size() != 2) {
    return Bad(spec.Name(), "it should be empty or hold exactly 2 names");
  }
  return Take(Names{}, in, spec, out);
}

template <typename F>
void Put(Modes, const DataMode& mode, v1::Config& m) {
  v1::Config::DataMode* out = F::Mutable(m);
  out->set_forward(mode.forward);
  out->set_backward(mode.backward);
  out->set_input(mode.input);
  out->set_output(mode.output);
}
Status Take(Modes, const v1::Config::DataMode& in, const KeySpec& spec,
            DataMode* out) {
  *out = DataMode{in.forward(), in.backward(), in.input(), in.output()};
  if (!(in.forward() || in.backward()) || !(in.input() || in.output())) {
    return Bad(spec.Name(), "it lets no direction or no side through");
  }
  return Status::Ok();
}

template <typename F>
void Put(OverflowCount, int64_t value, v1::Config& m) {
  F::Set(m, value);
}
Status Take(OverflowCount, int64_t in, const KeySpec& spec, int64_t* out) {
  if (in != -1 && in <= 0) {
    return Bad(spec.Name(), "it should be -1 or a positive integer");
  }
  *out = in;
  return Status::Ok();
}

template <typename F, typename T>
void Put(Integer, T value, v1::Config& m) {
  F::Set(m, value);
}
template <typename T>
Status Take(Integer, T in, const KeySpec& spec, T* out) {
  const int64_t n = static_cast<int64_t>(in);
  if (n < spec.lo || n > spec.hi) {
    return Bad(spec.Name(),
               spec.lo == 0
                   ? "it should be at most " + std::to_string(spec.hi)
                   : "it should be between " + std::to_string(spec.lo) +
                         " and " + std::to_string(spec.hi));
  }
  *out = in;
  return Status::Ok();
}

template <typename F, typename T>
void Put(PowerOfTwo, T value, v1::Config& m) {
  F::Set(m, value);
}
template <typename T>
Status Take(PowerOfTwo, T in, const KeySpec& spec, T* out) {
  const int64_t n = static_cast<int64_t>(in);
  if (n < spec.lo || n > spec.hi || (in & (in - 1)) != 0) {
    return Bad(spec.Name(), "it should be a power of two between " +
                                std::to_string(spec.lo) + " and " +
                                std::to_string(spec.hi));
  }
  *out = in;
  return Status::Ok();
}

// "the statistics and tensor tasks set it": what a key of the sections
// `sections` is refused with in a config of another task.
std::string OnlyTasks(uint32_t sections) {
  std::vector<std::string_view> names;
  for (const auto& row : EnumNames<Task>::kNames) {
    if ((sections & SectionOf(row.value)) != 0) names.push_back(row.name);
  }
  std::string out = "only the ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out + (names.size() == 1 ? " task sets it" : " tasks set it");
}

}  // namespace

v1::Config ToProto(const Config& config) {
  v1::Config m;
#define TPROBE_PROTO_PUT_(sections, key, member, Type, lo, hi, live) \
  Put<member##_field>(Type{}, config.member, m);
  TPROBE_CONFIG_KEYS(TPROBE_PROTO_PUT_, TPROBE_PROTO_SKIP_CHECK_)
#undef TPROBE_PROTO_PUT_
  return m;
}

// Every row in table order; a key of task sections other than the config's
// task must hold its default.
Result<Config> FromProto(const v1::Config& m) {
  Config c;
  const Config defaults;
#define TPROBE_PROTO_TAKE_(sections, key, member, Type, lo, hi, live)         \
  {                                                                           \
    const KeySpec spec{#key, sections, lo, hi};                               \
    if (Status s = Take(Type{}, m.member(), spec, &c.member); !s.ok()) {      \
      return s;                                                               \
    }                                                                         \
    if (((sections)&kTaskSections) != 0 &&                                    \
        ((sections)&SectionOf(c.task)) == 0 && c.member != defaults.member) { \
      return Bad(spec.Name(), OnlyTasks(sections));                           \
    }                                                                         \
  }
  TPROBE_CONFIG_KEYS(TPROBE_PROTO_TAKE_, TPROBE_PROTO_SKIP_CHECK_)
#undef TPROBE_PROTO_TAKE_
  return c;
}

#undef TPROBE_PROTO_SKIP_CHECK_

}  // namespace tprobe::config
