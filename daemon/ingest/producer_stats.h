#ifndef TPROBE_DAEMON_INGEST_PRODUCER_STATS_H_
#define TPROBE_DAEMON_INGEST_PRODUCER_STATS_H_

// What a ProducerStats record (record::ProducerStatsRecord: statistics, an
// xor checksum or a CRC-32 the rank computed) gives the tensor that
// waits for it, checked against the tensor's dtype and the summary_mode.

#include "common/config/config.h"
#include "common/dump/framework.h"
#include "common/record/record.h"
#include "common/status.h"
#include "daemon/ingest/tensor_assembler.h"

namespace tprobe::daemon {

// Sets the statistics, xor checksum or CRC-32 that `r` carries on
// `waiting` and clears what it no longer awaits. Returns an error naming
// the defect (a second CRC-32, statistics that came twice, a kind that does
// not fit the tensor's dtype), changing nothing.
Status ApplyProducerStats(WaitingTensor& waiting,
                          const record::ProducerStatsRecord& r,
                          config::SummaryMode summary,
                          const dump::Framework& framework);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_INGEST_PRODUCER_STATS_H_
