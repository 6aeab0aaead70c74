#include "common/dump/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>

#include "common/fs/atomic_file.h"
#include "common/stats/half.h"

namespace tprobe::dump {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;
// numpy leaves room for the first dimension to grow to this many digits.
constexpr size_t kGrowthAxisMaxDigits = 21;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::string_view Descr(DType dtype) {
  const DTypeInfo* info = InfoOf(dtype);
  return info ? info->npy_descr : "";
}

// The type a .npy file of `descr` holds ("<f4" is float32: tprobe writes
// bfloat16 so too, and reads it back as float32).
std::optional<DType> DTypeFromDescr(std::string_view descr) {
  // One-byte types have no byte order; accept '<' for them as well.
  if (descr.size() == 3 && descr[2] == '1' && descr[0] == '<') {
    std::string copy(descr);
    copy[0] = '|';
    return DTypeFromDescr(copy);
  }
  return DTypeWhere(&DTypeInfo::npy_descr, descr);
}

// Python's repr of a tuple of ints: "()", "(3,)", "(2, 3)".
std::string ShapeRepr(std::span<const int64_t> shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ',';
  out += ')';
  return out;
}

// The complete version 1.0 preamble (magic, version, length, header), laid
// out byte for byte as numpy.save does it. Returns nullopt if the header is
// longer than a uint16 can describe.
std::optional<std::string> Preamble(DType dtype,
                                    std::span<const int64_t> shape) {
  std::string header = "{'descr': '";
  header += Descr(dtype);
  header += "', 'fortran_order': False, 'shape': ";
  header += ShapeRepr(shape);
  header += ", }";
  if (!shape.empty()) {
    header.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  }
  const size_t unpadded = kMagicLen + 2 + 2 + header.size() + 1;
  const size_t pad = kAlign - unpadded % kAlign;  // 1..64, as numpy does.
  header.append(pad, ' ');
  header += '\n';
  if (header.size() > 0xffff) return std::nullopt;
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  return out;
}

// strerror's text for `err`, obtained thread-safely.
std::string SystemError(int err) {
  return std::generic_category().message(err);
}

Status WriteAll(std::FILE* f, const void* p, size_t n, const std::string& tmp) {
  if (n > 0 && std::fwrite(p, 1, n, f) != n) {
    return Status::Error("cannot write " + tmp + ": " + SystemError(errno));
  }
  return Status::Ok();
}

Status WriteBody(std::FILE* f, const std::string& preamble, DType dtype,
                 std::span<const std::byte> data, const std::string& tmp) {
  if (Status s = WriteAll(f, preamble.data(), preamble.size(), tmp); !s.ok()) {
    return s;
  }
  if (dtype != DType::kBFloat16) {
    return WriteAll(f, data.data(), data.size(), tmp);
  }
  // bfloat16 -> float32 is exact: the bf16 bits are the float's top half.
  constexpr size_t kChunk = 4096;
  float buf[kChunk];
  const size_t n = data.size() / 2;
  for (size_t base = 0; base < n; base += kChunk) {
    const size_t m = n - base < kChunk ? n - base : kChunk;
    for (size_t k = 0; k < m; ++k) {
      uint16_t bits;
      std::memcpy(&bits, data.data() + (base + k) * 2, 2);
      buf[k] = stats::BFloat16ToFloat(bits);
    }
    if (Status s = WriteAll(f, buf, m * sizeof(float), tmp); !s.ok()) return s;
  }
  return Status::Ok();
}

// A cursor over the header's Python dict literal.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  // Consumes `c` (after spaces) if it is next.
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool EatWord(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  // A quoted string without escapes, as numpy writes them.
  std::optional<std::string_view> String() {
    SkipSpace();
    if (pos_ >= text_.size()) return std::nullopt;
    const char quote = text_[pos_];
    if (quote != '\'' && quote != '"') return std::nullopt;
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view s = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return s;
  }
  std::optional<int64_t> Integer() {
    SkipSpace();
    int64_t v = 0;
    const char* begin = text_.data() + pos_;
    const auto [ptr, ec] =
        std::from_chars(begin, text_.data() + text_.size(), v);
    if (ec != std::errc() || ptr == begin) return std::nullopt;
    pos_ += static_cast<size_t>(ptr - begin);
    return v;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Parses "{'descr': ..., 'fortran_order': ..., 'shape': (...), }". Returns
// an error message, or nullopt on success.
std::optional<std::string> ParseHeader(std::string_view text, Header* out) {
  HeaderParser p(text);
  bool seen_descr = false, seen_order = false, seen_shape = false;
  if (!p.Eat('{')) return "malformed header: not a Python dict literal";
  while (!p.Eat('}')) {
    const auto key = p.String();
    if (!key || !p.Eat(':')) return "malformed header dict";
    if (*key == "descr") {
      const auto descr = p.String();
      if (!descr) {
        return "unsupported dtype (descr is not a simple type string)";
      }
      out->descr = std::string(*descr);
      seen_descr = true;
    } else if (*key == "fortran_order") {
      if (p.EatWord("True")) {
        out->fortran_order = true;
      } else if (p.EatWord("False")) {
        out->fortran_order = false;
      } else {
        return "malformed header: fortran_order is not True or False";
      }
      seen_order = true;
    } else if (*key == "shape") {
      if (!p.Eat('(')) return "malformed header: shape is not a tuple";
      while (!p.Eat(')')) {
        const auto dim = p.Integer();
        if (!dim || *dim < 0) {
          return "malformed header: shape holds a non-integer or negative "
                 "dimension";
        }
        out->shape.push_back(*dim);
        if (!p.Eat(',')) {
          if (!p.Eat(')')) return "malformed header: shape tuple";
          break;
        }
      }
      seen_shape = true;
    } else {
      return "malformed header: unexpected key '" + std::string(*key) + "'";
    }
    if (!p.Eat(',')) {
      if (!p.Eat('}')) return "malformed header dict";
      break;
    }
  }
  if (!p.AtEnd()) return "malformed header: text after the dict";
  if (!seen_descr || !seen_order || !seen_shape) {
    return "malformed header: needs the keys descr, fortran_order and shape";
  }
  return std::nullopt;
}

}  // namespace

Status WriteNpy(const std::string& path, DType dtype,
                std::span<const int64_t> shape,
                std::span<const std::byte> data) {
  assert(data.size() == ElementCount(shape) * ElementSize(dtype) &&
         "WriteNpy: data size does not match shape and dtype");

  const std::optional<std::string> preamble = Preamble(dtype, shape);
  if (!preamble) {
    return Status::Error(path + ": .npy header too long for " +
                         std::to_string(shape.size()) + " dimensions");
  }
  Status s = fs::ReplaceFile(
      path, fs::TempPath(path), [&](const std::string& tmp) -> Status {
        auto fd = fs::CreateFile(tmp);
        if (!fd.ok()) return fd.status();
        File f(::fdopen(*fd, "wb"));
        if (!f) {
          ::close(*fd);
          return Status::Error("cannot write " + tmp + ": " +
                               SystemError(errno));
        }
        Status written = WriteBody(f.get(), *preamble, dtype, data, tmp);
        if (std::fclose(f.release()) != 0 && written.ok()) {
          written =
              Status::Error("cannot write " + tmp + ": " + SystemError(errno));
        }
        return written;
      });
  if (!s.ok()) return Status::Error(path + ": " + s.message());
  return Status::Ok();
}

Result<NpyLayout> ParseNpyLayout(std::string_view path,
                                 std::span<const std::byte> file) {
  auto error = [&path](const std::string& what) {
    return Status::Error(std::string(path) + ": " + what);
  };
  const size_t file_size = file.size();
  const auto* bytes = reinterpret_cast<const unsigned char*>(file.data());
  const size_t got = file_size < 8 ? file_size : 8;
  const size_t magic_got = got < kMagicLen ? got : kMagicLen;
  // An empty file has no data pointer to compare (memcmp needs one even
  // for 0 bytes).
  if (magic_got != 0 && std::memcmp(bytes, kMagic, magic_got) != 0) {
    return error("not a .npy file (bad magic)");
  }
  if (got < kMagicLen) {
    return error("truncated .npy file (" + std::to_string(file_size) +
                 " bytes, shorter than the magic)");
  }
  if (got < 8) return error("truncated .npy file (no format version)");
  const int major = bytes[6];
  const int minor = bytes[7];
  if ((major != 1 && major != 2) || minor != 0) {
    return error("unsupported .npy format version " + std::to_string(major) +
                 "." + std::to_string(minor) + " (1.0 and 2.0 are supported)");
  }
  const size_t len_size = major == 1 ? 2 : 4;
  if (file_size < 8 + len_size) {
    return error("truncated .npy file (no header length)");
  }
  size_t header_len = 0;
  for (size_t i = 0; i < len_size; ++i) {
    header_len |= static_cast<size_t>(bytes[8 + i]) << (8 * i);
  }
  const size_t data_offset = 8 + len_size + header_len;
  if (data_offset > file_size) {
    return error("truncated .npy file (header of " +
                 std::to_string(header_len) + " bytes, file has " +
                 std::to_string(file_size) + " bytes)");
  }
  const std::string_view header_text(
      reinterpret_cast<const char*>(bytes) + 8 + len_size, header_len);

  Header header;
  if (auto msg = ParseHeader(header_text, &header)) return error(*msg);
  const std::optional<DType> dtype = DTypeFromDescr(header.descr);
  if (!dtype) {
    return error("unsupported dtype '" + header.descr +
                 "' (little-endian bool, int8-64, uint8, float16/32/64 and "
                 "complex64/128 are supported)");
  }
  if (header.fortran_order) {
    return error("Fortran-order arrays are not supported (save with C order)");
  }

  // Element count, refusing shapes whose byte size overflows.
  size_t expected = ElementSize(*dtype);
  bool overflow = false;
  for (int64_t d : header.shape) {
    if (d != 0 && expected > SIZE_MAX / static_cast<size_t>(d)) overflow = true;
    expected *= static_cast<size_t>(d);
  }
  const std::string what =
      "shape " + ShapeRepr(header.shape) + " of '" + header.descr + "'";
  const size_t available = file_size - data_offset;
  if (overflow) return error(what + " is too large");
  if (available < expected) {
    return error("truncated .npy file: " + what + " needs " +
                 std::to_string(expected) + " bytes of data, found " +
                 std::to_string(available));
  }
  if (available > expected) {
    return error("data size " + std::to_string(available) +
                 " bytes does not match " + what + " (" +
                 std::to_string(expected) + " bytes)");
  }
  return NpyLayout{*dtype, std::move(header.shape), data_offset, expected};
}

Result<NpyArray> ReadNpy(const std::string& path) {
  auto error = [&path](const std::string& what) {
    return Status::Error(path + ": " + what);
  };
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return error("cannot open: " + SystemError(errno));
  if (std::fseek(f.get(), 0, SEEK_END) != 0) {
    return error("cannot seek: " + SystemError(errno));
  }
  const long end = std::ftell(f.get());
  if (end < 0 || std::fseek(f.get(), 0, SEEK_SET) != 0) {
    return error("cannot seek: " + SystemError(errno));
  }
  // The whole file in one buffer; the preamble is cut off after parsing.
  std::vector<std::byte> bytes(static_cast<size_t>(end));
  if (!bytes.empty() &&
      std::fread(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) {
    return error("read failed: " + SystemError(errno));
  }
  Result<NpyLayout> layout = ParseNpyLayout(path, bytes);
  if (!layout.ok()) return layout.status();
  bytes.erase(bytes.begin(),
              bytes.begin() + static_cast<std::ptrdiff_t>(layout->data_offset));
  return NpyArray{layout->dtype, std::move(layout->shape), std::move(bytes)};
}

}  // namespace tprobe::dump
