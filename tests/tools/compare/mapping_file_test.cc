// The mapping files read as msprobe reads them (mapping_file.h): tricky
// YAML against Python's yaml.safe_load itself, run on the same texts, and
// the lines errors name.

#include "tools/compare/input/mapping_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tools/compare/input/name_mapping.h"

namespace tprobe::compare {
namespace {

// Texts where a hand-written reader and safe_load part ways: anchors and
// merge keys, flow maps, quoting and escapes, multi-line scalars, YAML
// 1.1's scalars, duplicate keys, explicit tags, JSON.
const std::vector<std::string> kTricky = {
    "fc1.Dense: fc1.Linear\n'Cell.b': \"Module.b\"  # a comment\n",
    "base: &b {x: 1, y: [a, b]}\nmerged:\n  <<: *b\n  y: 2\nlist: [*b, *b]\n",
    "a: &a {k: 1, j: 1}\nb: &b {k: 2, m: 2}\nc:\n  <<: [*a, *b]\n  z: 3\n",
    "{a: {b: [1, {c: d}]}, 'e f': \"g\\th\\u00e9\\n\"}\n",
    "single: 'it''s # not a comment'\ndouble: \"a\\\\b \\\"q\\\"\"\n",
    "folded: >\n  one\n  two\n\n  three\nliteral: |\n  a\n   b\n"
    "strip: |-\n  x\nkeep: |+\n  y\n\nplain: a\n  b\n  c\n",
    "bools: [yes, No, on, OFF, true, False, y, n]\n"
    "ints: [010, 0x1F, 0b101, 1_000, -7, +3, '12', 1:30, 0]\n"
    "floats: [1.5, .5, -2., 1.5e+3, 6.8523015e+5, 1e3, 190:20:30.15]\n"
    "nulls: [~, null, Null, NULL, '', 'null']\n",
    "1: one\n2.5: two\nnull: three\nyes: four\n1.0: five\nno: 0\n0: six\n",
    "k: first\nother: x\nk: last\n",
    "---\n- ms_api: Mint.sub\n  pt_api: Torch.sub\n  ms_args: [0, 1]\n"
    "  pt_args:\n    - 1\n    - \"0\"\n-\n  ms_api: Mint.mul\n",
    "[{\"ms_api\": \"Mint.add\", \"pt_api\": \"Torch.add\", \"ms_args\": [0, "
    "1]}]\n",
    "s: !!str 10\ni: !!int '7'\nf: !!float '2.5'\n? explicit key\n: value\n",
    "Cell:\n  body: trunk(Block)\nBlock:\n  dense: wrong\n  'dense': proj\n"
    "Empty: {}\nNone:\n",
    "",
    "# only a comment\n",
    "url: http://x.y/z?q=1#frag\ntime: 12:30\nratio: 1:2\n",
};

// yaml.safe_load's value of each text as json.dumps writes it, or "ERROR",
// one per line; empty when that Python has no yaml.
std::vector<std::string> SafeLoad(const std::vector<std::string>& texts) {
  const std::string dir = ::testing::TempDir();
  const std::string cases = dir + "/mapping_cases.json";
  {
    Json list = Json::array();
    for (const std::string& text : texts) list.push_back(text);
    std::ofstream(cases) << list.dump();
  }
  const std::string command =
      std::string(TPROBE_PYTHON) +
      " -c 'import json, sys, yaml\n"
      "for text in json.load(open(sys.argv[1])):\n"
      "    try:\n"
      "        print(json.dumps(yaml.safe_load(text)))\n"
      "    except yaml.YAMLError:\n"
      "        print(\"ERROR\")' " +
      cases + " 2>/dev/null";
  std::vector<std::string> out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char line[65536];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::string s(line);
    if (s.ends_with('\n')) s.pop_back();
    out.push_back(s);
  }
  if (::pclose(pipe) != 0) out.clear();
  return out;
}

TEST(MappingFileTest, ReadsTrickyYamlAsPythonsSafeLoad) {
  const std::vector<std::string> expected = SafeLoad(kTricky);
  if (expected.empty()) GTEST_SKIP() << TPROBE_PYTHON << " has no yaml";
  ASSERT_EQ(expected.size(), kTricky.size());
  for (size_t i = 0; i < kTricky.size(); ++i) {
    Result<MappingFile> file = ParseMappingFile(kTricky[i], "t.yaml");
    ASSERT_NE(expected[i], "ERROR") << kTricky[i];
    ASSERT_TRUE(file.ok()) << kTricky[i] << file.status().message();
    EXPECT_EQ(file->value, Json::parse(expected[i]))
        << kTricky[i] << "\nours:   " << file->value.dump()
        << "\nPython: " << expected[i];
  }
}

TEST(MappingFileTest, InfinityNanAndLargeNumbers) {
  Result<MappingFile> file = ParseMappingFile(
      "[.inf, -.Inf, .NaN, 18446744073709551615, -9223372036854775808, "
      "99999999999999999999]",
      "t.yaml");
  ASSERT_TRUE(file.ok()) << file.status().message();
  const Json& v = file->value;
  EXPECT_TRUE(std::isinf(v[0].get<double>()) && v[0].get<double>() > 0);
  EXPECT_TRUE(std::isinf(v[1].get<double>()) && v[1].get<double>() < 0);
  EXPECT_TRUE(std::isnan(v[2].get<double>()));
  EXPECT_EQ(v[3].get<uint64_t>(), 18446744073709551615u);
  EXPECT_EQ(v[4].get<int64_t>(), INT64_MIN);
  EXPECT_DOUBLE_EQ(v[5].get<double>(), 1e20);
}

TEST(MappingFileTest, ErrorsNameTheFileAndLine) {
  auto error = [](const std::string& text) {
    Result<MappingFile> file = ParseMappingFile(text, "m.yaml");
    EXPECT_FALSE(file.ok()) << text;
    return file.ok() ? std::string() : file.status().message();
  };
  EXPECT_EQ(error("a: [1, 2\n").rfind("m.yaml:", 0), 0u);
  EXPECT_EQ(error("a: 1\n---\nb: 2\n"),
            "m.yaml: holds several YAML documents, not one");
  EXPECT_EQ(error("x: !!python/object:os.system ls\n").rfind("m.yaml:1:", 0),
            0u);
  EXPECT_EQ(error("? [a, b]\n: c\n").rfind("m.yaml:1:", 0), 0u);
  EXPECT_EQ(error("a: b\n\xff\n"), "m.yaml:2:1: not UTF-8 text");
  EXPECT_EQ(error("a: \x01\n"), "m.yaml:1:4: a character YAML does not allow");
  // Text yaml-cpp cannot read after a first document (its LoadAll loops).
  EXPECT_EQ(error(", me\n  two\n"), "m.yaml: no YAML value could be read");
  // An alias inside the value it names.
  EXPECT_NE(error("a: &a\n  b: *a\n").find("alias names its own value"),
            std::string::npos);
  EXPECT_NE(error("a: &a\n  <<: *a\n").find("merge keys nest too deep"),
            std::string::npos);
  // A billion laughs stops at a bound.
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    laughs += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) {
      laughs += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
    }
    laughs += "]\n";
  }
  EXPECT_NE(error(laughs).find("values"), std::string::npos);
}

TEST(MappingFileTest, LinesAndWhere) {
  Result<MappingFile> file =
      ParseMappingFile("# c\na:\n  b: 1\n  c/d: [x,\n    y]\n", "m.yaml");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->Where("/a"), "m.yaml:3");
  EXPECT_EQ(file->Where("/a/b"), "m.yaml:3");
  EXPECT_EQ(file->Where("/a/c~1d/1"), "m.yaml:5");
  EXPECT_EQ(file->Where("/a/nothing"), "m.yaml:3");
  EXPECT_EQ(PointerToken("c/d~e"), "c~1d~0e");
}

TEST(MappingFileTest, NameMappingsRefuseWhatIsNoName) {
  Result<NameMapping> map = NameMapping::Parse("a: b\nc: [d]\n", "n.yaml");
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.status().message(),
            "n.yaml:2: expected 'target name: baseline name'");
  Result<NameMapping> empty = NameMapping::Parse("# nothing\n", "n.yaml");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace tprobe::compare
