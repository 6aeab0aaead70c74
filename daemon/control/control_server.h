#ifndef TPROBE_DAEMON_CONTROL_CONTROL_SERVER_H_
#define TPROBE_DAEMON_CONTROL_CONTROL_SERVER_H_

// The control socket: a Boost.Asio Unix stream acceptor. Each connection is
// checked with SO_PEERCRED against the ConnectionPolicy (connection_policy.h:
// who may connect, how many at once); a refused one gets a Response saying
// why, a log line, and is closed. Then it reads frames (a 4-byte
// little-endian length of at most max_request_bytes, then a serialized
// tprobe.v1.Request, read as its bytes arrive) and
// answers each with a framed tprobe.v1.Response from ControlService.
// Reading and answering are separate: every request is read and handed to
// the service as soon as it arrives, and the replies (some come later, from
// the drain workers) are written in request order. A reply that cannot be
// sent never stops the reading, so no request the client sent is lost. A
// connection that hangs up is handed to ControlService::HangUp after its
// last request. The reply to a successful Register carries the rank's
// segment (its memory file, as SCM_RIGHTS on the frame's first byte).
//
// Thread safety: everything runs on the io_context's thread.

#include <sys/types.h>

// clang-format off
// First: Boost 1.74's awaitable.hpp uses std::exchange without <utility>.
#include <utility>
// clang-format on

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "daemon/control/connection_policy.h"
#include "daemon/control/control_service.h"
#include "daemon/process/logger.h"

namespace tprobe::daemon {

class RequestDeadline;  // request_deadline.h

class ControlServer {
 public:
  // `idle_exit` > 0: stop once no client has been connected for that long.
  ControlServer(boost::asio::io_context& io, std::string socket_path,
                ControlService& service, Logger log,
                std::chrono::seconds idle_exit, ConnectionPolicy policy = {});
  ~ControlServer();  // Close()s
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Creates the socket's directory (MakePrivateDirs: it must be ours and not
  // writable by others), replaces a stale socket file (one nothing answers
  // on), then binds and listens (modes from AccessPolicy::ApplyTo). Fails with
  // a clear message when another daemon answers on the path, when the path
  // exists and is not a socket, or when it is too long for a Unix socket.
  Status Listen();

  // Starts accepting connections. `on_stop` is called on the io thread after
  // the reply to a Shutdown request, and when the idle time runs out.
  // REQUIRES: Listen() succeeded.
  void Run(std::function<void(std::string_view why)> on_stop);

  // Stops accepting and removes the socket file if it is still this
  // daemon's. Connections already open are left to the io_context.
  void Close();

 private:
  using Socket = boost::asio::local::stream_protocol::socket;

  boost::asio::awaitable<void> Accept();
  struct Session;
  boost::asio::awaitable<void> Serve(Socket socket);
  // Reads one request's frame into *body, within the connection policy's
  // bounds (pending replies, frame size, request_timeout). False when the
  // connection ends: a hang-up, a frame over the cap or a request that did
  // not come whole in time (both logged).
  boost::asio::awaitable<bool> ReadRequest(Session& session,
                                           RequestDeadline& deadline,
                                           std::string* body);
  boost::asio::awaitable<void> Write(std::shared_ptr<Session> session);
  // Writes one encoded reply, passing `passed_fd` with it when it is not
  // -1. Returns false when the client is gone.
  boost::asio::awaitable<bool> WriteReply(Session& session,
                                          const std::string& reply,
                                          int passed_fd);
  // Fills the peer's uid and pid. Returns why it may not connect (logged),
  // or an empty string.
  std::string CheckPeer(Socket& socket, Connection& conn);
  void ArmIdleTimer();
  void Stop(std::string_view why);

  boost::asio::io_context& io_;
  const std::string socket_path_;
  ControlService& service_;
  Logger log_;
  const std::chrono::seconds idle_exit_;
  const ConnectionPolicy policy_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  boost::asio::steady_timer idle_timer_;
  std::function<void(std::string_view)> on_stop_;
  int connections_ = 0;
  ino_t socket_inode_ = 0;  // 0: no socket file of ours
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_CONTROL_CONTROL_SERVER_H_
