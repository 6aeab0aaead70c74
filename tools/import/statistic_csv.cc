// Reading MindSpore's statistic.csv into rows (statistic_csv.h).

#include "tools/import/statistic_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "tools/import/csv_reader.h"
#include "tools/import/mindspore_dtype.h"

namespace tprobe::import {
namespace {

using dump::Json;

constexpr std::string_view kMarkers[] = {"dump_tensor_data_",
                                         "dump_tensor_data/"};
constexpr std::string_view kRequired[] = {"Op Name", "Data Type", "Shape",
                                          "Timestamp", "Slot"};

// pandas.read_csv's default missing-value words.
constexpr std::string_view kMissingWords[] = {
    "",     "#N/A",   "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN", "-NaN",
    "-nan", "1.#IND", "1.#QNAN",  "<NA>", "N/A",     "NA",       "NULL",
    "NaN",  "None",   "n/a",      "nan",  "null"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  const auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Python's float(text), less digit-group underscores.
std::optional<double> ParseFloat(std::string_view text) {
  text = Trim(text);
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text[0] == '+' || text[0] == '-') return std::nullopt;
  const std::string lower = Lower(text);
  double v;
  if (lower == "inf" || lower == "infinity") {
    v = std::numeric_limits<double>::infinity();
  } else if (lower == "nan") {
    v = std::numeric_limits<double>::quiet_NaN();
  } else {
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (p != end ||
        (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      return std::nullopt;
    }
    if (ec == std::errc::result_out_of_range) {
      // Python rounds to inf or to 0 rather than failing.
      const std::string s(text);
      v = std::strtod(s.c_str(), nullptr);
    }
  }
  return negative ? -v : v;
}

std::string MissingColumnsMessage(
    const std::string& path, const std::vector<std::string_view>& missing) {
  std::string names;
  for (size_t i = 0; i < missing.size(); ++i) {
    if (i > 0) names += ", ";
    names += "\"" + std::string(missing[i]) + "\"";
  }
  return path + ": missing column" + (missing.size() > 1 ? "s " : " ") + names +
         " (a statistic.csv needs Op Name, Data Type, Shape, Timestamp and "
         "Slot)";
}

}  // namespace

std::optional<std::string> CellTensorNameOfOp(std::string_view op_name) {
  size_t at = std::string_view::npos;
  size_t marker_size = 0;
  for (std::string_view marker : kMarkers) {
    const size_t pos = op_name.find(marker);
    if (pos < at) {
      at = pos;
      marker_size = marker.size();
    }
  }
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = op_name.substr(at + marker_size);
  // Up to the next marker (msprobe keeps the second piece of a split on
  // it) and the optional "|…" suffix.
  for (std::string_view marker : kMarkers)
    rest = rest.substr(0, rest.find(marker));
  rest = rest.substr(0, rest.find('|'));
  std::string name(rest);
  std::replace(name.begin(), name.end(), '-', '.');
  return name;
}

Json ConvertStatisticValue(std::string_view text) {
  for (std::string_view word : kMissingWords) {
    if (text == word) return nullptr;
  }
  const std::string lower = Lower(text);
  if (lower == "true") return true;
  if (lower == "false") return false;
  if (std::optional<double> v = ParseFloat(text)) {
    if (std::isnan(*v)) return nullptr;
    return *v;
  }
  return std::string(text);
}

std::vector<int64_t> ParseShape(std::string_view text) {
  std::vector<int64_t> shape;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] < '0' || text[i] > '9') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
    int64_t v = 0;
    std::from_chars(text.data() + i, text.data() + j, v);
    shape.push_back(v);
    i = j;
  }
  return shape;
}

namespace {

// Where the columns are, by header name (the first of repeated names).
struct Columns {
  size_t count = 0;  // the header's fields
  std::map<std::string, size_t, std::less<>> by_name;
  std::array<std::optional<size_t>, kStatisticCount> statistic;
};

// The columns of `header`; an error names each required one it lacks.
Result<Columns> ColumnsOf(const std::string& path,
                          const std::vector<std::string>& header) {
  Columns columns;
  columns.count = header.size();
  for (size_t i = 0; i < header.size(); ++i) {
    columns.by_name.emplace(header[i], i);
  }
  std::vector<std::string_view> missing;
  for (std::string_view name : kRequired) {
    if (!columns.by_name.contains(name)) missing.push_back(name);
  }
  if (!missing.empty()) {
    return Status::Error(MissingColumnsMessage(path, missing));
  }
  for (size_t k = 0; k < kStatisticCount; ++k) {
    auto it = columns.by_name.find(kStatisticColumns[k]);
    if (it != columns.by_name.end()) columns.statistic[k] = it->second;
  }
  return columns;
}

// A Timestamp: an integer exactly, else any number; `where` starts the
// error.
Result<long double> ParseTimestamp(std::string_view timestamp,
                                   const std::string& where) {
  uint64_t integral = 0;
  auto [end, ec] = std::from_chars(
      timestamp.data(), timestamp.data() + timestamp.size(), integral);
  if (ec == std::errc() && end == timestamp.data() + timestamp.size() &&
      !timestamp.empty()) {
    return static_cast<long double>(integral);
  }
  if (std::optional<double> v = ParseFloat(timestamp); v && !std::isnan(*v)) {
    return static_cast<long double>(*v);
  }
  return Status::Error(where + "Timestamp \"" + std::string(timestamp) +
                       "\" is not a number");
}

// One data row; nullopt for a row of slot 0, which msprobe drops.
Result<std::optional<StatisticRow>> ParseRow(const std::string& path,
                                             const CsvRow& row,
                                             const Columns& columns) {
  const std::string where = path + ":" + std::to_string(row.line) + ": ";
  // MindSpore ends data rows with ',': extra empty fields are ignored.
  for (size_t i = columns.count; i < row.fields.size(); ++i) {
    if (!row.fields[i].empty()) {
      return Status::Error(where + std::to_string(row.fields.size()) +
                           " fields, but the header has " +
                           std::to_string(columns.count));
    }
  }
  auto cell = [&row](size_t i) {
    return i < row.fields.size() ? std::string_view(row.fields[i]) : "";
  };
  auto field = [&](std::string_view name) {
    return cell(columns.by_name.find(name)->second);
  };
  const std::optional<double> slot = ParseFloat(field("Slot"));
  if (slot && *slot == 0) return std::optional<StatisticRow>();
  const std::string_view op_name = field("Op Name");
  std::optional<std::string> name = CellTensorNameOfOp(op_name);
  if (!name) {
    return Status::Error(where + "Op Name \"" + std::string(op_name) +
                         "\" does not contain dump_tensor_data_ followed " +
                         "by a cell name");
  }
  Result<TensorSlot> slot_name = ParseSlotName(*name);
  if (!slot_name.ok()) {
    return Status::Error(where + "Op Name \"" + std::string(op_name) +
                         "\": " + slot_name.status().message());
  }
  StatisticRow out;
  out.line = row.line;
  out.slot = std::move(slot_name).value();
  Result<long double> timestamp =
      ParseTimestamp(Trim(field("Timestamp")), where);
  if (!timestamp.ok()) return timestamp.status();
  out.timestamp = *timestamp;
  out.dtype = MindSporeDTypeName(field("Data Type"));
  out.shape = ParseShape(field("Shape"));
  for (size_t k = 0; k < kStatisticCount; ++k) {
    if (columns.statistic[k]) {
      out.statistics[k] = ConvertStatisticValue(cell(*columns.statistic[k]));
    }
  }
  return std::optional<StatisticRow>(std::move(out));
}

}  // namespace

Result<StatisticFile> ReadStatisticCsv(const std::string& path) {
  Result<std::vector<CsvRow>> rows = ReadCsvFile(path);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status::Error(path + ": empty file, no header");
  Result<Columns> columns = ColumnsOf(path, rows->front().fields);
  if (!columns.ok()) return columns.status();
  StatisticFile file;
  file.path = path;
  for (size_t k = 0; k < kStatisticCount; ++k) {
    file.has_column[k] = columns->statistic[k].has_value();
  }
  for (size_t r = 1; r < rows->size(); ++r) {
    Result<std::optional<StatisticRow>> row =
        ParseRow(path, (*rows)[r], *columns);
    if (!row.ok()) return row.status();
    if (*row) file.rows.push_back(std::move(**row));
  }
  return file;
}

}  // namespace tprobe::import
