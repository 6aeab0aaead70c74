#include "common/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/shm/fault_guard.h"
#include "common/shm/ring.h"

namespace tprobe::shm {

// The segment's memory file (the creator's; -1 for an opener, which closes
// it once mapped) and the mapping.
struct Segment::Mapping {
  ~Mapping() {
    guard.reset();  // before the memory it watches goes
    if (address != nullptr) ::munmap(address, bytes);
    if (fd >= 0) ::close(fd);
  }
  // Maps `size` bytes of `fd` shared, for reading and writing.
  Status Map(size_t size) {
    void* at = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED) {
      return Status::Error(std::string("cannot map it: ") +
                           std::strerror(errno));
    }
    address = at;
    bytes = size;
    return Status::Ok();
  }

  int fd = -1;
  void* address = nullptr;
  size_t bytes = 0;
  // The creator's: set by Create.
  std::unique_ptr<FaultGuard> guard;
};

Segment::Segment(std::string name, std::unique_ptr<Mapping> mapping)
    : name_(std::move(name)), mapping_(std::move(mapping)) {
  header_ = static_cast<SegmentHeader*>(mapping_->address);
  // Read once; Create wrote it and Open checked it before this copy.
  ring_count_ = header_->ring_count;
  ring_bytes_ = header_->ring_bytes;
  last_ring_bytes_ = header_->last_ring_bytes;
}

Segment::~Segment() = default;

int Segment::fd() const { return mapping_->fd; }

bool Segment::faulted() const {
  return mapping_->guard != nullptr && mapping_->guard->faulted();
}

RingHeader* Segment::ring_header(uint32_t i) const {
  assert(i < ring_count_);
  auto* base = reinterpret_cast<std::byte*>(header_ + 1);
  return reinterpret_cast<RingHeader*>(base + i * RingStride(ring_bytes_));
}

std::span<std::byte> Segment::ring_data(uint32_t i) const {
  auto* data = reinterpret_cast<std::byte*>(ring_header(i) + 1);
  return {data, i + 1 == ring_count_ ? last_ring_bytes_ : ring_bytes_};
}

namespace {

// Populates the page tables of a mapping, so that the first write to each
// page does not fault. Where the kernel lacks MADV_POPULATE_WRITE (before
// Linux 5.14), one read per page maps the pages the creator allocated.
void Prefault(void* address, size_t bytes) {
  if (::madvise(address, bytes, MADV_POPULATE_WRITE) == 0) return;
  const long page = ::sysconf(_SC_PAGESIZE);
  const auto* p = static_cast<const volatile std::byte*>(address);
  for (size_t at = 0; at < bytes; at += static_cast<size_t>(page)) (void)p[at];
}

Status SystemError(const std::string& what, int err) {
  return Status::Error(what + ": " + std::strerror(err));
}

// The seals a daemon's segment carries: its size is fixed for good.
constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

}  // namespace

Result<std::unique_ptr<Segment>> Segment::Create(const std::string& name,
                                                 uint32_t ring_count,
                                                 uint64_t ring_bytes,
                                                 uint64_t last_ring_bytes,
                                                 int32_t producer_pid,
                                                 uint64_t producer_start_time) {
  const uint64_t bytes = SegmentBytes(ring_count, ring_bytes, last_ring_bytes);
  const std::string what = "shared memory segment '" + name + "' of " +
                           std::to_string(bytes) + " bytes";
  auto m = std::make_unique<Mapping>();
  m->fd = ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (m->fd < 0) return SystemError("cannot create " + what, errno);
  if (::ftruncate(m->fd, static_cast<off_t>(bytes)) != 0) {
    return SystemError("cannot size " + what, errno);
  }
  // Allocate every page now: the rings are warm from the first record, and
  // memory that is not there fails here with a message instead of a SIGBUS
  // in the trainer later.
  if (int err = ::posix_fallocate(m->fd, 0, static_cast<off_t>(bytes));
      err != 0) {
    return SystemError("cannot allocate " + what, err);
  }
  if (::fcntl(m->fd, F_ADD_SEALS, kSeals) != 0) {
    return SystemError("cannot seal " + what, errno);
  }
  if (Status s = m->Map(bytes); !s.ok()) {
    return Status::Error(what + ": " + s.message());
  }
  auto guard = FaultGuard::Watch(m->address, bytes);
  if (!guard.ok()) return Status::Error(what + ": " + guard.status().message());
  m->guard = std::move(guard).value();
  auto* h = static_cast<SegmentHeader*>(m->address);
  std::memset(static_cast<void*>(h), 0, sizeof *h);
  h->layout_version = kLayoutVersion;
  h->ring_count = ring_count;
  h->ring_bytes = ring_bytes;
  h->last_ring_bytes = last_ring_bytes;
  h->producer_pid = producer_pid;
  h->producer_start_time = producer_start_time;
  std::unique_ptr<Segment> seg(new Segment(name, std::move(m)));
  for (uint32_t i = 0; i < ring_count; ++i) InitRing(seg->ring_header(i));
  // The magic goes last, with release order: a header with the magic is a
  // complete header. (A store rather than a fence, which GCC's TSan does
  // not model.)
  std::atomic_ref<uint64_t>(h->magic).store(kSegmentMagic,
                                            std::memory_order_release);
  return seg;
}

Result<std::unique_ptr<Segment>> Segment::Open(int fd,
                                               const std::string& name) {
  auto m = std::make_unique<Mapping>();
  m->fd = fd;
  const std::string what = "shared memory segment '" + name + "'";
  struct stat st;
  if (::fstat(fd, &st) != 0) return SystemError("cannot open " + what, errno);
  const auto mapped = static_cast<uint64_t>(st.st_size);
  if (mapped < sizeof(SegmentHeader)) {
    return Status::Error(what + " is too small to hold a header");
  }
  if (Status s = m->Map(mapped); !s.ok()) {
    return Status::Error("cannot open " + what + ": " + s.message());
  }
  // The mapping keeps the memory: the descriptor is not needed any more.
  ::close(m->fd);
  m->fd = -1;
  // Check a private copy: the creator may still change the mapping.
  SegmentHeader header;
  std::memcpy(&header, m->address, sizeof header);
  if (Status s = CheckHeader(header, mapped); !s.ok()) {
    return Status::Error(what + ": " + s.message());
  }
  Prefault(m->address, mapped);
  std::unique_ptr<Segment> seg(new Segment(name, std::move(m)));
  if (seg->ring_count_ != header.ring_count ||
      seg->ring_bytes_ != header.ring_bytes ||
      seg->last_ring_bytes_ != header.last_ring_bytes) {
    return Status::Error(what + " changed while it was opened");
  }
  return seg;
}

Status CheckHeader(const SegmentHeader& header, uint64_t mapped_bytes) {
  if (header.magic != kSegmentMagic) {
    return Status::Error("bad magic (not a tprobe segment)");
  }
  if (header.layout_version != kLayoutVersion) {
    return Status::Error(
        "layout version " + std::to_string(header.layout_version) +
        " is not the supported version " + std::to_string(kLayoutVersion));
  }
  const uint64_t rb = header.ring_bytes;
  const uint64_t last = header.last_ring_bytes;
  // At most 2^40 bytes a ring: 256 of them still sum without overflow.
  auto plausible = [](uint64_t bytes) {
    return bytes >= 4096 && bytes <= (uint64_t{1} << 40) &&
           (bytes & (bytes - 1)) == 0;
  };
  if (!plausible(rb) || !plausible(last) || header.ring_count == 0 ||
      header.ring_count > 256) {
    return Status::Error("implausible ring geometry (" +
                         std::to_string(header.ring_count) + " rings of " +
                         std::to_string(rb) + " bytes, the last of " +
                         std::to_string(last) + ")");
  }
  if (SegmentBytes(header.ring_count, rb, last) > mapped_bytes) {
    return Status::Error("segment is smaller than its " +
                         std::to_string(header.ring_count) + " rings need");
  }
  return Status::Ok();
}

bool ProcessIsZombie(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() &&
         text[close + 2] == 'Z';
}

uint64_t ProcessStartTime(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces; fields restart after ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return std::stoull(field);
  }
  return 0;
}

}  // namespace tprobe::shm
