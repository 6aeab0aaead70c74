// Tests for common/shm/ring.cc on heap memory (and, for the producer-death
// test, on a real forked process over real shared memory).

#include "common/shm/ring.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tprobe::shm {
namespace {

class RingTest : public ::testing::Test {
 protected:
  explicit RingTest(size_t bytes = 1024) : data_(bytes) { InitRing(&header_); }
  std::span<std::byte> data() { return {data_.data(), data_.size()}; }

  bool Write(RingWriter& w, uint16_t type, const std::string& text) {
    std::byte* p = w.Reserve(type, static_cast<uint32_t>(text.size()));
    if (p == nullptr) return false;
    std::memcpy(p, text.data(), text.size());
    w.Commit();
    w.Publish();
    return true;
  }

  std::optional<std::pair<uint16_t, std::string>> Read(RingReader& r) {
    auto rec = r.Peek();
    EXPECT_TRUE(rec.ok()) << rec.status().message();
    if (!rec.ok() || !rec.value()) return std::nullopt;
    auto view = *rec.value();
    std::string text(reinterpret_cast<const char*>(view.payload.data()),
                     view.payload.size());
    r.Release();
    return std::make_pair(view.type, text);
  }

  RingHeader header_;
  std::vector<std::byte> data_;
};

TEST_F(RingTest, ReadsRecordsInWriteOrder) {
  RingWriter w(&header_, data());
  RingReader r(&header_, data());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(Write(w, 1 + i % 3, "record-" + std::to_string(i)));
  }
  for (int i = 0; i < 10; ++i) {
    auto rec = Read(r);
    ASSERT_TRUE(rec);
    EXPECT_EQ(rec->first, 1 + i % 3);
    EXPECT_EQ(rec->second, "record-" + std::to_string(i));
  }
  EXPECT_FALSE(Read(r));
  EXPECT_EQ(header_.records_written.load(), 10u);
}

TEST_F(RingTest, UnreadRecordsCountsWhatTheReaderLeftNotThePadding) {
  RingWriter w(&header_, data());
  RingReader r(&header_, data());
  EXPECT_EQ(UnreadRecords(header_, data()), 0u);
  // Around the end of the ring, so that a padding record lies among them.
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(Write(w, 1, std::string(40, 'a')));
    ASSERT_TRUE(Read(r));
  }
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(Write(w, 2, std::string(90, 'b')));
  EXPECT_EQ(UnreadRecords(header_, data()), 7u);
  ASSERT_TRUE(Read(r));
  ASSERT_TRUE(Read(r));
  EXPECT_EQ(UnreadRecords(header_, data()), 5u);
  // A head no writer could have stored counts nothing.
  header_.head.store(header_.tail.load() + 2 * data_.size());
  EXPECT_EQ(UnreadRecords(header_, data()), 0u);
}

TEST_F(RingTest, WrapsAroundManyTimesWithVariableSizes) {
  RingWriter w(&header_, data());
  RingReader r(&header_, data());
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> size(0, 300);
  int written = 0, read = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text(size(rng), static_cast<char>('a' + round % 26));
    text += "#" + std::to_string(written);
    if (Write(w, 2, text)) ++written;
    if (round % 3 != 0) {
      while (auto rec = Read(r)) {
        EXPECT_EQ(rec->second.substr(rec->second.find('#') + 1),
                  std::to_string(read));
        ++read;
      }
    }
  }
  while (Read(r)) ++read;
  EXPECT_EQ(read, written);
  EXPECT_GT(header_.head.load(), 10 * data_.size()) << "the ring wrapped";
}

TEST_F(RingTest, WriteFailsWithoutSideEffectsWhenFull) {
  RingWriter w(&header_, data());
  int n = 0;
  // 56-byte payloads take 64 bytes each: they fill the ring exactly.
  while (Write(w, 1, std::string(56, 'x'))) ++n;
  ASSERT_EQ(n, 1024 / 64);
  const uint64_t head = header_.head.load();
  const uint64_t records = header_.records_written.load();
  std::vector<std::byte> before = data_;
  EXPECT_EQ(w.Reserve(1, 56), nullptr);
  EXPECT_EQ(w.Reserve(1, 0), nullptr);
  EXPECT_EQ(header_.head.load(), head);
  EXPECT_EQ(header_.records_written.load(), records);
  EXPECT_EQ(data_, before) << "a failed reservation wrote bytes";
  // Freeing one record makes room again.
  RingReader r(&header_, data());
  ASSERT_TRUE(Read(r));
  EXPECT_TRUE(Write(w, 1, std::string(56, 'y')));
}

TEST_F(RingTest, RejectsRecordsLargerThanHalfTheRing) {
  RingWriter w(&header_, data());
  EXPECT_EQ(w.MaxPayload(), data_.size() / 2 - sizeof(RecordHeader));
  EXPECT_EQ(w.Reserve(1, w.MaxPayload() + 1), nullptr);
  EXPECT_NE(w.Reserve(1, w.MaxPayload()), nullptr);
  w.Commit();
}

TEST_F(RingTest, ChunkedPayloadLargerThanTheRingArrivesWhole) {
  RingWriter w(&header_, data());
  RingReader r(&header_, data());
  std::string payload(10 * data_.size() + 123, '\0');
  std::mt19937 rng(3);
  for (auto& c : payload) c = static_cast<char>(rng());
  const size_t chunk = w.MaxPayload();
  std::string received;
  size_t sent = 0;
  while (sent < payload.size() || !received.empty()) {
    if (sent < payload.size()) {
      const size_t n = std::min(chunk, payload.size() - sent);
      if (Write(w, 5, payload.substr(sent, n))) sent += n;
    }
    auto rec = Read(r);
    if (rec) received += rec->second;
    if (received.size() == payload.size()) break;
  }
  EXPECT_EQ(received, payload);
}

TEST_F(RingTest, UncommittedRecordIsInvisible) {
  RingWriter w(&header_, data());
  RingReader r(&header_, data());
  std::byte* p = w.Reserve(1, 16);
  ASSERT_NE(p, nullptr);
  std::memset(p, 0x5a, 16);
  EXPECT_FALSE(Read(r));
  w.Commit();
  w.Publish();
  EXPECT_TRUE(Read(r));
}

TEST_F(RingTest, CommittedRecordsArePublishedInBatches) {
  RingHeader header;
  InitRing(&header);
  std::vector<std::byte> bytes(1 << 20);
  std::span<std::byte> ring(bytes.data(), bytes.size());
  RingWriter w(&header, ring);
  RingReader r(&header, ring);
  auto commit = [&w] {
    std::byte* p = w.Reserve(1, 8);
    ASSERT_NE(p, nullptr);
    std::memcpy(p, "smallrec", 8);
    w.Commit();
  };
  for (uint64_t i = 0; i + 1 < RingWriter::kPublishRecords; ++i) commit();
  // Counted as committed, not yet visible to the reader.
  EXPECT_EQ(header.records_written.load(), RingWriter::kPublishRecords - 1);
  EXPECT_EQ(header.head.load(), 0u);
  auto peeked = r.Peek();
  ASSERT_TRUE(peeked.ok());
  EXPECT_FALSE(peeked.value());
  // The batch's last record publishes all of them.
  commit();
  uint64_t seen = 0;
  for (;;) {
    auto rec = r.Peek();
    ASSERT_TRUE(rec.ok());
    if (!rec.value()) break;
    r.Release();
    ++seen;
  }
  EXPECT_EQ(seen, RingWriter::kPublishRecords);
  // A record as large as the byte batch is published on its own.
  std::byte* p = w.Reserve(2, static_cast<uint32_t>(w.PublishBytes()));
  ASSERT_NE(p, nullptr);
  w.Commit();
  auto big = r.Peek();
  ASSERT_TRUE(big.ok() && big.value());
  EXPECT_EQ(big.value()->type, 2);
  r.Release();
  // Publish() shows whatever was committed, and is idempotent.
  commit();
  EXPECT_EQ(header.head.load(), r.position());
  w.Publish();
  w.Publish();
  EXPECT_EQ(header.head.load(), r.position() + AlignedRecordSize(8));
}

TEST_F(RingTest, FullRingPublishesSoTheReaderCanFreeIt) {
  RingWriter w(&header_, data());
  RingReader r(&header_, data());
  int n = 0;
  for (;;) {
    std::byte* p = w.Reserve(1, 56);  // 64 bytes a record: fills it exactly
    if (p == nullptr) break;
    w.Commit();
    ++n;
  }
  ASSERT_EQ(n, 1024 / 64);
  ASSERT_LT(n, static_cast<int>(RingWriter::kPublishRecords));
  // The failed reservation published all of them.
  for (int i = 0; i < n; ++i) ASSERT_TRUE(Read(r));
  EXPECT_FALSE(Read(r));
  EXPECT_NE(w.Reserve(1, 56), nullptr);
}

// Another thread publishes from the writer's mirror while the writer goes
// on (Recorder::PublishAll at a step boundary): head only moves forward, and
// every record the mirror showed is visible at once.
TEST_F(RingTest, PublishCommittedFromAnotherThreadNeverMovesHeadBack) {
  RingHeader header;
  InitRing(&header);
  std::vector<std::byte> bytes(1 << 16);
  std::span<std::byte> ring(bytes.data(), bytes.size());
  std::atomic<uint64_t> mirror{0};
  RingWriter w(&header, ring, &mirror);
  RingReader r(&header, ring);
  constexpr int kRecords = 20000;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < kRecords; ++i) {
      std::byte* p;
      while ((p = w.Reserve(1, sizeof i)) == nullptr) {
      }
      std::memcpy(p, &i, sizeof i);
      w.Commit();
    }
    done = true;
  });
  int next = 0;
  uint64_t last_head = 0;
  while (next < kRecords) {
    const uint64_t committed = mirror.load(std::memory_order_acquire);
    PublishCommitted(&header, committed);
    const uint64_t head = header.head.load();
    ASSERT_GE(head, committed);
    ASSERT_GE(head, last_head) << "head went back";
    last_head = head;
    for (;;) {
      auto rec = r.Peek();
      ASSERT_TRUE(rec.ok()) << rec.status().message();
      if (!rec.value()) break;
      int value;
      std::memcpy(&value, rec.value()->payload.data(), sizeof value);
      ASSERT_EQ(value, next) << "records out of order";
      r.Release();
      ++next;
    }
    if (done && next < kRecords) {
      // The writer finished: its last batch is in the mirror.
      PublishCommitted(&header, mirror.load(std::memory_order_acquire));
    }
  }
  writer.join();
  EXPECT_EQ(header.records_written.load(), static_cast<uint64_t>(kRecords));
}

// A reader made on a ring already read from (a daemon taking over a
// segment) starts where the last one stopped.
TEST_F(RingTest, NewReaderStartsAtTheTail) {
  RingWriter w(&header_, data());
  {
    RingReader first(&header_, data());
    ASSERT_TRUE(Write(w, 1, "one"));
    ASSERT_TRUE(Read(first));
  }
  RingReader second(&header_, data());
  EXPECT_FALSE(Read(second));
  ASSERT_TRUE(Write(w, 1, "two"));
  auto rec = Read(second);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->second, "two");
}

TEST_F(RingTest, CorruptHeaderIsReportedNotFollowed) {
  RingWriter w(&header_, data());
  ASSERT_TRUE(Write(w, 1, "fine"));
  auto* h = reinterpret_cast<RecordHeader*>(data_.data());
  h->size = 1u << 30;
  RingReader r(&header_, data());
  auto rec = r.Peek();
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.status().message().find("corrupt ring record"),
            std::string::npos);
  EXPECT_FALSE(r.Peek().ok()) << "the reader stays unusable";
}

// The reader starts at the tail the header holds, which shared memory
// could have changed: an unaligned one, 2 bytes before the ring's end, is
// reported as corrupt and no byte past the ring is read (fuzz_record found
// the read under ASan).
TEST_F(RingTest, UnalignedStartingTailIsReportedNotRead) {
  const uint64_t tail = data().size() - 2;
  header_.tail.store(tail);
  header_.head.store(tail + 16);
  RingReader r(&header_, data());
  auto rec = r.Peek();
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.status().message().find("corrupt ring record"),
            std::string::npos);
}

// A producer process killed in the middle of a record leaves only the
// records it committed before, and the ring stays usable.
TEST(RingProcessTest, ProducerKilledMidRecordLeavesConsistentRing) {
  const size_t bytes = 4096;
  void* mem = ::mmap(nullptr, sizeof(RingHeader) + bytes,
                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* header = static_cast<RingHeader*>(mem);
  InitRing(header);
  std::span<std::byte> data(reinterpret_cast<std::byte*>(header + 1), bytes);
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    RingWriter w(header, data);
    for (int i = 0; i < 3; ++i) {
      std::byte* p = w.Reserve(1, 8);
      std::memcpy(p, "complete", 8);
      w.Commit();
    }
    w.Publish();
    for (int i = 0; i < 2; ++i) {  // committed, never published
      std::byte* p = w.Reserve(1, 8);
      std::memcpy(p, "unpublis", 8);
      w.Commit();
    }
    std::byte* p = w.Reserve(1, 100);
    std::memset(p, 0x77, 50);  // half a record, never committed
    char ready = 'r';
    (void)!::write(pipefd[1], &ready, 1);
    ::pause();  // killed here
    ::_exit(0);
  }
  char ready;
  ASSERT_EQ(::read(pipefd[0], &ready, 1), 1);
  ::kill(child, SIGKILL);
  int status;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  RingReader r(header, data);
  int complete = 0;
  for (;;) {
    auto rec = r.Peek();
    ASSERT_TRUE(rec.ok());
    if (!rec.value()) break;
    EXPECT_EQ(
        std::string(reinterpret_cast<const char*>(rec.value()->payload.data()),
                    8),
        "complete");
    r.Release();
    ++complete;
  }
  EXPECT_EQ(complete, 3);
  // The lost records were counted as committed: a producer's count may run
  // ahead of what the reader can see, never behind.
  EXPECT_EQ(header->records_written.load(), 5u);
  // A new producer (a restarted rank) continues from the published head.
  RingWriter w2(header, data);
  std::byte* p = w2.Reserve(1, 4);
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "next", 4);
  w2.Commit();
  w2.Publish();
  auto rec = r.Peek();
  ASSERT_TRUE(rec.ok() && rec.value());
  EXPECT_EQ(std::string(
                reinterpret_cast<const char*>(rec.value()->payload.data()), 4),
            "next");
  ::munmap(mem, sizeof(RingHeader) + bytes);
}

}  // namespace
}  // namespace tprobe::shm
