// libFuzzer target: the daemon's reading of a producer's rings, whose bytes
// a trainer process wrote (common/shm/ring.h, common/record, daemon/drain.h).
//
// The first byte chooses the mode:
//   bit 4 set   raw ring: the rest is [u64 head][u64 tail][ring bytes]; a
//               RingReader walks the ring and each record goes to the
//               decoder (DecodeRecord). A 4 KiB ring on the heap.
//   bit 4 clear records: the rest is records [u8 ring][u16 type][u16 size]
//               [payload] written through the real RingWriter into the two
//               rings of a real Producer (shared memory), which the daemon
//               then drains, finishes and writes as it would at Goodbye:
//               decode, assemble, render entries, statistics, tensor files,
//               dump.json. Bits 0-1 choose the task (statistics, tensor,
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
#include <vector>

#include "common/record/codec.h"
#include "common/shm/ring.h"
#include "common/shm/segment.h"
#include "daemon/drain.h"
#include "daemon/producer.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"
#include "tprobe/v1/control.pb.h"

namespace {

using tprobe::fuzz::Cursor;
namespace daemon = tprobe::daemon;
namespace shm = tprobe::shm;

// The record decoder under test: its one public entry point. (Retarget
// here when the record format changes.)
bool DecodeRecord(uint16_t type, std::span<const std::byte> payload) {
  return tprobe::record::Decode(type, payload).ok();
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
    tprobe::fuzz::Check(peeked.value()->payload.size() < kRingBytes,
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
  reg.set_config_json(ConfigJson(mode, dump_path));
  reg.set_ring_count(2);
  reg.set_ring_bytes(uint64_t{1} << 16);
  const daemon::PeerCredentials self{::getuid(), ::getgid(), ::getpid()};
  auto created = daemon::Producer::Create(++client_id, self, reg, {});
  if (!created.ok()) {
    std::fprintf(stderr, "cannot create a producer: %s\n",
                 created.status().message().c_str());
    std::abort();
  }
  std::unique_ptr<daemon::Producer> producer = std::move(created).value();
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
  {
    auto state = producer->Lock();
    daemon::DrainCommitted(*producer, *state, *log);
    daemon::ReleaseHeldNodes(*producer, *state, *log);
    daemon::CloseOpenCalls(*state);
    (void)state->assembler.Finish(UINT32_MAX);
  }
  shm::Segment::Remove(producer->segment_name());
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
