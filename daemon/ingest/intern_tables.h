#ifndef TPROBE_DAEMON_INGEST_INTERN_TABLES_H_
#define TPROBE_DAEMON_INGEST_INTERN_TABLES_H_

// A rank's intern tables: the names and stacks its Intern records
// defined, by id, bounded by RankLimits (drain.h).
//
// Thread safety: none; part of RankState, guarded by the rank's
// mutex.

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/record/codec.h"
#include "common/status.h"
#include "daemon/ingest/rank_limits.h"

namespace tprobe::daemon {

class InternTables {
 public:
  // Stores a name, or a stack ('\0'-separated lines; a trailing separator
  // ends the last line), under its id; a repeated id replaces the text.
  // Returns an error, storing nothing, beyond the limits' count or bytes
  // (the byte total only grows, so a stream of repeats still meets it).
  Status Add(const record::InternView& v, const RankLimits& limits);

  // The name or stack interned under `id`, or null when none was.
  const std::string* Name(uint32_t id) const;
  const std::vector<std::string>* Stack(uint32_t id) const;

  size_t names() const { return names_.size(); }

 private:
  std::unordered_map<uint32_t, std::string> names_;  // InternKind::kName
  std::unordered_map<uint32_t, std::vector<std::string>> stacks_;
  uint64_t bytes_ = 0;  // text of names and stacks
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_INTERN_TABLES_H_
