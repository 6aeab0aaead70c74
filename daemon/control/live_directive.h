#ifndef TPROBE_DAEMON_CONTROL_LIVE_DIRECTIVE_H_
#define TPROBE_DAEMON_CONTROL_LIVE_DIRECTIVE_H_

// `tprobe start [--steps A-B] [--ranks R,...]` and `tprobe stop [--ranks
// R,...]` for running ranks: the CLI's live Start or Stop becomes a capture
// directive written into the segment header of every matching rank
// (common/shm/directive.h), which each rank reads when its next step starts
// or ends. Nothing is sent to the trainers.
//
// A request that would change nothing is refused with the reason
// (kNothingToDo): no rank
// registered, no registered rank matching, or (Start) a last step every
// matching rank has already passed.
//
// `tprobe configure FILE` goes the same way: the new config is offered to
// every registered rank (Rank::OfferConfig bumps the segment's
// config_generation and clears the directive), and each rank fetches it
// when its next step starts, so that step is the first recorded under it.
// A live config may change what a rank decides per call or per step: task,
// level, step, rank, scope, list, data_mode, summary_mode and
// overflow_nums; and dump_path, as msprobe's dump_enable reload does: the
// steps from the one that takes the config up go under the new path,
// checked and made as at registration (ResolveDumpPath, as the rank's user
// and relative to its working directory), while steps still open stay
// where they began. It may not change the "tprobe" section (the socket the
// rank talks to, its rings' geometry, full-ring policy and timeouts live in
// the trainer's process). A config with such a change, or a dump_path that
// cannot be used, is refused as a whole, naming the key and both values or
// the path and why (kInvalidArgument), and nothing changes.
//
// Thread safety: called from the control thread; takes each producer's lock
// to read its step.

#include <memory>
#include <vector>

#include "common/status.h"
#include "daemon/ingest/rank.h"
#include "daemon/process/logger.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::daemon {

Status ApplyLiveStart(const std::vector<std::shared_ptr<Rank>>& producers,
                      const v1::Start& start, spdlog::logger& log);

Status ApplyLiveConfigure(const std::vector<std::shared_ptr<Rank>>& producers,
                          const config::Config& config, spdlog::logger& log);

Status ApplyLiveStop(const std::vector<std::shared_ptr<Rank>>& producers,
                     const v1::Stop& stop, spdlog::logger& log);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_CONTROL_LIVE_DIRECTIVE_H_
