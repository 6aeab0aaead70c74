#ifndef TPROBE_TESTS_DAEMON_TEST_RANK_H_
#define TPROBE_TESTS_DAEMON_TEST_RANK_H_

// Builds a daemon-side Rank in the test process, without a socket: the
// segment is real shared memory, named after this process and a fresh id,
// and removed when the TestRank goes away.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "common/shm/segment.h"
#include "daemon/ingest/rank.h"
#include "tests/daemon/raw_client.h"
#include "tests/daemon/ring_records.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::testing {

// The credentials of a connection from this process.
inline daemon::PeerCredentials Self() {
  return daemon::PeerCredentials{::getuid(), ::getgid(), ::getpid()};
}

class TestRank {
 public:
  explicit TestRank(const v1::Register& reg,
                    const daemon::RankLimits& limits = {}) {
    static std::atomic<uint64_t> next_id{1000};
    auto created = daemon::Rank::Create(next_id++, Self(), reg, limits);
    EXPECT_TRUE(created.ok()) << created.status().message();
    if (created.ok()) producer_ = std::move(created).value();
  }

  daemon::Rank& operator*() const { return *producer_; }
  daemon::Rank* operator->() const { return producer_.get(); }
  explicit operator bool() const { return producer_ != nullptr; }

  // A writer for ring `i`, as the producing thread would hold it.
  RecordWriter Writer(uint32_t i) const {
    return RecordWriter(producer_->segment().ring_header(i),
                        producer_->segment().ring_data(i));
  }

 private:
  std::unique_ptr<daemon::Rank> producer_;
};

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_DAEMON_TEST_RANK_H_
