#ifndef TPROBE_COMMON_SHM_SEGMENT_H_
#define TPROBE_COMMON_SHM_SEGMENT_H_

// A named POSIX shared-memory segment laid out as common/shm/layout.h says.
// This is the only place that knows Boost.Interprocess; everything else works
// on (header*, span<byte>).
//
// The daemon creates a segment for each registered producer and removes it
// when the producer is gone. The producer opens it by name. A segment has
// mode 0600: only its owner (and root) can map it, so a daemon running as
// another user (root, for a node's shared daemon) gives it to the producer.
//
// The geometry (ring count and size) is copied out of the header once, when
// the segment is created or opened, and never read from shared memory again:
// the other side may overwrite the header at any time. Both sides prefault
// the mapping (the creator allocates every page, the opener populates its
// page tables), so the first records written cost what later ones do.
//
// The opener may shrink the segment (its owner can truncate it). The
// creator's mapping is watched (fault_guard.h): a bus error on it then reads
// zeros and sets faulted(), instead of ending the creator's process.
//
// Thread safety: a Segment is immutable after Create/Open; its accessors may
// be called from any thread.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/shm/layout.h"
#include "common/status.h"

namespace tprobe::shm {

// The user and group a segment is given to.
struct SegmentOwner {
  uid_t uid;
  gid_t gid;
};

class Segment {
 public:
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  // Creates the segment `name` with mode 0600 (replacing a stale one of the
  // same name), writes its header and initialises every ring. With `owner`,
  // the segment is given to that user and group (fchown) unless it is the
  // calling process's own or root's, which can map it anyway. Returns an
  // error naming the segment when shared memory cannot be created or sized,
  // or when it cannot be given to another user (the caller is not root).
  // REQUIRES: ring_bytes is a power of two, at least 4096.
  static Result<std::unique_ptr<Segment>> Create(
      const std::string& name, uint32_t ring_count, uint64_t ring_bytes,
      int32_t producer_pid, uint64_t producer_start_time,
      std::optional<SegmentOwner> owner = std::nullopt);

  // Opens an existing segment and checks its magic, layout version and size.
  // Returns an error naming the segment when it cannot be mapped or checked.
  static Result<std::unique_ptr<Segment>> Open(const std::string& name);

  // Removes the name; mappings stay valid until their Segment is destroyed.
  static void Remove(const std::string& name);

  const std::string& name() const { return name_; }
  SegmentHeader* header() const { return header_; }
  // True once an access to the creator's mapping faulted (the segment was
  // shrunk under it): the mapping reads zeros from then on, and nothing in
  // it is to be trusted. Always false for an opener.
  bool faulted() const;
  // The geometry as it was at Create/Open (never re-read).
  uint32_t ring_count() const { return ring_count_; }
  uint64_t ring_bytes() const { return ring_bytes_; }
  // REQUIRES: i < ring_count().
  RingHeader* ring_header(uint32_t i) const;
  std::span<std::byte> ring_data(uint32_t i) const;

 private:
  struct Mapping;
  Segment(std::string name, std::unique_ptr<Mapping> mapping);

  std::string name_;
  std::unique_ptr<Mapping> mapping_;
  SegmentHeader* header_ = nullptr;
  uint32_t ring_count_ = 0;
  uint64_t ring_bytes_ = 0;
};

// Checks a mapped header: magic, layout version, and that `mapped_bytes`
// holds all the rings it declares. The message says what is wrong.
Status CheckHeader(const SegmentHeader& header, uint64_t mapped_bytes);

// The start time of process `pid` in clock ticks since boot (field 22 of
// /proc/<pid>/stat), or 0 when the process does not exist. With the pid it
// identifies a process across pid reuse.
uint64_t ProcessStartTime(int pid);

// True when process `pid` exists as a zombie (it exited; its parent has not
// reaped it yet).
bool ProcessIsZombie(int pid);

}  // namespace tprobe::shm

#endif  // TPROBE_COMMON_SHM_SEGMENT_H_
