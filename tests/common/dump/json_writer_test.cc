#include "common/dump/json_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/python_script.h"

namespace tprobe::dump {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Runs the Python program `script` with `input` on stdin; returns what it
// printed.
std::string RunPython(const std::string& script, const std::string& input) {
  return testing::RunPythonScript(TPROBE_PYTHON, script, {}, input);
}

struct FloatCase {
  double value;
  const char* expected;
};

TEST(PythonFloatReprTest, MatchesPythonReprForKnownValues) {
  const FloatCase cases[] = {
      {1.0, "1.0"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {-2.5, "-2.5"},
      {0.1, "0.1"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1e-05, "1e-05"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1e16, "1e+16"},
      {1e22, "1e+22"},
      {1.5e300, "1.5e+300"},
      {5e-324, "5e-324"},
      {2.2250738585072014e-308, "2.2250738585072014e-308"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {123456789012345.0, "123456789012345.0"},
      {1e15, "1000000000000000.0"},
      {9999999999999998.0, "9999999999999998.0"},
      {1.2345678901234567e16, "1.2345678901234568e+16"},
      {1267.74462890625, "1267.74462890625"},
      {0.4993983507156372, "0.4993983507156372"},
      {65504.0, "65504.0"},
      {kNaN, "NaN"},
      {kInf, "Infinity"},
      {-kInf, "-Infinity"},
  };
  for (const FloatCase& c : cases) {
    EXPECT_EQ(PythonFloatRepr(c.value), c.expected) << "value " << c.value;
  }
}

TEST(PythonFloatReprTest, RandomDoublesMatchPythonRepr) {
  std::mt19937_64 rng(20240501);
  std::vector<double> values;
  for (int i = 0; i < 20000; ++i) {
    const double v = std::bit_cast<double>(rng());  // Any exponent.
    if (std::isfinite(v)) values.push_back(v);
  }
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int i = 0; i < 5000; ++i) {
    // Around the fixed/exponent switch points and float32 values.
    values.push_back(unit(rng) * std::pow(10.0, (i % 24) - 7));
    values.push_back(static_cast<float>(unit(rng) * 1000.0));
    values.push_back(std::round(unit(rng) * 1e17));
  }
  std::string input;
  for (double v : values) {
    input += std::to_string(std::bit_cast<uint64_t>(v)) + "\n";
  }
  const std::string out = RunPython(
      "import struct, sys\n"
      "for line in sys.stdin:\n"
      "    bits = int(line)\n"
      "    print(repr(struct.unpack('<d', bits.to_bytes(8, 'little'))[0]))\n",
      input);
  std::istringstream lines(out);
  std::string expected;
  size_t mismatches = 0;
  for (double v : values) {
    ASSERT_TRUE(std::getline(lines, expected)) << "python printed too little";
    if (PythonFloatRepr(v) != expected && ++mismatches <= 10) {
      ADD_FAILURE() << "repr mismatch: python " << expected << ", ours "
                    << PythonFloatRepr(v);
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

struct DumpCase {
  Json value;
  std::string expected;
};

TEST(PythonJsonDumpsTest, ScalarsMatchPython) {
  const DumpCase cases[] = {
      {nullptr, "null"},
      {true, "true"},
      {false, "false"},
      {0, "0"},
      {-17, "-17"},
      {std::numeric_limits<int64_t>::max(), "9223372036854775807"},
      {std::numeric_limits<int64_t>::min(), "-9223372036854775808"},
      {std::numeric_limits<uint64_t>::max(), "18446744073709551615"},
      {1.0, "1.0"},
      {-0.0, "-0.0"},
      {kNaN, "NaN"},
      {kInf, "Infinity"},
      {-kInf, "-Infinity"},
      {1e-05, "1e-05"},
  };
  for (const DumpCase& c : cases) {
    EXPECT_EQ(PythonJsonDumps(c.value), c.expected) << c.value.dump();
  }
}

TEST(PythonJsonDumpsTest, StringsAreEscapedLikeEnsureAscii) {
  const DumpCase cases[] = {
      {"", R"("")"},
      {"plain text / slash", R"("plain text / slash")"},
      {"q\"b\\s", R"("q\"b\\s")"},
      {"\n\r\t\b\f", R"("\n\r\t\b\f")"},
      {std::string("\x00\x01\x1f\x7f", 4), R"("\u0000\u0001\u001f\u007f")"},
      {"\u00e9", R"("\u00e9")"},              // é, 2 bytes of UTF-8.
      {"\u4e2d\u6587", R"("\u4e2d\u6587")"},  // 中文, 3 bytes each.
      {"\U0001F600", R"("\ud83d\ude00")"},    // 😀 becomes a surrogate pair.
      {"\U0010FFFF", R"("\udbff\udfff")"},
      {"a\u00e9b", R"("a\u00e9b")"},
  };
  for (const DumpCase& c : cases) {
    EXPECT_EQ(PythonJsonDumps(c.value), c.expected) << c.expected;
  }
}

TEST(PythonJsonDumpsTest, InvalidUtf8BytesBecomeReplacementCharacters) {
  const DumpCase cases[] = {
      {"\xff", R"("\ufffd")"},
      {"a\x80z", R"("a\ufffdz")"},                  // Stray continuation byte.
      {"\xc3", R"("\ufffd")"},                      // Truncated sequence.
      {"\xc3(", R"("\ufffd(")"},                    // Bad continuation.
      {"\xc0\xaf", R"("\ufffd\ufffd")"},            // Overlong '/'.
      {"\xed\xa0\x80", R"("\ufffd\ufffd\ufffd")"},  // Encoded surrogate.
      {"\xf4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},  // > U+10FFFF.
  };
  for (const DumpCase& c : cases) {
    EXPECT_EQ(PythonJsonDumps(c.value), c.expected) << c.expected;
  }
}

TEST(PythonJsonDumpsTest, EmptyContainersStayOnOneLine) {
  EXPECT_EQ(PythonJsonDumps(Json::array()), "[]");
  EXPECT_EQ(PythonJsonDumps(Json::object()), "{}");
  Json v = Json::object();
  v["a"] = Json::array();
  v["b"] = Json::object();
  EXPECT_EQ(PythonJsonDumps(v), "{\n \"a\": [],\n \"b\": {}\n}");
}

TEST(PythonJsonDumpsTest, NestedStructureUsesOneSpacePerLevel) {
  Json v = Json::object();
  v["z"] = 1;  // Insertion order, not sorted.
  v["list"] = Json::array({1, Json::array({true, nullptr}), "x"});
  v["obj"] = Json::object();
  v["obj"]["\u00e9"] = 2.5;
  v["obj"]["nan"] = kNaN;
  EXPECT_EQ(PythonJsonDumps(v),
            "{\n"
            " \"z\": 1,\n"
            " \"list\": [\n"
            "  1,\n"
            "  [\n"
            "   true,\n"
            "   null\n"
            "  ],\n"
            "  \"x\"\n"
            " ],\n"
            " \"obj\": {\n"
            "  \"\\u00e9\": 2.5,\n"
            "  \"nan\": NaN\n"
            " }\n"
            "}");
}

TEST(PythonJsonDumpsTest, TensorEntryMatchesMsprobeLayout) {
  Json tensor = Json::object();
  tensor["type"] = "torch.Tensor";
  tensor["dtype"] = "torch.float32";
  tensor["shape"] = Json::array({32, 3});
  tensor["Max"] = 1.0;
  tensor["Min"] = 0.0;
  tensor["Mean"] = 0.4993983507156372;
  tensor["Norm"] = 1267.74462890625;
  tensor["requires_grad"] = false;
  Json entry = Json::object();
  entry["input_args"] = Json::array({tensor, nullptr});
  entry["input_kwargs"] = Json::object();
  EXPECT_EQ(PythonJsonDumps(entry),
            "{\n"
            " \"input_args\": [\n"
            "  {\n"
            "   \"type\": \"torch.Tensor\",\n"
            "   \"dtype\": \"torch.float32\",\n"
            "   \"shape\": [\n"
            "    32,\n"
            "    3\n"
            "   ],\n"
            "   \"Max\": 1.0,\n"
            "   \"Min\": 0.0,\n"
            "   \"Mean\": 0.4993983507156372,\n"
            "   \"Norm\": 1267.74462890625,\n"
            "   \"requires_grad\": false\n"
            "  },\n"
            "  null\n"
            " ],\n"
            " \"input_kwargs\": {}\n"
            "}");
}

// Random JSON values: every kind of scalar, strings over the whole Unicode
// range, and nested containers (empty ones included).
class RandomJson {
 public:
  explicit RandomJson(uint64_t seed) : rng_(seed) {}

  Json Value(int depth) {
    const int kind = Pick(depth >= 4 ? 6 : 9);
    switch (kind) {
      case 0:
        return nullptr;
      case 1:
        return Pick(2) == 1;
      case 2:
        return Integer();
      case 3:
      case 4:
        return Double();
      case 5:
        return String();
      case 6:
      case 7: {
        Json a = Json::array();
        for (int i = Pick(5); i > 0; --i) a.push_back(Value(depth + 1));
        return a;
      }
      default: {
        Json o = Json::object();
        for (int i = Pick(5); i > 0; --i) o[String()] = Value(depth + 1);
        return o;
      }
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  Json Integer() {
    switch (Pick(4)) {
      case 0:
        return Pick(200) - 100;
      case 1:
        return static_cast<int64_t>(rng_());
      case 2:
        return rng_() | (uint64_t{1} << 63);  // Above INT64_MAX.
      default:
        return std::numeric_limits<int64_t>::min();
    }
  }

  double Double() {
    switch (Pick(4)) {
      case 0:
        return Pick(2000) - 1000.0;
      case 1:
        return static_cast<float>(Pick(1 << 20)) / 1024.0f;
      case 2:
        return -0.0;
      default: {
        double v;
        do {
          v = std::bit_cast<double>(rng_());
        } while (!std::isfinite(v));
        return v;
      }
    }
  }

  std::string String() {
    std::string s;
    for (int n = Pick(8); n > 0; --n) {
      uint32_t cp;
      switch (Pick(6)) {
        case 0:
          cp = static_cast<uint32_t>(Pick(0x20));
          break;  // Control.
        case 1:
          cp = static_cast<uint32_t>(0x20 + Pick(0x60));
          break;
        case 2:
          cp = static_cast<uint32_t>(0x80 + Pick(0x780));
          break;
        case 3:
          cp = static_cast<uint32_t>(0x800 + Pick(0xd000));
          break;
        case 4:
          cp = static_cast<uint32_t>(0xe000 + Pick(0x2000));
          break;
        default:
          cp = static_cast<uint32_t>(0x10000 + Pick(0x100000));
          break;
      }
      AppendUtf8(s, cp);
    }
    return s;
  }

  static void AppendUtf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xc0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xe0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      s += static_cast<char>(0xf0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  std::mt19937_64 rng_;
};

TEST(PythonJsonDumpsTest, RandomValuesMatchPythonJsonDumps) {
  constexpr char kScript[] =
      "import json, sys\n"
      "print(json.dumps(json.loads(sys.stdin.read()), indent=1), end='')\n";
  RandomJson gen(7);
  for (int round = 0; round < 40; ++round) {
    const Json v = gen.Value(0);
    // nlohmann's own ASCII-only serialiser feeds Python, so the expected
    // bytes do not depend on the code under test.
    const std::string expected = RunPython(kScript, v.dump(-1, ' ', true));
    ASSERT_EQ(PythonJsonDumps(v), expected) << "input " << v.dump();
  }
}

}  // namespace
}  // namespace tprobe::dump
