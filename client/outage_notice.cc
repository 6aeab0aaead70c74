#include "client/outage_notice.h"

#include <time.h>

#include <cstdio>

namespace tprobe::client {
namespace {

// "HH:MM:SS" in local time.
std::string ClockTime(std::chrono::system_clock::time_point when) {
  const time_t t = std::chrono::system_clock::to_time_t(when);
  tm local{};
  char text[16] = "?";
  if (::localtime_r(&t, &local) != nullptr) {
    std::strftime(text, sizeof text, "%H:%M:%S", &local);
  }
  return text;
}

}  // namespace

void OutageNotice::Poll(Clock::time_point now, bool attached,
                        const std::function<uint64_t()>& lost) {
  if (attached) {
    if (outage_ && outage_->said) {
      lost_ = lost();
      std::fprintf(
          stderr,
          "[tprobe] a daemon is reached on %s; %llu records were lost "
          "without one since %s\n",
          socket_path_.c_str(),
          static_cast<unsigned long long>(lost_ - outage_->lost_before),
          ClockTime(outage_->since_wall).c_str());
    }
    outage_.reset();
    return;
  }
  if (!outage_) {
    outage_ = Outage{now, std::chrono::system_clock::now(), lost_, false};
  }
  if (outage_->said || now < next_read_) return;
  next_read_ = now + kPollPeriod;
  lost_ = lost();
  if (lost_ == outage_->lost_before || now - outage_->since < kDelay) return;
  outage_->said = true;
  std::fprintf(stderr,
               "[tprobe] no daemon is reached on %s since %s: %llu records "
               "lost so far, nothing is dumped; training goes on (start "
               "tprobed on that socket, or correct TPROBE_SOCKET; a daemon "
               "that comes up there is taken up)\n",
               socket_path_.c_str(), ClockTime(outage_->since_wall).c_str(),
               static_cast<unsigned long long>(lost_ - outage_->lost_before));
}

void OutageNotice::Close(uint64_t lost) {
  if (lost == 0) return;
  std::fprintf(stderr,
               "[tprobe] %llu records of this process were lost in all "
               "because no daemon received them (socket %s)\n",
               static_cast<unsigned long long>(lost), socket_path_.c_str());
}

}  // namespace tprobe::client
