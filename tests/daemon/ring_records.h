#ifndef TPROBE_TESTS_DAEMON_RING_RECORDS_H_
#define TPROBE_TESTS_DAEMON_RING_RECORDS_H_

// Test helpers that play the producer: they write records into a ring
// exactly as common/record/record.h lays them out, and build value trees.

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/dtype.h"
#include "common/record/record.h"
#include "common/shm/ring.h"
#include "tprobe/v1/value.pb.h"

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
    writer_.Commit();
    return true;
  }

  bool Intern(uint32_t id, record::InternKind kind, std::string_view text) {
    record::InternRecord r{};
    r.id = id;
    r.kind = static_cast<uint8_t>(kind);
    return Raw(record::RecordType::kIntern, Cat(r, text.data(), text.size()));
  }

  bool Call(bool begin, uint64_t seq, uint32_t step, uint32_t name_id,
            record::CallKind kind,
            record::Direction direction = record::Direction::kForward) {
    record::CallRecord r{};
    r.seq = seq;
    r.step = step;
    r.name_id = name_id;
    r.call_kind = static_cast<uint8_t>(kind);
    r.direction = static_cast<uint8_t>(direction);
    return Raw(
        begin ? record::RecordType::kCallBegin : record::RecordType::kCallEnd,
        Cat(r, nullptr, 0));
  }

  // The Tensor record only; its bytes follow with Chunk().
  bool Tensor(uint32_t ref, DType dtype, const std::vector<int64_t>& shape,
              bool requires_grad, uint64_t nbytes) {
    record::TensorRecord r{};
    r.nbytes = nbytes;
    r.ref = ref;
    r.dtype = static_cast<uint8_t>(dtype);
    r.ndim = static_cast<uint8_t>(shape.size());
    r.requires_grad = requires_grad ? 1 : 0;
    return Raw(record::RecordType::kTensor,
               Cat(r, shape.data(), shape.size() * sizeof(int64_t)));
  }

  bool Chunk(uint32_t ref, uint64_t offset, const void* bytes, size_t size) {
    record::ChunkRecord r{};
    r.offset = offset;
    r.ref = ref;
    return Raw(record::RecordType::kChunk, Cat(r, bytes, size));
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
             const v1::Entry& entry) {
    record::EntryRecord r{};
    r.seq = seq;
    r.step = step;
    r.name_id = name_id;
    r.stack_id = stack_id;
    const std::string body = entry.SerializeAsString();
    return Raw(record::RecordType::kEntry, Cat(r, body.data(), body.size()));
  }

 private:
  template <typename Fixed>
  static std::vector<std::byte> Cat(const Fixed& fixed, const void* tail,
                                    size_t tail_size) {
    std::vector<std::byte> out(sizeof fixed + tail_size);
    std::memcpy(out.data(), &fixed, sizeof fixed);
    if (tail_size != 0) std::memcpy(out.data() + sizeof fixed, tail, tail_size);
    return out;
  }

  shm::RingWriter writer_;
};

// Value tree builders.
inline v1::Value Null() {
  v1::Value v;
  v.set_null(true);
  return v;
}
inline v1::Value Bool(bool b) {
  v1::Value v;
  v.set_bool_value(b);
  return v;
}
inline v1::Value Int(int64_t i) {
  v1::Value v;
  v.set_int_value(i);
  return v;
}
inline v1::Value Float(double d) {
  v1::Value v;
  v.set_float_value(d);
  return v;
}
inline v1::Value Str(std::string s) {
  v1::Value v;
  v.set_str_value(std::move(s));
  return v;
}
inline v1::Value Ref(uint32_t ref) {
  v1::Value v;
  v.set_tensor_ref(ref);
  return v;
}
inline v1::Value List(std::initializer_list<v1::Value> items) {
  v1::Value v;
  for (const auto& item : items) *v.mutable_list()->add_items() = item;
  v.mutable_list();  // an empty list is still a list
  return v;
}
inline v1::Value Dict(
    std::initializer_list<std::pair<std::string, v1::Value>> items) {
  v1::Value v;
  v.mutable_dict();  // an empty dict is still a dict
  for (const auto& [key, value] : items) {
    v1::DictItem* item = v.mutable_dict()->add_items();
    item->set_key(key);
    *item->mutable_value() = value;
  }
  return v;
}
inline v1::Value Typed(std::string type, v1::Value value) {
  v1::Value v;
  v.mutable_typed()->set_type(std::move(type));
  *v.mutable_typed()->mutable_value() = std::move(value);
  return v;
}
inline v1::Entry MakeEntry(
    std::initializer_list<std::pair<std::string, v1::Value>> items) {
  v1::Entry e;
  e.mutable_body();
  for (const auto& [key, value] : items) {
    v1::DictItem* item = e.mutable_body()->add_items();
    item->set_key(key);
    *item->mutable_value() = value;
  }
  return e;
}

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_DAEMON_RING_RECORDS_H_
