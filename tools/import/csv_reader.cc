#include "tools/import/csv_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tprobe::import {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

}  // namespace

Result<std::vector<CsvRow>> ParseCsv(std::string_view text) {
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  size_t line = 1;
  size_t i = 0;
  bool row_started = false;    // anything (even an empty field) on this row
  bool at_field_start = true;  // nothing of the current field read yet

  auto end_field = [&] {
    row.fields.push_back(std::move(field));
    field.clear();
  };
  auto end_row = [&] {
    if (row_started) {
      end_field();
      rows.push_back(std::move(row));
    }
    row = CsvRow{};
    row_started = false;
  };

  while (i < text.size()) {
    const char c = text[i];
    if (!row_started) row.line = line;
    if (c == '"' && at_field_start) {
      // A quoted field: runs to the next lone '"'.
      row_started = true;
      const size_t start_line = line;
      ++i;
      while (true) {
        if (i >= text.size()) {
          return Status::Error("line " + std::to_string(start_line) +
                               ": quoted field never ends");
        }
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') ++line;
        field.push_back(text[i++]);
      }
      at_field_start = false;
      const bool at_boundary =
          i >= text.size() || text[i] == ',' || text[i] == '\n' ||
          (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n');
      if (!at_boundary) {
        return Status::Error("line " + std::to_string(line) +
                             ": text after a quoted field");
      }
      continue;
    }
    if (c == ',') {
      row_started = true;
      end_field();
      at_field_start = true;
      ++i;
    } else if (c == '\n' ||
               (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      end_row();
      at_field_start = true;
      i += c == '\r' ? 2 : 1;
      ++line;
    } else {
      row_started = true;
      at_field_start = false;
      field.push_back(c);
      ++i;
    }
  }
  end_row();
  return rows;
}

Result<std::vector<CsvRow>> ReadCsvFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Error(path + ": cannot open: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read failed");
  Result<std::vector<CsvRow>> rows = ParseCsv(text.str());
  if (!rows.ok()) return Status::Error(path + ": " + rows.status().message());
  return rows;
}

}  // namespace tprobe::import
