#ifndef TPROBE_DAEMON_CONTROL_REQUEST_DEADLINE_H_
#define TPROBE_DAEMON_CONTROL_REQUEST_DEADLINE_H_

// A deadline on one control connection: once armed, the socket is closed
// when `timeout` passes before Disarm() or the next Arm(), so that a read
// waiting on it ends with an error. It stops a client that connects and
// sends nothing, or starts a frame and never finishes it, from holding a
// connection slot forever (connection_policy.h).
//
// Thread safety: use on the io_context's thread only. The deadline may be
// destroyed before the socket; the socket must outlive the deadline.

// clang-format off
// First: Boost 1.74's awaitable.hpp uses std::exchange without <utility>.
#include <utility>
// clang-format on

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

namespace tprobe::daemon {

class RequestDeadline {
 public:
  using Socket = boost::asio::local::stream_protocol::socket;

  RequestDeadline(Socket& socket, std::chrono::seconds timeout);
  ~RequestDeadline();  // Disarm()s
  RequestDeadline(const RequestDeadline&) = delete;
  RequestDeadline& operator=(const RequestDeadline&) = delete;

  // (Re)starts the countdown from now.
  void Arm();
  void Disarm();
  // True when the deadline passed and closed the socket.
  bool expired() const { return *expired_; }

 private:
  Socket& socket_;
  const std::chrono::seconds timeout_;
  boost::asio::steady_timer timer_;
  // Shared with the timer's handler, which may run after this object is
  // gone (a cancelled wait still completes): it then does nothing.
  std::shared_ptr<bool> expired_ = std::make_shared<bool>(false);
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // this lives
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_CONTROL_REQUEST_DEADLINE_H_
