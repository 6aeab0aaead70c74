#ifndef TPROBE_TESTS_DAEMON_RING_RECORDS_H_
#define TPROBE_TESTS_DAEMON_RING_RECORDS_H_

// Test helpers that play the producer: they write records into a ring
// with the one record writer (common/record/writer.h), and build entry
// bodies.

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/control/socket_path.h"
#include "common/dtype.h"
#include "common/record/record.h"
#include "common/record/writer.h"
#include "common/shm/ring.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::testing {

class RecordWriter {
 public:
  RecordWriter(shm::RingHeader* header, std::span<std::byte> data)
      : writer_(header, data) {}

  // Writes one record; false when the ring is full.
  bool Raw(record::RecordType type, std::span<const std::byte> payload) {
    std::byte* p = writer_.Reserve(static_cast<uint16_t>(type),
                                   static_cast<uint32_t>(payload.size()));
    if (p == nullptr) return false;
    if (!payload.empty()) std::memcpy(p, payload.data(), payload.size());
    return Commit();
  }

  // A rank's Start, Step or Goodbye as a Boundary record, the one road a
  // rank's boundaries take (common/shm/README.md). Into the segment's last
  // ring, where the client writes them; with one ring (MakeRegister's
  // default) it follows the records written there.
  bool Boundary(v1::Request request) {
    request.set_version(control::kProtocolVersion);
    const std::string bytes = request.SerializeAsString();
    return Raw(record::RecordType::kBoundary, std::as_bytes(std::span(bytes)));
  }

  bool Intern(uint32_t id, record::InternKind kind, std::string_view text) {
    std::byte* p =
        Reserve(record::RecordType::kIntern, record::InternSize(text));
    if (p == nullptr) return false;
    record::PutIntern(p, id, kind, text);
    return Commit();
  }

  bool Call(bool begin, uint64_t seq, uint32_t step, uint32_t name_id,
            record::CallKind kind,
            record::Direction direction = record::Direction::kForward) {
    std::byte* p = Reserve(
        begin ? record::RecordType::kCallBegin : record::RecordType::kCallEnd,
        record::kCallSize);
    if (p == nullptr) return false;
    record::PutCall(p, seq, step, name_id, kind, direction);
    return Commit();
  }

  // The Tensor record only; its bytes follow with Chunk().
  bool Tensor(uint32_t ref, DType dtype, const std::vector<int64_t>& shape,
              bool requires_grad, uint64_t nbytes) {
    std::byte* p =
        Reserve(record::RecordType::kTensor, record::TensorSize(shape.size()));
    if (p == nullptr) return false;
    record::PutTensor(p, ref, dtype, shape, requires_grad, nbytes);
    return Commit();
  }

  bool Chunk(uint32_t ref, uint64_t offset, const void* bytes, size_t size) {
    std::byte* p = Reserve(record::RecordType::kChunk, record::ChunkSize(size));
    if (p == nullptr) return false;
    record::PutChunkHeader(p, ref, offset);
    if (size != 0) std::memcpy(p + sizeof(record::ChunkRecord), bytes, size);
    return Commit();
  }

  // A float32 tensor sent as Tensor + Chunks of at most `chunk` floats.
  bool Float32Tensor(uint32_t ref, const std::vector<int64_t>& shape,
                     const std::vector<float>& values, size_t chunk = 1024,
                     bool requires_grad = false) {
    const uint64_t nbytes = values.size() * sizeof(float);
    if (!Tensor(ref, DType::kFloat32, shape, requires_grad, nbytes)) {
      return false;
    }
    for (size_t i = 0; i < values.size(); i += chunk) {
      const size_t n = std::min(chunk, values.size() - i);
      if (!Chunk(ref, i * sizeof(float), values.data() + i,
                 n * sizeof(float))) {
        return false;
      }
    }
    return true;
  }

  bool Entry(uint64_t seq, uint32_t step, uint32_t name_id, uint32_t stack_id,
             const std::string& body) {
    std::byte* p =
        Reserve(record::RecordType::kEntry, record::EntrySize(body.size()));
    if (p == nullptr) return false;
    record::PutEntryHeader(p, seq, step, name_id, stack_id);
    if (!body.empty()) {
      std::memcpy(p + sizeof(record::EntryRecord), body.data(), body.size());
    }
    return Commit();
  }

 private:
  std::byte* Reserve(record::RecordType type, uint32_t size) {
    return writer_.Reserve(static_cast<uint16_t>(type), size);
  }
  bool Commit() {
    writer_.Commit();
    writer_.Publish();  // each record visible at once, as the tests expect
    return true;
  }

  shm::RingWriter writer_;
};

// Value builders: each returns the value's encoding (record::ValueWriter),
// which composes by concatenation.
struct Value {
  std::string bytes;
};
using Entry = std::string;  // an entry body

namespace detail {
template <typename F>
Value Encode(F&& write) {
  Value v;
  record::ValueWriter w(&v.bytes);
  write(w);
  return v;
}
}  // namespace detail

inline Value Null() {
  return detail::Encode([](record::ValueWriter& w) { w.Null(); });
}
inline Value Bool(bool b) {
  return detail::Encode([b](record::ValueWriter& w) { w.Bool(b); });
}
inline Value Int(int64_t i) {
  return detail::Encode([i](record::ValueWriter& w) { w.Int(i); });
}
inline Value Float(double d) {
  return detail::Encode([d](record::ValueWriter& w) { w.Float(d); });
}
inline Value Str(std::string_view s) {
  return detail::Encode([s](record::ValueWriter& w) { w.Str(s); });
}
inline Value Ref(uint32_t ref) {
  return detail::Encode([ref](record::ValueWriter& w) { w.TensorRef(ref); });
}
inline Value ListOf(const std::vector<Value>& items) {
  return detail::Encode([&items](record::ValueWriter& w) {
    w.BeginList();
    for (const Value& item : items) w.Raw(item.bytes);
    w.End();
  });
}
inline Value List(std::initializer_list<Value> items) {
  return ListOf(std::vector<Value>(items));
}
inline Value Dict(std::initializer_list<std::pair<std::string, Value>> items) {
  return detail::Encode([&items](record::ValueWriter& w) {
    w.BeginDict();
    for (const auto& [key, value] : items) {
      w.Key(key);
      w.Raw(value.bytes);
    }
    w.End();
  });
}
inline Value Typed(std::string_view type, const Value& value) {
  return detail::Encode([&](record::ValueWriter& w) {
    w.Typed(type);
    w.Raw(value.bytes);
  });
}
inline Entry MakeEntry(
    std::initializer_list<std::pair<std::string, Value>> items) {
  Entry body;
  record::ValueWriter w(&body);
  for (const auto& [key, value] : items) {
    w.Key(key);
    w.Raw(value.bytes);
  }
  return body;
}

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_DAEMON_RING_RECORDS_H_
