#include "daemon/control/request_deadline.h"

namespace tprobe::daemon {

RequestDeadline::RequestDeadline(Socket& socket, std::chrono::seconds timeout)
    : socket_(socket), timeout_(timeout), timer_(socket.get_executor()) {}

RequestDeadline::~RequestDeadline() { Disarm(); }

void RequestDeadline::Arm() {
  timer_.expires_after(timeout_);
  std::weak_ptr<bool> alive = alive_;
  timer_.async_wait([alive, expired = expired_,
                     socket = &socket_](const boost::system::error_code& ec) {
    if (ec || alive.expired()) return;
    *expired = true;
    boost::system::error_code ignored;
    socket->close(ignored);
  });
}

void RequestDeadline::Disarm() { timer_.cancel(); }

}  // namespace tprobe::daemon
