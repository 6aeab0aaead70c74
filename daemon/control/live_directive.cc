#include "daemon/control/live_directive.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "common/config/config.h"
#include "common/config/config_keys.h"
#include "common/shm/directive.h"
#include "daemon/process/dump_path_check.h"

namespace tprobe::daemon {
namespace {

std::string RankList(const std::vector<std::shared_ptr<Rank>>& producers) {
  std::string text;
  for (const auto& p : producers) {
    if (!text.empty()) text += ", ";
    text += p->rank() < 0 ? std::string("(none)") : std::to_string(p->rank());
  }
  return text;
}

std::string Listed(const google::protobuf::RepeatedField<int32_t>& ranks) {
  std::string text;
  for (int32_t r : ranks) text += (text.empty() ? "" : ",") + std::to_string(r);
  return text;
}

// The producers `ranks` names (all when empty), or why there are none
// (kNothingToDo).
Result<std::vector<std::shared_ptr<Rank>>> Match(
    const std::vector<std::shared_ptr<Rank>>& producers,
    const google::protobuf::RepeatedField<int32_t>& ranks, const char* verb) {
  if (producers.empty()) {
    return Status::NothingToDo(
        std::string("no rank is registered: nothing to ") + verb);
  }
  std::vector<std::shared_ptr<Rank>> matched;
  for (const auto& p : producers) {
    if (ranks.empty() ||
        std::find(ranks.begin(), ranks.end(), p->rank()) != ranks.end()) {
      matched.push_back(p);
    }
  }
  if (matched.empty()) {
    return Status::NothingToDo(
        "no registered rank matches --ranks " + Listed(ranks) +
        " (registered ranks: " + RankList(producers) + "): nothing to " + verb);
  }
  return matched;
}

void Store(Rank& producer, const shm::Directive& directive) {
  std::atomic_ref<uint64_t>(producer.segment().header()->directive)
      .store(shm::EncodeDirective(directive), std::memory_order_release);
}

}  // namespace

Status ApplyLiveConfigure(const std::vector<std::shared_ptr<Rank>>& producers,
                          const config::Config& config, spdlog::logger& log) {
  if (producers.empty()) {
    return Status::NothingToDo("no rank is registered: nothing to configure");
  }
  // Checked for every rank before any is offered the config: a refusal
  // changes nothing.
  std::vector<Rank::Offer> offers;
  for (const auto& p : producers) {
    const std::string rank =
        p->rank() < 0 ? std::string("(none)") : std::to_string(p->rank());
    if (auto change = config::FixedKeyChange(p->config(), config)) {
      return Status::InvalidArgument(
          "config: " + change->key +
          " cannot change while the training runs (rank " + rank +
          " registered with '" + change->was + "', the new config says '" +
          change->now + "'): set it back to '" + change->was +
          "'; a live config may change task, level, step, rank, scope, "
          "list, data_mode, summary_mode, overflow_nums and dump_path");
    }
    // A new dump_path is checked and made as the rank's user, as at
    // registration, and relative to its working directory.
    auto write_path = config.dump_path == p->config().dump_path
                          ? Result<std::string>(p->options().write_path)
                          : ResolveDumpPath(config.dump_path, p->watched_pid(),
                                            p->uid(), p->gid(), p->groups());
    if (!write_path.ok()) {
      return Status::InvalidArgument("config: for rank " + rank + ": " +
                                     write_path.status().message());
    }
    offers.push_back({config, std::move(write_path).value()});
  }
  for (size_t i = 0; i < producers.size(); ++i) {
    producers[i]->OfferConfig(std::move(offers[i]));
  }
  log.info("live configure of ranks {}: {}", RankList(producers),
           config::ToJson(config));
  return Status::Ok();
}

Status ApplyLiveStart(const std::vector<std::shared_ptr<Rank>>& producers,
                      const v1::Start& start, spdlog::logger& log) {
  auto found = Match(producers, start.ranks(), "start");
  if (!found.ok()) return found.status();
  const auto& matched = *found;
  shm::Directive d;
  d.mode = shm::CaptureMode::kCapture;
  d.first_step = std::min(start.first_step(), shm::kMaxDirectiveStep);
  d.last_step = start.last_step() >= shm::kOpenEnded
                    ? shm::kOpenEnded
                    : std::min(start.last_step(), shm::kMaxDirectiveStep);
  if (d.last_step < d.first_step) {
    return Status::InvalidArgument(
        "bad steps: the last step " + std::to_string(d.last_step) +
        " comes before the first " + std::to_string(d.first_step));
  }
  if (d.last_step != shm::kOpenEnded) {
    // The step each rank last published (or tprobed last saw).
    uint32_t lowest = shm::kOpenEnded;
    for (const auto& p : matched) {
      const uint32_t published =
          std::atomic_ref<uint32_t>(p->segment().header()->producer_step)
              .load(std::memory_order_relaxed);
      lowest = std::min(
          lowest, std::max(published, p->Lock()->assembler.current_step()));
    }
    if (lowest > d.last_step) {
      return Status::NothingToDo(
          "step " + std::to_string(d.last_step) +
          " has already passed on every matching rank (the earliest "
          "is at step " +
          std::to_string(lowest) + "): nothing to start");
    }
  }
  for (const auto& p : matched) Store(*p, d);
  log.info("live start: steps {}..{} on ranks {}", d.first_step,
           d.last_step == shm::kOpenEnded ? std::string("")
                                          : std::to_string(d.last_step),
           RankList(matched));
  return Status::Ok();
}

Status ApplyLiveStop(const std::vector<std::shared_ptr<Rank>>& producers,
                     const v1::Stop& stop, spdlog::logger& log) {
  auto found = Match(producers, stop.ranks(), "stop");
  if (!found.ok()) return found.status();
  const auto& matched = *found;
  shm::Directive d;
  d.mode = shm::CaptureMode::kPause;
  for (const auto& p : matched) Store(*p, d);
  log.info("live stop on ranks {}", RankList(matched));
  return Status::Ok();
}

}  // namespace tprobe::daemon
