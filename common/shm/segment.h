#ifndef TPROBE_COMMON_SHM_SEGMENT_H_
#define TPROBE_COMMON_SHM_SEGMENT_H_

// A shared-memory segment laid out as common/shm/layout.h says: a sealed
// memory file (memfd) that the daemon creates for each registered producer
// and hands to it over the control socket (SCM_RIGHTS, frame.h). It has no
// name in any file system, so no other process can open it, and nothing is
// left behind when both sides are gone, however they end.
//
// The file is sealed at its size (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL):
// the producer can write every byte but cannot truncate the segment under
// the daemon, which would turn the daemon's next read into a SIGBUS. The
// creator's mapping is watched besides (fault_guard.h): a bus error on it
// reads zeros and sets faulted() instead of ending the daemon.
//
// The geometry (ring count and sizes) is copied out of the header once, when
// the segment is created or opened, and never read from shared memory again:
// the other side may overwrite the header at any time. The creator allocates
// every page and the opener populates its page tables, so the first records
// written cost what later ones do.
//
// Boost.Interprocess, which the rest of the stack would suggest, has neither
// memory files nor seals: this file maps with mmap directly.
//
// Thread safety: a Segment is immutable after Create/Open; its accessors may
// be called from any thread.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/shm/layout.h"
#include "common/status.h"

namespace tprobe::shm {

class Segment {
 public:
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  // Creates a segment called `name` (a label, shown in /proc/PID/maps),
  // writes its header, initialises every ring and seals its size. Returns
  // an error naming the segment when the memory cannot be created,
  // allocated, sealed, mapped or watched. Every ring but the last holds
  // `ring_bytes`, the last `last_ring_bytes`.
  // REQUIRES: ring_count >= 1; both sizes are powers of two, at least 4096.
  static Result<std::unique_ptr<Segment>> Create(const std::string& name,
                                                 uint32_t ring_count,
                                                 uint64_t ring_bytes,
                                                 uint64_t last_ring_bytes,
                                                 int32_t producer_pid,
                                                 uint64_t producer_start_time);

  // Maps the segment whose memory file is `fd` (the one a Create passed
  // over the socket) and checks its magic, layout version and size. Takes
  // `fd` and closes it, on success and on failure. Returns an error naming
  // the segment (`name`, for messages) when it cannot be mapped or checked.
  static Result<std::unique_ptr<Segment>> Open(int fd, const std::string& name);

  const std::string& name() const { return name_; }
  SegmentHeader* header() const { return header_; }
  // The creator's memory file, to pass to the producer (-1 for an opener).
  // The segment owns it.
  int fd() const;
  // True once an access to the creator's mapping faulted: the mapping reads
  // zeros from then on, and nothing in it is to be trusted. Always false for
  // an opener.
  bool faulted() const;
  // The geometry as it was at Create/Open (never re-read).
  uint32_t ring_count() const { return ring_count_; }
  uint64_t ring_bytes() const { return ring_bytes_; }
  uint64_t last_ring_bytes() const { return last_ring_bytes_; }
  // REQUIRES: i < ring_count(). ring_data(i).size() is ring i's size.
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
  uint64_t last_ring_bytes_ = 0;
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
