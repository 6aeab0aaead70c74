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

}  // namespace

Result<Decoded> Decode(uint16_t type, std::span<const std::byte> payload) {
  switch (static_cast<RecordType>(type)) {
    case RecordType::kIntern: {
      InternRecord r;
      if (!ReadFixed(payload, &r)) return Malformed("intern", "too short");
      if (r.id == 0) return Malformed("intern", "id 0 is reserved");
      if (r.kind > static_cast<uint8_t>(InternKind::kStack)) {
        return Malformed("intern", "unknown kind " + std::to_string(r.kind));
      }
      auto text = payload.subspan(sizeof r);
      return Decoded(InternView{
          r.id, static_cast<InternKind>(r.kind),
          std::string_view(reinterpret_cast<const char*>(text.data()),
                           text.size())});
    }
    case RecordType::kCallBegin:
    case RecordType::kCallEnd: {
      CallRecord r;
      if (!ReadFixed(payload, &r)) return Malformed("call", "too short");
      if (r.call_kind > static_cast<uint8_t>(CallKind::kGroup) ||
          r.direction > 1) {
        return Malformed("call", "bad kind or direction");
      }
      return Decoded(
          CallView{r, static_cast<RecordType>(type) == RecordType::kCallBegin});
    }
    case RecordType::kTensor: {
      TensorRecord r;
      if (!ReadFixed(payload, &r)) return Malformed("tensor", "too short");
      if (!IsValidDType(r.dtype)) {
        return Malformed("tensor", "unknown dtype " + std::to_string(r.dtype));
      }
      if (r.ndim > kMaxDims ||
          payload.size() != sizeof r + r.ndim * sizeof(int64_t)) {
        return Malformed("tensor", "shape does not match ndim");
      }
      TensorView v{r, static_cast<DType>(r.dtype),
                   std::vector<int64_t>(r.ndim)};
      if (r.ndim > 0) {  // a 0-d tensor has no shape bytes (and no data())
        std::memcpy(v.shape.data(), payload.data() + sizeof r,
                    r.ndim * sizeof(int64_t));
      }
      uint64_t numel = 1;
      for (int64_t d : v.shape) {
        if (d < 0) return Malformed("tensor", "negative dimension");
        if (d != 0 && numel > UINT64_MAX / static_cast<uint64_t>(d)) {
          return Malformed("tensor", "shape overflows");
        }
        numel *= static_cast<uint64_t>(d);
      }
      if (numel > UINT64_MAX / ElementSize(v.dtype) ||
          numel * ElementSize(v.dtype) != r.nbytes) {
        return Malformed("tensor", "nbytes " + std::to_string(r.nbytes) +
                                       " does not match dtype and shape");
      }
      return Decoded(std::move(v));
    }
    case RecordType::kChunk: {
      ChunkRecord r;
      if (!ReadFixed(payload, &r)) return Malformed("chunk", "too short");
      return Decoded(ChunkView{r, payload.subspan(sizeof r)});
    }
    case RecordType::kEntry: {
      EntryRecord r;
      if (!ReadFixed(payload, &r)) return Malformed("entry", "too short");
      if (r.name_id == 0) return Malformed("entry", "no name");
      return Decoded(EntryView{r, payload.subspan(sizeof r)});
    }
    case RecordType::kPadding:
      break;
  }
  return Status::Error("unknown record type " + std::to_string(type));
}

}  // namespace tprobe::record
