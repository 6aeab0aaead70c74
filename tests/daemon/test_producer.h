#ifndef TPROBE_TESTS_DAEMON_TEST_PRODUCER_H_
#define TPROBE_TESTS_DAEMON_TEST_PRODUCER_H_

// Builds a daemon-side Producer in the test process, without a socket: the
// segment is real shared memory, named after this process and a fresh id,
// and removed when the TestProducer goes away.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "common/config/config_proto.h"
#include "common/shm/segment.h"
#include "daemon/ingest/producer.h"
#include "tests/daemon/ring_records.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::testing {

// A config.json with `dump_path`; `task_section` is added as the section of
// the task when not empty (for example R"({"summary_mode": "md5"})").
inline std::string ConfigJson(const std::string& dump_path,
                              const std::string& task = "statistics",
                              const std::string& level = "mix",
                              const std::string& task_section = "") {
  std::string json = R"({"task": ")" + task + R"(", "dump_path": ")" +
                     dump_path + R"(", "level": ")" + level + R"(")";
  if (!task_section.empty()) json += ", \"" + task + "\": " + task_section;
  return json + "}";
}

// The credentials of a connection from this process.
inline daemon::PeerCredentials Self() {
  return daemon::PeerCredentials{::getuid(), ::getgid(), ::getpid()};
}

// A Register for this process, with the config `config_json` parses to
// (as the client sends it).
inline v1::Register MakeRegister(const std::string& config_json,
                                 uint32_t ring_count = 1, int rank = 0) {
  v1::Register reg;
  reg.set_pid(::getpid());
  reg.set_start_time(shm::ProcessStartTime(::getpid()));
  reg.set_rank(rank);
  auto config = config::ParseConfig(config_json);
  EXPECT_TRUE(config.ok()) << config.status().message();
  if (config.ok()) *reg.mutable_config() = config::ToProto(*config);
  reg.set_ring_count(ring_count);
  reg.set_ring_bytes(uint64_t{1} << 16);
  reg.set_framework("pytorch");
  return reg;
}

class TestProducer {
 public:
  explicit TestProducer(const v1::Register& reg,
                        const daemon::ProducerLimits& limits = {}) {
    static std::atomic<uint64_t> next_id{1000};
    auto created = daemon::Producer::Create(next_id++, Self(), reg, limits);
    EXPECT_TRUE(created.ok()) << created.status().message();
    if (created.ok()) producer_ = std::move(created).value();
  }

  daemon::Producer& operator*() const { return *producer_; }
  daemon::Producer* operator->() const { return producer_.get(); }
  explicit operator bool() const { return producer_ != nullptr; }

  // A writer for ring `i`, as the producing thread would hold it.
  RecordWriter Writer(uint32_t i) const {
    return RecordWriter(producer_->segment().ring_header(i),
                        producer_->segment().ring_data(i));
  }

 private:
  std::unique_ptr<daemon::Producer> producer_;
};

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_DAEMON_TEST_PRODUCER_H_
