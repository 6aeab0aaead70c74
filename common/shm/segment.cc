#include "common/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/shm/fault_guard.h"
#include "common/shm/ring.h"

namespace tprobe::shm {

namespace bip = boost::interprocess;

struct Segment::Mapping {
  bip::shared_memory_object object;
  bip::mapped_region region;
  // The creator's: set by Create, destroyed before the region is unmapped.
  std::unique_ptr<FaultGuard> guard;
};

Segment::Segment(std::string name, std::unique_ptr<Mapping> mapping)
    : name_(std::move(name)), mapping_(std::move(mapping)) {
  header_ = static_cast<SegmentHeader*>(mapping_->region.get_address());
  // Read once; Create wrote it and Open checked it before this copy.
  ring_count_ = header_->ring_count;
  ring_bytes_ = header_->ring_bytes;
}

Segment::~Segment() = default;

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
  return {data, ring_bytes_};
}

namespace {

// Gives the segment's file descriptor to `owner` where that is needed.
Status GiveTo(int fd, const std::string& name,
              const std::optional<SegmentOwner>& owner) {
  if (!owner || owner->uid == 0) return Status::Ok();  // root maps anything
  if (owner->uid == ::geteuid() && owner->gid == ::getegid()) {
    return Status::Ok();
  }
  if (::fchown(fd, owner->uid, owner->gid) == 0) return Status::Ok();
  // Only the group could not be changed: the owner still maps it.
  if (owner->uid == ::geteuid()) return Status::Ok();
  return Status::Error("cannot give shared memory segment '" + name +
                       "' to uid " + std::to_string(owner->uid) + " gid " +
                       std::to_string(owner->gid) + ": " +
                       std::strerror(errno) +
                       " (a daemon serving other users must run as root)");
}

// Populates the page tables of a mapping, so that the first write to each
// page does not fault. Where the kernel lacks MADV_POPULATE_WRITE (before
// Linux 5.14), one read per page maps the pages the creator allocated.
void Prefault(void* address, size_t bytes) {
  if (::madvise(address, bytes, MADV_POPULATE_WRITE) == 0) return;
  const long page = ::sysconf(_SC_PAGESIZE);
  const auto* p = static_cast<const volatile std::byte*>(address);
  for (size_t at = 0; at < bytes; at += static_cast<size_t>(page)) (void)p[at];
}

}  // namespace

Result<std::unique_ptr<Segment>> Segment::Create(
    const std::string& name, uint32_t ring_count, uint64_t ring_bytes,
    int32_t producer_pid, uint64_t producer_start_time,
    std::optional<SegmentOwner> owner) {
  const uint64_t bytes = SegmentBytes(ring_count, ring_bytes);
  try {
    bip::shared_memory_object::remove(name.c_str());
    auto m = std::make_unique<Mapping>();
    m->object =
        bip::shared_memory_object(bip::create_only, name.c_str(),
                                  bip::read_write, bip::permissions(0600));
    if (Status s = GiveTo(m->object.get_mapping_handle().handle, name, owner);
        !s.ok()) {
      bip::shared_memory_object::remove(name.c_str());
      return s;
    }
    m->object.truncate(static_cast<bip::offset_t>(bytes));
    // Allocate every page now: the rings are warm from the first record,
    // and a full /dev/shm fails here with a message instead of a SIGBUS in
    // the trainer later.
    if (int err = ::posix_fallocate(m->object.get_mapping_handle().handle, 0,
                                    static_cast<off_t>(bytes));
        err != 0) {
      bip::shared_memory_object::remove(name.c_str());
      return Status::Error("cannot allocate " + std::to_string(bytes) +
                           " bytes of shared memory for segment '" + name +
                           "': " + std::strerror(err));
    }
    m->region = bip::mapped_region(m->object, bip::read_write);
    auto guard = FaultGuard::Watch(m->region.get_address(), bytes);
    if (!guard.ok()) {
      bip::shared_memory_object::remove(name.c_str());
      return Status::Error("shared memory segment '" + name +
                           "': " + guard.status().message());
    }
    m->guard = std::move(guard).value();
    Prefault(m->region.get_address(), bytes);
    auto* h = static_cast<SegmentHeader*>(m->region.get_address());
    std::memset(static_cast<void*>(h), 0, sizeof *h);
    h->layout_version = kLayoutVersion;
    h->ring_count = ring_count;
    h->ring_bytes = ring_bytes;
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
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    return Status::Error("cannot create shared memory segment '" + name +
                         "' of " + std::to_string(bytes) +
                         " bytes: " + e.what());
  }
}

Result<std::unique_ptr<Segment>> Segment::Open(const std::string& name) {
  try {
    auto m = std::make_unique<Mapping>();
    m->object = bip::shared_memory_object(bip::open_only, name.c_str(),
                                          bip::read_write);
    m->region = bip::mapped_region(m->object, bip::read_write);
    const uint64_t mapped = m->region.get_size();
    if (mapped < sizeof(SegmentHeader)) {
      return Status::Error("shared memory segment '" + name +
                           "' is too small to hold a header");
    }
    // Check a private copy: the creator may still change the mapping.
    SegmentHeader header;
    std::memcpy(&header, m->region.get_address(), sizeof header);
    if (Status s = CheckHeader(header, mapped); !s.ok()) {
      return Status::Error("shared memory segment '" + name +
                           "': " + s.message());
    }
    Prefault(m->region.get_address(), mapped);
    std::unique_ptr<Segment> seg(new Segment(name, std::move(m)));
    if (seg->ring_count_ != header.ring_count ||
        seg->ring_bytes_ != header.ring_bytes) {
      return Status::Error("shared memory segment '" + name +
                           "' changed while it was opened");
    }
    return seg;
  } catch (const bip::interprocess_exception& e) {
    return Status::Error("cannot open shared memory segment '" + name +
                         "': " + e.what());
  }
}

void Segment::Remove(const std::string& name) {
  try {
    bip::shared_memory_object::remove(name.c_str());
  } catch (const bip::interprocess_exception&) {
    // Nothing to remove.
  }
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
  if (rb < 4096 || (rb & (rb - 1)) != 0 || header.ring_count == 0 ||
      header.ring_count > 256) {
    return Status::Error("implausible ring geometry (" +
                         std::to_string(header.ring_count) + " rings of " +
                         std::to_string(rb) + " bytes)");
  }
  if (SegmentBytes(header.ring_count, rb) > mapped_bytes) {
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
