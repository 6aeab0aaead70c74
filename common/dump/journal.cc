// The journal's records (journal.h): written by Journal, read back by
// RecoverStep into a step tree and its files.

#include "common/dump/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "common/dump/json_reindent.h"
#include "common/dump/tree_writer.h"
#include "common/stats/crc32.h"

namespace tprobe::dump {
namespace {

namespace fs = std::filesystem;

enum Kind : uint8_t {
  kHeader = 1,
  kEntry = 2,  // format 1
  kParent = 3,
  kStack = 4,
  kAccounting = 5,
  kEntryText = 6,
};

constexpr uint64_t kFormat = 2;

void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void PutText(std::vector<uint8_t>& out, std::string_view text) {
  PutU32(out, static_cast<uint32_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
}

uint32_t GetU32(const uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

// Reads the fields of a kEntryText body, every length checked against what
// is left.
class FieldReader {
 public:
  explicit FieldReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool U32(uint32_t* v) {
    if (bytes_.size() < 4) return false;
    *v = GetU32(bytes_.data());
    bytes_ = bytes_.subspan(4);
    return true;
  }
  bool Text(std::string_view* text) {
    uint32_t size;
    if (!U32(&size) || size > bytes_.size()) return false;
    *text =
        std::string_view(reinterpret_cast<const char*>(bytes_.data()), size);
    bytes_ = bytes_.subspan(size);
    return true;
  }
  bool done() const { return bytes_.empty(); }

 private:
  std::span<const uint8_t> bytes_;
};

// The entry of a kEntryText body, each value checked and laid out again;
// nullopt when any byte is out of place.
std::optional<std::pair<std::string, EntryText>> ReadEntryText(
    std::span<const uint8_t> body) {
  FieldReader reader(body);
  std::string_view name;
  uint32_t count;
  if (!reader.Text(&name) || !reader.U32(&count)) return std::nullopt;
  EntryText entry;
  for (uint32_t i = 0; i < count; ++i) {
    std::string_view key;
    std::string_view value;
    if (!reader.Text(&key) || !reader.Text(&value)) return std::nullopt;
    if (!ReindentPythonJson(value, kEntryMemberDepth,
                            *entry.BeginMember(key))) {
      return std::nullopt;
    }
    entry.EndMember();
  }
  if (!reader.done()) return std::nullopt;
  return std::make_pair(std::string(name), std::move(entry));
}

bool SameCounters(const Accounting& a, const Accounting& b) {
  return a.tensors_incomplete == b.tensors_incomplete &&
         a.dropped == b.dropped && a.records_skipped == b.records_skipped &&
         a.stream_corrupt == b.stream_corrupt &&
         a.producer_died == b.producer_died;
}

Json AccountingJson(const Accounting& a) {
  return Json::array({a.entries, a.duplicates_dropped, a.tensors_incomplete,
                      a.dropped.ring_full, a.dropped.too_large,
                      a.dropped.no_daemon, a.records_skipped, a.stream_corrupt,
                      a.producer_died});
}

void ApplyAccounting(const Json& j, Accounting& a) {
  if (!j.is_array() || j.size() != 9) return;
  // entries are recounted by replaying them; so are duplicates_dropped,
  // except those dropped before the journal began (RecoverStep).
  a.duplicates_dropped = j[1].get<uint64_t>();
  a.tensors_incomplete = j[2].get<uint64_t>();
  a.dropped.ring_full = j[3].get<uint64_t>();
  a.dropped.too_large = j[4].get<uint64_t>();
  a.dropped.no_daemon = j[5].get<uint64_t>();
  a.records_skipped = j[6].get<uint64_t>();
  a.stream_corrupt = j[7].get<bool>();
  a.producer_died = j[8].get<bool>();
}

std::optional<std::string> OptionalString(const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  return std::nullopt;
}

}  // namespace

Journal::Journal(std::string dir, const std::string& task,
                 const std::string& level, const std::string& framework,
                 const std::optional<std::string>& dump_data_dir)
    : dir_(std::move(dir)), path_(dir_ + "/" + kJournalFileName) {
  Append(kHeader,
         Json::array({task, level, framework,
                      dump_data_dir ? Json(*dump_data_dir) : Json(nullptr),
                      kFormat}));
}

Journal::~Journal() = default;

Journal::Journal(Journal&& other) noexcept
    : dir_(std::move(other.dir_)),
      path_(std::move(other.path_)),
      created_(std::exchange(other.created_, false)),
      pending_(std::move(other.pending_)),
      changed_(other.changed_),
      oldest_(other.oldest_),
      synced_accounting_(other.synced_accounting_) {}

size_t Journal::Begin(uint8_t kind) {
  const size_t at = pending_.size();
  PutU32(pending_, 0);  // size, then crc, filled in by Seal
  PutU32(pending_, 0);
  pending_.push_back(kind);
  return at;
}

void Journal::Seal(size_t at, uint8_t kind) {
  const auto size = static_cast<uint32_t>(pending_.size() - at - 8);
  const uint32_t crc = stats::Crc32(std::span<const std::byte>(
      reinterpret_cast<const std::byte*>(pending_.data() + at + 8), size));
  for (int i = 0; i < 4; ++i) {
    pending_[at + i] = static_cast<uint8_t>(size >> (8 * i));
    pending_[at + 4 + i] = static_cast<uint8_t>(crc >> (8 * i));
  }
  if (kind != kHeader && !changed_) {
    changed_ = true;
    oldest_ = std::chrono::steady_clock::now();
  }
}

void Journal::Append(uint8_t kind, const Json& body) {
  const size_t at = Begin(kind);
  Json::to_cbor(body, pending_);
  Seal(at, kind);
}

void Journal::Entry(const std::string& name, const EntryText& entry) {
  const size_t at = Begin(kEntryText);
  PutText(pending_, name);
  PutU32(pending_, static_cast<uint32_t>(entry.size()));
  for (size_t i = 0; i < entry.size(); ++i) {
    PutText(pending_, entry.key(i));
    PutText(pending_, entry.value(i));
  }
  Seal(at, kEntryText);
}

void Journal::Parent(const std::string& node,
                     const std::optional<std::string>& parent) {
  Append(kParent, Json::array({node, parent ? Json(*parent) : Json(nullptr)}));
}

void Journal::Stack(const std::string& name,
                    const std::vector<std::string>& lines) {
  Append(kStack, Json::array({name, lines}));
}

void Journal::Backdate(std::chrono::steady_clock::time_point since) {
  if (changed_ && since < oldest_) oldest_ = since;
}

Status Journal::Sync(const Accounting& accounting,
                     std::chrono::steady_clock::time_point now) {
  if (!changed_) {
    if (SameCounters(accounting, synced_accounting_)) return Status::Ok();
    // Only the accounting changed: it is due as a change of its own.
    changed_ = true;
    oldest_ = now;
  }
  if (now - oldest_ < kJournalPeriod && pending_.size() < kJournalBytes) {
    return Status::Ok();
  }
  Append(kAccounting, AccountingJson(accounting));
  synced_accounting_ = accounting;
  // Opened for each write and closed after it: a rank's open steps cost no
  // file descriptor between writes, however many there are. A link in
  // the journal's place is not followed.
  if (!created_) {
    if (Status s = MakeDirs(dir_); !s.ok()) return s;
  }
  const int fd = ::open(path_.c_str(),
                        O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
                            (created_ ? 0 : O_CREAT | O_TRUNC),
                        0640);
  if (fd < 0) {
    return Status::Error(std::string(created_ ? "cannot open the journal "
                                              : "cannot create the journal ") +
                         path_ + ": " + std::strerror(errno));
  }
  created_ = true;
  size_t done = 0;
  while (done < pending_.size()) {
    const ssize_t n =
        ::write(fd, pending_.data() + done, pending_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      return Status::Error("cannot append to the journal " + path_ + ": " +
                           std::strerror(n < 0 ? error : ENOSPC));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  pending_.clear();
  changed_ = false;
  return Status::Ok();
}

void Journal::Remove() {
  if (!created_) return;
  created_ = false;
  ::unlink(path_.c_str());
}

Result<bool> RecoverStep(const std::string& dir) {
  const std::string path = dir + "/" + kJournalFileName;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  std::optional<StepTree> tree;
  Accounting accounting;
  size_t at = 0;
  while (at + 9 <= bytes.size()) {
    const uint32_t size = GetU32(&bytes[at]);
    const uint32_t crc = GetU32(&bytes[at + 4]);
    if (size < 1 || size > bytes.size() - at - 8) break;  // cut short
    const std::span<const uint8_t> body(&bytes[at + 8], size);
    if (stats::Crc32(std::as_bytes(body)) != crc) break;
    at += 8 + size;
    const uint8_t kind = body[0];
    if (kind == kEntryText) {
      auto entry = ReadEntryText(body.subspan(1));
      if (!tree || !entry) break;
      tree->AddEntry(entry->first, entry->second);
      continue;
    }
    const Json value = Json::from_cbor(body.subspan(1), /*strict=*/true,
                                       /*allow_exceptions=*/false);
    if (value.is_discarded() || !value.is_array()) break;
    try {
      if (kind == kHeader && !tree &&
          (value.size() == 4 ||
           (value.size() == 5 && value[4].get<uint64_t>() == kFormat))) {
        tree.emplace(value[0].get<std::string>(), value[1].get<std::string>(),
                     value[2].get<std::string>());
        tree->set_dump_data_dir(OptionalString(value[3]));
      } else if (!tree) {
        break;
      } else if (kind == kEntry && value.size() == 2) {  // format 1
        tree->AddEntry(value[0].get<std::string>(), value[1]);
      } else if (kind == kParent && value.size() == 2) {
        tree->SetParent(value[0].get<std::string>(), OptionalString(value[1]));
      } else if (kind == kStack && value.size() == 2) {
        tree->AddStack(value[0].get<std::string>(),
                       value[1].get<std::vector<std::string>>());
      } else if (kind == kAccounting) {
        ApplyAccounting(value, accounting);
      }
    } catch (const Json::exception&) {
      break;  // a record of the wrong shape: keep what came before
    }
  }
  if (!tree) {
    return Status::Error("the journal " + path +
                         " has no readable header; it was left in place");
  }
  Accounting& a = tree->accounting();
  const uint64_t entries = a.entries;
  const uint64_t duplicates = a.duplicates_dropped;
  a = accounting;
  a.entries = entries;
  a.duplicates_dropped = std::max(duplicates, accounting.duplicates_dropped);
  a.recovered = true;
  if (Status s = WriteStepTree(dir, *tree); !s.ok()) return s;
  ::unlink(path.c_str());
  return true;
}

namespace {

Result<std::vector<std::string>> Recover(const std::string& root,
                                         const std::string* rank_dir) {
  std::vector<std::string> recovered;
  Status first;
  std::error_code ec;
  for (const auto& step : fs::directory_iterator(root, ec)) {
    if (!step.path().filename().string().starts_with("step")) continue;
    std::vector<fs::path> ranks;
    if (rank_dir != nullptr) {
      ranks.push_back(step.path() / *rank_dir);
    } else {
      std::error_code inner;
      for (const auto& r : fs::directory_iterator(step.path(), inner)) {
        if (r.path().filename().string().starts_with("rank")) {
          ranks.push_back(r.path());
        }
      }
    }
    for (const fs::path& dir : ranks) {
      std::error_code exists;
      if (!fs::exists(dir / kJournalFileName, exists)) continue;
      auto done = RecoverStep(dir.string());
      if (!done.ok()) {
        if (first.ok()) first = done.status();
      } else if (done.value()) {
        recovered.push_back(dir.string());
      }
    }
  }
  if (!first.ok()) return first;
  return recovered;
}

}  // namespace

Result<std::vector<std::string>> RecoverTree(const std::string& root) {
  return Recover(root, nullptr);
}

Result<std::vector<std::string>> RecoverRank(const std::string& root,
                                             const std::string& rank_dir) {
  return Recover(root, &rank_dir);
}

}  // namespace tprobe::dump
