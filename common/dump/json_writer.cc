#include "common/dump/json_writer.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace tprobe::dump {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void AppendU16Escape(std::string& out, uint32_t unit) {
  out += "\\u";
  out += kHexDigits[(unit >> 12) & 0xf];
  out += kHexDigits[(unit >> 8) & 0xf];
  out += kHexDigits[(unit >> 4) & 0xf];
  out += kHexDigits[unit & 0xf];
}

void AppendCodePointEscape(std::string& out, uint32_t cp) {
  if (cp < 0x10000) {
    AppendU16Escape(out, cp);
    return;
  }
  cp -= 0x10000;
  AppendU16Escape(out, 0xd800 + (cp >> 10));
  AppendU16Escape(out, 0xdc00 + (cp & 0x3ff));
}

// Decodes one UTF-8 sequence starting at s[i] (s[i] >= 0x80). Returns its
// length and stores the code point, or returns 0 if the bytes there are not
// a valid, shortest-form encoding of a Unicode scalar value.
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const auto lead = static_cast<uint8_t>(s[i]);
  size_t len;
  uint32_t value;
  uint32_t min_value;
  if ((lead & 0xe0) == 0xc0) {
    len = 2, value = lead & 0x1f, min_value = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    len = 3, value = lead & 0x0f, min_value = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    len = 4, value = lead & 0x07, min_value = 0x10000;
  } else {
    return 0;
  }
  if (s.size() - i < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    value = (value << 6) | (b & 0x3f);
  }
  if (value < min_value || value > 0x10ffff ||
      (value >= 0xd800 && value <= 0xdfff)) {
    return 0;
  }
  *cp = value;
  return len;
}

}  // namespace

// Python's json encoder with ensure_ascii=True (py_encode_basestring_ascii).
void AppendPythonString(std::string& out, std::string_view s) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    // The common case, a run of printable ASCII that needs no escape, is
    // copied in one append.
    size_t plain = i;
    while (plain < s.size()) {
      const auto c = static_cast<uint8_t>(s[plain]);
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') break;
      ++plain;
    }
    if (plain > i) {
      out.append(s, i, plain - i);
      i = plain;
      continue;
    }
    const auto c = static_cast<uint8_t>(s[i]);
    if (c >= 0x80) {
      uint32_t cp = 0;
      const size_t len = DecodeUtf8(s, i, &cp);
      AppendCodePointEscape(out, len == 0 ? 0xfffd : cp);
      i += len == 0 ? 1 : len;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          AppendU16Escape(out, c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

namespace {

template <typename Int>
void AppendInteger(std::string& out, Int v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, res.ptr);
}

void AppendNewlineIndent(std::string& out, int depth) {
  out += '\n';
  out.append(static_cast<size_t>(depth), ' ');
}

}  // namespace

void AppendPythonJson(std::string& out, const Json& v, int depth) {
  switch (v.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      out += "null";
      return;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer:
      AppendInteger(out, v.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      AppendInteger(out, v.get<uint64_t>());
      return;
    case Json::value_t::number_float:
      AppendPythonFloat(out, v.get<double>());
      return;
    case Json::value_t::string:
      AppendPythonString(out, v.get_ref<const std::string&>());
      return;
    case Json::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const Json& element : v) {
        if (!first) out += ',';
        first = false;
        AppendNewlineIndent(out, depth + 1);
        AppendPythonJson(out, element, depth + 1);
      }
      AppendNewlineIndent(out, depth);
      out += ']';
      return;
    }
    case Json::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        if (!first) out += ',';
        first = false;
        AppendNewlineIndent(out, depth + 1);
        AppendPythonString(out, key);
        out += ": ";
        AppendPythonJson(out, value, depth + 1);
      }
      AppendNewlineIndent(out, depth);
      out += '}';
      return;
    }
    case Json::value_t::binary:
      break;
  }
  assert(false && "PythonJsonDumps: binary values have no JSON form");
  out += "null";
}

std::string PythonJsonDumps(const Json& v) {
  std::string out;
  AppendPythonJson(out, v, 0);
  return out;
}

std::string PythonFloatRepr(double v) {
  std::string out;
  AppendPythonFloat(out, v);
  return out;
}

void AppendPythonFloat(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "Infinity" : "-Infinity";
    return;
  }

  // Shortest round-trip digits, as "d[.ddd]e<sign><exp>".
  char buf[64];
  const auto res =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  const bool negative = sci.front() == '-';
  const size_t e_pos = sci.find('e');
  // At most 17 significant digits: no allocation.
  char digit_buf[24];
  size_t digit_count = 0;
  for (char c : sci.substr(negative ? 1 : 0, e_pos - (negative ? 1 : 0))) {
    if (c != '.') digit_buf[digit_count++] = c;
  }
  const std::string_view digits(digit_buf, digit_count);
  std::string_view exp_text = sci.substr(e_pos + 1);
  if (exp_text.front() == '+') exp_text.remove_prefix(1);
  int exp = 0;
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);
  const auto ndigits = static_cast<int>(digits.size());

  if (negative) out += '-';
  if (exp < -4 || exp >= 16) {
    out += digits[0];
    if (ndigits > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += exp < 0 ? "e-" : "e+";
    const int abs_exp = exp < 0 ? -exp : exp;
    if (abs_exp < 10) out += '0';
    AppendInteger(out, abs_exp);
  } else if (exp < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exp - 1), '0');
    out += digits;
  } else if (ndigits > exp + 1) {
    out += digits.substr(0, static_cast<size_t>(exp + 1));
    out += '.';
    out += digits.substr(static_cast<size_t>(exp + 1));
  } else {
    out += digits;
    out.append(static_cast<size_t>(exp + 1 - ndigits), '0');
    out += ".0";
  }
}

}  // namespace tprobe::dump
