#ifndef TPROBE_COMMON_DUMP_JOURNAL_H_
#define TPROBE_COMMON_DUMP_JOURNAL_H_

// The journal, a file format beside the dump tree's: the crash consistency
// of an open step. A step's files are written once, when the step closes;
// until then every change the daemon makes to the step's tree
// (the daemon's Assembler) is appended to
// step{N}/rank{R}/tprobe.journal. If the daemon dies (kill -9, a crash, the
// node's power), RecoverStep turns the journal into the step's files, marked
// `recovered` (so not complete), and removes it. A restarted daemon does this
// for a rank when the rank registers again (RecoverRank); `tprobe recover
// DIR` does it for a whole dump tree (RecoverTree).
//
// What survives a daemon death: every entry, construct.json node and stack
// applied to the tree up to the last journal write (at most kJournalPeriod
// old, or kJournalBytes of changes), the accounting as of then, and the
// tensor files written so far. A step that closes within kJournalPeriod of
// opening never needs a journal file, so short steps cost no extra file. What
// does not: records still in the rings or applied after the last Sync. A
// journal cut short by the death (a partial last record) is read up to its last
// whole record.
//
// Format 2: a sequence of records, each [u32 size][u32 crc32 of the body]
// [body], little-endian. A body is one byte of kind, then:
//   kHeader      CBOR (RFC 8949) [task, level, framework, dump_data_dir or
//                null, 2], the last item the format;
//   kEntryText   [u32 n][name], [u32 count], then count members, each
//                [u32 n][key][u32 n][value]: the entry's members as
//                EntryText holds them, the value in its dump.json
//                bytes (read back through ReindentPythonJson, so a
//                value that is not JSON is refused);
//   kParent      CBOR [node, parent or null];
//   kStack       CBOR [name, [lines]];
//   kAccounting  CBOR [counters].
// Format 1 (a header of four items) held entries as kEntry, CBOR [name,
// body]; RecoverStep still reads it.
//
// Thread safety: none; a Journal belongs to one open tree (Assembler).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/dump/tree.h"
#include "common/status.h"

namespace tprobe::dump {

inline constexpr char kJournalFileName[] = "tprobe.journal";
// Buffered changes are written once they are this old or this large.
inline constexpr std::chrono::milliseconds kJournalPeriod{20};
inline constexpr size_t kJournalBytes = size_t{1} << 20;

class Journal {
 public:
  // The journal of the tree whose files go to `dir`; nothing is written
  // until the first Sync with something to write.
  Journal(std::string dir, const std::string& task, const std::string& level,
          const std::string& framework,
          const std::optional<std::string>& dump_data_dir);
  ~Journal();
  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&&) = delete;
  Journal(const Journal&) = delete;

  // Buffer one change, in the order it was made to the tree.
  void Entry(const std::string& name, const EntryText& entry);
  void Parent(const std::string& node,
              const std::optional<std::string>& parent);
  void Stack(const std::string& name, const std::vector<std::string>& lines);

  // The changes buffered since the last Sync date from `since`, not from
  // when they were buffered: for a caller that buffers a tree's content in
  // one go, late (the daemon's Assembler journals a step only once it is
  // kJournalPeriod old), so that Sync writes it as soon as it would have
  // written changes buffered one by one.
  void Backdate(std::chrono::steady_clock::time_point since);

  // Appends what was buffered, then the accounting when it changed, to the
  // file (one write), if the oldest buffered change is kJournalPeriod old
  // at `now` or kJournalBytes are buffered. Returns an error naming the
  // file when it cannot be written.
  Status Sync(const Accounting& accounting,
              std::chrono::steady_clock::time_point now);

  // The step's files are written: the journal is no longer needed.
  void Remove();

  // The bytes buffered for the next Sync.
  size_t pending_bytes() const { return pending_.size(); }

 private:
  void Append(uint8_t kind, const Json& body);
  // Starts a record of `kind`, whose body follows in pending_ until Seal.
  size_t Begin(uint8_t kind);
  void Seal(size_t at, uint8_t kind);

  std::string dir_;
  std::string path_;
  bool created_ = false;  // the file exists: later writes append
  std::vector<uint8_t> pending_;
  bool changed_ = false;  // something besides the header is pending
  std::chrono::steady_clock::time_point oldest_;  // of the pending changes
  Accounting synced_accounting_;
};

// Rebuilds the tree of `dir` from its journal, writes its files marked
// recovered and removes the journal. Returns false (and changes nothing)
// when `dir` has no journal; an error when it cannot be read or written.
Result<bool> RecoverStep(const std::string& dir);

// Recovers every journal under `root` (its step*/rank*/ directories).
// Returns the directories recovered; the first error stops nothing, it is
// returned once the others were tried.
Result<std::vector<std::string>> RecoverTree(const std::string& root);

// The same, only for the directories step*/`rank_dir` (the rank's
// directory name, config::RankDirName).
Result<std::vector<std::string>> RecoverRank(const std::string& root,
                                             const std::string& rank_dir);

}  // namespace tprobe::dump

#endif  // TPROBE_COMMON_DUMP_JOURNAL_H_
