// libFuzzer target: the daemon's reading of a producer's rings, whose bytes
// a trainer process wrote (common/shm/ring.h, common/record,
// daemon/ingest/drain.h).
//
// The first byte chooses the mode:
//   bit 4 set   raw ring: the rest is [u64 head][u64 tail][ring bytes]; a
//               RingReader walks the ring and each record goes to the
//               decoder (record::Decode), an Entry's body on to
//               record::ReadEntryBody with a visitor that checks the
//               order of what it is given (codec.h's ValueVisitor
//               contract). A 4 KiB ring on the heap.
//   bit 4 clear records: the rest is records [u8 ring][u16 type][u16 size]
//               [payload] written through the real RingWriter into the two
//               rings of a real Rank (shared memory), which the daemon
//               then drains, finishes and writes as it would at Goodbye:
//               decode, assemble, render entries (ReadEntryBody into the
//               entry renderer), statistics, tensor files, dump.json.
//               Bits 0-1 choose the task (statistics, tensor,
//               overflow_check, statistics with md5), bits 2-3 the level
//               (L0, L1, mix).
// Nothing may crash, hang or leak, whatever the bytes.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/config/config.h"
#include "common/config/config_proto.h"
#include "common/record/codec.h"
#include "common/shm/ring.h"
#include "common/shm/segment.h"
#include "daemon/ingest/drain.h"
#include "daemon/ingest/rank.h"
#include "daemon/ingest/step_accounting.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"
#include "tprobe/v1/control.pb.h"

namespace {

using tprobe::fuzz::Check;
using tprobe::fuzz::Cursor;
namespace daemon = tprobe::daemon;
namespace shm = tprobe::shm;

// Checks what ReadEntryBody hands a visitor against codec.h: a Key before
// each item of a dict and of the body, exactly one value after a
// BeginTyped, every Begin closed by one End, no deeper than
// kMaxValueDepth, and every text inside the body.
class CheckingVisitor : public tprobe::record::ValueVisitor {
 public:
  explicit CheckingVisitor(std::span<const std::byte> body) : body_(body) {
    frames_.push_back(Frame{Frame::kBody});
  }

  // After a body was read without error: nothing is left open.
  void CheckComplete() const {
    Check(frames_.size() == 1 && !frames_.back().keyed,
          "a body read without error leaves nothing open");
  }

  void Key(std::string_view key) override {
    Inside(key);
    Frame& f = frames_.back();
    Check(f.kind == Frame::kBody || f.kind == Frame::kDict,
          "a key only in a dict or the body");
    Check(!f.keyed, "a key is followed by its value, not by another key");
    f.keyed = true;
  }
  void Null() override { Value(); }
  void Bool(bool) override { Value(); }
  void Int(int64_t) override { Value(); }
  void Float(double) override { Value(); }
  void Str(std::string_view s) override {
    Inside(s);
    Value();
  }
  void TensorRef(uint32_t) override { Value(); }
  void BeginList() override { Open(Frame::kList); }
  void BeginDict() override { Open(Frame::kDict); }
  void BeginTyped(std::string_view type) override {
    Inside(type);
    Open(Frame::kTyped);
  }
  void End() override {
    Check(frames_.size() > 1, "an End closes something");
    const Frame f = frames_.back();
    Check(!f.keyed, "a container does not close between a key and its value");
    Check(f.kind != Frame::kTyped || f.values == 1,
          "a typed value closes after exactly one value");
    frames_.pop_back();
  }

 private:
  struct Frame {
    enum Kind { kBody, kList, kDict, kTyped } kind;
    bool keyed = false;  // a key waits for its value
    int values = 0;
  };

  // A value (a leaf, or a container as it opens) takes its place.
  void Value() {
    Frame& f = frames_.back();
    if (f.kind == Frame::kBody || f.kind == Frame::kDict) {
      Check(f.keyed, "an item of a dict or the body has its key");
      f.keyed = false;
    }
    Check(f.kind != Frame::kTyped || f.values == 0,
          "a typed value holds one value");
    ++f.values;
  }
  void Open(Frame::Kind kind) {
    Value();
    frames_.push_back(Frame{kind});
    Check(
        static_cast<int>(frames_.size()) - 1 <= tprobe::record::kMaxValueDepth,
        "values nest at most kMaxValueDepth deep");
  }
  void Inside(std::string_view text) const {
    const auto* begin = reinterpret_cast<const char*>(body_.data());
    Check(text.empty() || (text.data() >= begin &&
                           text.data() + text.size() <= begin + body_.size()),
          "a text view lies inside the body");
  }

  std::span<const std::byte> body_;
  std::vector<Frame> frames_;
};

// The record decoder under test: record::Decode, then an Entry's body
// through ReadEntryBody. False when the record is refused.
bool DecodeRecord(uint16_t type, std::span<const std::byte> payload) {
  auto decoded = tprobe::record::Decode(type, payload);
  if (!decoded.ok()) return false;
  const auto* entry = std::get_if<tprobe::record::EntryView>(&decoded.value());
  if (entry == nullptr) return true;
  CheckingVisitor visitor(entry->body);
  if (!tprobe::record::ReadEntryBody(entry->body, visitor).ok()) return false;
  visitor.CheckComplete();
  return true;
}

void RawRing(Cursor& in) {
  constexpr size_t kRingBytes = 4096;
  shm::RingHeader header{};
  const uint64_t head = in.Take<uint64_t>();
  const uint64_t tail = in.Take<uint64_t>();
  header.head.store(head);
  header.tail.store(tail);
  std::vector<std::byte> ring(kRingBytes);
  const auto bytes = in.Bytes(kRingBytes);
  std::memcpy(ring.data(), bytes.data(), bytes.size());
  shm::RingReader reader(&header, ring);
  for (;;) {
    auto peeked = reader.Peek();
    if (!peeked.ok() || !peeked.value()) break;
    Check(peeked.value()->payload.size() < kRingBytes,
          "a record lies inside the ring");
    if (!DecodeRecord(peeked.value()->type, peeked.value()->payload)) break;
    reader.Release();
  }
}

std::string ConfigJson(uint8_t mode, const std::string& dump_path) {
  static const char* const kTasks[] = {"statistics", "tensor", "overflow_check",
                                       "statistics"};
  static const char* const kLevels[] = {"L0", "L1", "mix", "mix"};
  const int task = mode & 3;
  std::string json = std::string(R"({"task": ")") + kTasks[task] +
                     R"(", "level": ")" + kLevels[(mode >> 2) & 3] +
                     R"(", "dump_path": ")" + dump_path + "\"";
  if (task == 3) json += R"(, "statistics": {"summary_mode": "md5"})";
  if (task == 2) json += R"(, "overflow_check": {"overflow_nums": 2})";
  return json + "}";
}

void Drained(uint8_t mode, Cursor& in) {
  static auto log = std::make_shared<spdlog::logger>("fuzz");  // no sinks
  static uint64_t client_id = 0;
  const std::string dump_path =
      tprobe::fuzz::FreshDir(tprobe::fuzz::ScratchDir() / "dump");
  tprobe::v1::Register reg;
  reg.set_pid(::getpid());
  reg.set_start_time(shm::ProcessStartTime(::getpid()));
  reg.set_rank(0);
  auto config = tprobe::config::ParseConfig(ConfigJson(mode, dump_path));
  Check(config.ok(), "the target's own config parses");
  *reg.mutable_config() = tprobe::config::ToProto(config.value());
  reg.set_ring_count(2);
  reg.set_ring_bytes(uint64_t{1} << 16);
  const daemon::PeerCredentials self{::getuid(), ::getgid(), ::getpid()};
  auto created = daemon::Rank::Create(++client_id, self, reg, {});
  if (!created.ok()) {
    std::fprintf(stderr, "cannot create a producer: %s\n",
                 created.status().message().c_str());
    std::abort();
  }
  std::unique_ptr<daemon::Rank> producer = std::move(created).value();
  std::vector<shm::RingWriter> writers;
  for (uint32_t i = 0; i < 2; ++i) {
    writers.emplace_back(producer->segment().ring_header(i),
                         producer->segment().ring_data(i));
  }
  while (in.left() > 0) {
    shm::RingWriter& w = writers[in.Take<uint8_t>() & 1];
    const auto type = in.Take<uint16_t>();
    const auto payload = in.Bytes(in.Take<uint16_t>());
    std::byte* p = w.Reserve(type, static_cast<uint32_t>(payload.size()));
    if (p == nullptr) break;  // full
    if (!payload.empty()) std::memcpy(p, payload.data(), payload.size());
    w.Commit();
  }
  // What a trainer does at a step's end: the daemon sees every record.
  for (shm::RingWriter& w : writers) w.Publish();
  {
    auto state = producer->Lock();
    daemon::DrainCommitted(*producer, *state, *log);
    daemon::ReleaseHeldNodes(*producer, *state, *log);
    daemon::CloseOpenCalls(*state);
    daemon::SettleOpenStep(*state);
    daemon::ReleaseSettledTensors(*producer, *state, *log);
    (void)state->assembler.Finish(UINT32_MAX);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Cursor in(data, size);
  const auto mode = in.Take<uint8_t>();
  if (mode & 0x10) {
    RawRing(in);
  } else {
    Drained(mode, in);
  }
  return 0;
}
