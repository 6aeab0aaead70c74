// The ring record reader (codec.h): Decode checks one record of each type
// in its own function, and BodyReader walks an entry body's value stream.

#include "common/record/codec.h"

#include <cstring>
#include <string>

namespace tprobe::record {
namespace {

template <typename T>
bool ReadFixed(std::span<const std::byte> payload, T* out) {
  if (payload.size() < sizeof(T)) return false;
  std::memcpy(out, payload.data(), sizeof(T));
  return true;
}

Status Malformed(const char* what, const std::string& why) {
  return Status::Error(std::string("malformed ") + what + " record: " + why);
}

// Reads a record that is exactly a T, or says why it is malformed.
template <typename T>
Status ReadExact(std::span<const std::byte> payload, const char* what, T* out) {
  if (payload.size() != sizeof(T)) {
    return Malformed(what, "size " + std::to_string(payload.size()) +
                               " is not " + std::to_string(sizeof(T)));
  }
  std::memcpy(out, payload.data(), sizeof(T));
  return Status::Ok();
}

Result<Decoded> DecodeIntern(std::span<const std::byte> payload) {
  InternRecord r;
  if (!ReadFixed(payload, &r)) return Malformed("intern", "too short");
  if (r.id == 0) return Malformed("intern", "id 0 is reserved");
  if (r.kind > static_cast<uint8_t>(InternKind::kStack)) {
    return Malformed("intern", "unknown kind " + std::to_string(r.kind));
  }
  auto text = payload.subspan(sizeof r);
  return Decoded(
      InternView{r.id, static_cast<InternKind>(r.kind),
                 std::string_view(reinterpret_cast<const char*>(text.data()),
                                  text.size())});
}

Result<Decoded> DecodeCall(std::span<const std::byte> payload, bool begin) {
  CallRecord r;
  if (!ReadFixed(payload, &r)) return Malformed("call", "too short");
  if (r.call_kind > static_cast<uint8_t>(CallKind::kGroup) || r.direction > 1) {
    return Malformed("call", "bad kind or direction");
  }
  return Decoded(CallView{r, begin});
}

// The element count `shape` spells, or an error for a negative dimension or
// a count past 64 bits.
Result<uint64_t> Numel(const std::vector<int64_t>& shape) {
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) return Malformed("tensor", "negative dimension");
    if (d != 0 && numel > UINT64_MAX / static_cast<uint64_t>(d)) {
      return Malformed("tensor", "shape overflows");
    }
    numel *= static_cast<uint64_t>(d);
  }
  return numel;
}

Result<Decoded> DecodeTensor(std::span<const std::byte> payload) {
  TensorRecord r;
  if (!ReadFixed(payload, &r)) return Malformed("tensor", "too short");
  if (!IsValidDType(r.dtype)) {
    return Malformed("tensor", "unknown dtype " + std::to_string(r.dtype));
  }
  if (r.ndim > kMaxDims ||
      payload.size() != sizeof r + r.ndim * sizeof(int64_t)) {
    return Malformed("tensor", "shape does not match ndim");
  }
  const uint8_t known = kTensorStatsByProducer | kTensorBytesByProducer;
  if ((r.flags & ~known) != 0 || r.flags == kTensorBytesByProducer ||
      r.requires_grad > 1) {
    return Malformed("tensor", "unknown flags " + std::to_string(r.flags) +
                                   " or requires_grad " +
                                   std::to_string(r.requires_grad));
  }
  TensorView v{r, static_cast<DType>(r.dtype), std::vector<int64_t>(r.ndim)};
  if (r.ndim > 0) {  // a 0-d tensor has no shape bytes (and no data())
    std::memcpy(v.shape.data(), payload.data() + sizeof r,
                r.ndim * sizeof(int64_t));
  }
  Result<uint64_t> numel = Numel(v.shape);
  if (!numel.ok()) return numel.status();
  if (*numel > UINT64_MAX / ElementSize(v.dtype) ||
      *numel * ElementSize(v.dtype) != r.nbytes) {
    return Malformed("tensor", "nbytes " + std::to_string(r.nbytes) +
                                   " does not match dtype and shape");
  }
  return Decoded(std::move(v));
}

Result<Decoded> DecodeChunk(std::span<const std::byte> payload) {
  ChunkRecord r;
  if (!ReadFixed(payload, &r)) return Malformed("chunk", "too short");
  return Decoded(ChunkView{r, payload.subspan(sizeof r)});
}

Result<Decoded> DecodeEntry(std::span<const std::byte> payload) {
  EntryRecord r;
  if (!ReadFixed(payload, &r)) return Malformed("entry", "too short");
  if (r.name_id == 0) return Malformed("entry", "no name");
  return Decoded(EntryView{r, payload.subspan(sizeof r)});
}

Result<Decoded> DecodeProducerStats(std::span<const std::byte> payload) {
  ProducerStatsRecord r;
  if (Status s = ReadExact(payload, "producer statistics", &r); !s.ok()) {
    return s;
  }
  for (int i = 0; i < 4; ++i) {
    const auto kind = static_cast<StatKind>(r.kinds[i]);
    if (r.kinds[i] > static_cast<uint8_t>(StatKind::kCrc)) {
      return Malformed("producer statistics",
                       "unknown kind " + std::to_string(r.kinds[i]));
    }
    if ((kind == StatKind::kNull && r.values[i] != 0) ||
        (kind == StatKind::kBool && r.values[i] > 1)) {
      return Malformed(
          "producer statistics",
          "a null or bool statistic with value " + std::to_string(r.values[i]));
    }
  }
  return Decoded(ProducerStatsView{r});
}

Result<Decoded> DecodeProducerBytes(std::span<const std::byte> payload) {
  ProducerBytesRecord r;
  if (Status s = ReadExact(payload, "producer bytes", &r); !s.ok()) {
    return s;
  }
  if (r.reserved != 0) return Malformed("producer bytes", "reserved set");
  return Decoded(ProducerBytesView{r});
}

Result<Decoded> DecodeBoundary(std::span<const std::byte> payload) {
  if (payload.empty() || payload.size() > kMaxBoundaryBytes) {
    return Malformed("boundary", "size " + std::to_string(payload.size()) +
                                     " is outside 1.." +
                                     std::to_string(kMaxBoundaryBytes));
  }
  return Decoded(BoundaryView{payload});
}

}  // namespace

Result<Decoded> Decode(uint16_t type, std::span<const std::byte> payload) {
  switch (static_cast<RecordType>(type)) {
    case RecordType::kIntern:
      return DecodeIntern(payload);
    case RecordType::kCallBegin:
      return DecodeCall(payload, /*begin=*/true);
    case RecordType::kCallEnd:
      return DecodeCall(payload, /*begin=*/false);
    case RecordType::kTensor:
      return DecodeTensor(payload);
    case RecordType::kChunk:
      return DecodeChunk(payload);
    case RecordType::kEntry:
      return DecodeEntry(payload);
    case RecordType::kProducerStats:
      return DecodeProducerStats(payload);
    case RecordType::kProducerBytes:
      return DecodeProducerBytes(payload);
    case RecordType::kBoundary:
      return DecodeBoundary(payload);
    case RecordType::kPadding:
      break;
  }
  return Status::Error("unknown record type " + std::to_string(type));
}

namespace {

enum class Frame : uint8_t { kBody, kList, kDict, kTyped };

class BodyReader {
 public:
  BodyReader(std::span<const std::byte> body, ValueVisitor& visitor)
      : data_(body), visitor_(visitor) {}

  Status Run() {
    stack_[0] = Frame::kBody;
    while (true) {
      const Frame top = stack_[depth_];
      at_ = pos_;
      if (pos_ == data_.size()) {
        if (depth_ == 0 && !need_value_) return Status::Ok();
        return Bad("it ends inside a value");
      }
      const auto tag = static_cast<ValueTag>(data_[pos_++]);
      if (!need_value_ && (top == Frame::kBody || top == Frame::kDict)) {
        if (tag == ValueTag::kEnd && top == Frame::kDict) {
          Close();
          continue;
        }
        if (tag != ValueTag::kKey) return Bad("an item has no key");
        std::string_view key;
        if (!ReadText(&key)) return Bad("a key runs past the end");
        visitor_.Key(key);
        need_value_ = true;
        continue;
      }
      if (tag == ValueTag::kEnd) {
        if (top != Frame::kList || need_value_) {
          return Bad("an end where a value belongs");
        }
        Close();
        continue;
      }
      need_value_ = false;
      if (Status s = Value(tag); !s.ok()) return s;
    }
  }

 private:
  Status Value(ValueTag tag) {
    switch (tag) {
      case ValueTag::kNull:
        visitor_.Null();
        break;
      case ValueTag::kFalse:
      case ValueTag::kTrue:
        visitor_.Bool(tag == ValueTag::kTrue);
        break;
      case ValueTag::kInt: {
        int64_t v;
        if (!ReadFixed(&v)) return Bad("an int runs past the end");
        visitor_.Int(v);
        break;
      }
      case ValueTag::kFloat: {
        double v;
        if (!ReadFixed(&v)) return Bad("a float runs past the end");
        visitor_.Float(v);
        break;
      }
      case ValueTag::kStr: {
        std::string_view s;
        if (!ReadText(&s)) return Bad("a string runs past the end");
        visitor_.Str(s);
        break;
      }
      case ValueTag::kTensorRef: {
        uint32_t ref;
        if (!ReadFixed(&ref)) return Bad("a tensor ref runs past the end");
        visitor_.TensorRef(ref);
        break;
      }
      case ValueTag::kList:
      case ValueTag::kDict:
      case ValueTag::kTyped: {
        if (depth_ == kMaxValueDepth) {
          return Bad("values nest deeper than " +
                     std::to_string(kMaxValueDepth));
        }
        if (tag == ValueTag::kTyped) {
          std::string_view type;
          if (!ReadText(&type)) return Bad("a type runs past the end");
          stack_[++depth_] = Frame::kTyped;
          visitor_.BeginTyped(type);
          need_value_ = true;
        } else if (tag == ValueTag::kList) {
          stack_[++depth_] = Frame::kList;
          visitor_.BeginList();
        } else {
          stack_[++depth_] = Frame::kDict;
          visitor_.BeginDict();
        }
        return Status::Ok();
      }
      case ValueTag::kKey:
        return Bad("a key outside a dict");
      case ValueTag::kEnd:  // handled by Run
        break;
      default:
        return Bad("unknown value tag " +
                   std::to_string(static_cast<unsigned>(tag)));
    }
    Closed();
    return Status::Ok();
  }

  // Closes the innermost list or dict.
  void Close() {
    --depth_;
    visitor_.End();
    Closed();
  }

  // A value is complete: the typed values it completes close too.
  void Closed() {
    while (stack_[depth_] == Frame::kTyped) {
      --depth_;
      visitor_.End();
    }
  }

  template <typename T>
  bool ReadFixed(T* out) {
    if (data_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(out, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }

  bool ReadText(std::string_view* out) {
    uint32_t size;
    if (!ReadFixed(&size) || data_.size() - pos_ < size) return false;
    *out = std::string_view(reinterpret_cast<const char*>(data_.data() + pos_),
                            size);
    pos_ += size;
    return true;
  }

  Status Bad(const std::string& why) const {
    return Status::Error("malformed entry body at byte " + std::to_string(at_) +
                         ": " + why);
  }

  std::span<const std::byte> data_;
  ValueVisitor& visitor_;
  size_t pos_ = 0;
  size_t at_ = 0;  // where the value or key being read starts
  int depth_ = 0;
  bool need_value_ = false;  // a key or a typed waits for its value
  Frame stack_[kMaxValueDepth + 1];
};

}  // namespace

Status ReadEntryBody(std::span<const std::byte> body, ValueVisitor& visitor) {
  return BodyReader(body, visitor).Run();
}

}  // namespace tprobe::record
