#ifndef TPROBE_TOOLS_IMPORT_CSV_READER_H_
#define TPROBE_TOOLS_IMPORT_CSV_READER_H_

// A small reader for comma-separated files such as MindSpore's
// statistic.csv.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tprobe::import {

// One row of a CSV file.
struct CsvRow {
  size_t line = 0;  // the 1-based line the row starts on
  std::vector<std::string> fields;
};

// Parses CSV text as RFC 4180 describes it: fields are separated by ',' and
// rows by "\n" or "\r\n". A field that starts with '"' is quoted and may
// hold ',', line breaks and '"' (written as ""). A UTF-8 byte order mark at
// the start is skipped, and empty lines are not rows.
//
// Returns an error "line N: …" for a quoted field that never ends or that
// is followed by anything but ',' or the end of the row.
//
// Thread safety: pure.
Result<std::vector<CsvRow>> ParseCsv(std::string_view text);

// Reads and parses the file at `path`. Errors start with "<path>: ".
Result<std::vector<CsvRow>> ReadCsvFile(const std::string& path);

}  // namespace tprobe::import

#endif  // TPROBE_TOOLS_IMPORT_CSV_READER_H_
