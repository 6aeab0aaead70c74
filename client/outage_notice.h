#ifndef TPROBE_CLIENT_OUTAGE_NOTICE_H_
#define TPROBE_CLIENT_OUTAGE_NOTICE_H_

// The trainer's word on stderr while its records are lost because no
// daemon is reached (a TPROBE_SOCKET with nobody behind it, a daemon that
// died or was never started): a run that dumps nothing must not look like
// one that dumps. Once an outage has lost records for kDelay, one line names
// the socket, when the outage began and the records lost so far; when a
// daemon is reached (again), one line says how many the outage lost; at the
// session's end, one line gives the process's total, if any was lost.
//
// The control channel's background thread drives it (Poll), so no hook ever
// waits on stderr.
//
// Thread safety: Poll from one thread; Close from the thread that closes
// the channel, after that thread stopped.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace tprobe::client {

class OutageNotice {
 public:
  using Clock = std::chrono::steady_clock;
  // How long an outage loses records before it is said; and how often the
  // count of lost records is read while no daemon is attached.
  static constexpr auto kDelay = std::chrono::seconds(2);
  static constexpr auto kPollPeriod = std::chrono::milliseconds(500);

  explicit OutageNotice(std::string socket_path)
      : socket_path_(std::move(socket_path)) {}

  // `attached`: whether a daemon receives the records now; `lost` reads the
  // process's records lost without a daemon (Recorder::dropped_no_daemon), at
  // most every kPollPeriod while none is attached and once when one is
  // attached again.
  void Poll(Clock::time_point now, bool attached,
            const std::function<uint64_t()>& lost);

  // The session ends: says the process's total `lost`, if any.
  void Close(uint64_t lost);

 private:
  const std::string socket_path_;
  // The outage under way: when it began (on both clocks: the steady one
  // for kDelay, the wall one to say it), the count lost when it began, and
  // whether it was said.
  struct Outage {
    Clock::time_point since;
    std::chrono::system_clock::time_point since_wall;
    uint64_t lost_before = 0;
    bool said = false;
  };
  std::optional<Outage> outage_;
  Clock::time_point next_read_{};
  uint64_t lost_ = 0;  // the last count read
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_OUTAGE_NOTICE_H_
