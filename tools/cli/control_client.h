#ifndef TPROBE_TOOLS_CLI_CONTROL_CLIENT_H_
#define TPROBE_TOOLS_CLI_CONTROL_CLIENT_H_

// The CLI's side of the control protocol (proto/tprobe/v1/control.proto):
// one Unix stream connection to tprobed; each request is a framed
// tprobe.v1.Request (common/control/frame.h), answered by a framed
// tprobe.v1.Response. A connection that never registers is the
// CLI's: Start, Stop, Step and Flush then apply to every registered rank.
//
// Thread safety: one thread per ControlClient.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/control/frame.h"
#include "common/status.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::cli {

class ControlClient {
 public:
  // Connects to the socket at `socket_path` and checks that the listener is
  // a trusted uid (common/control/peer_check.h) before anything is sent.
  // `timeout` bounds the connect and, later, each Call (its send and
  // receive together). The
  // error names the path and says how to start a daemon or point at another
  // socket.
  static Result<std::unique_ptr<ControlClient>> Connect(
      const std::string& socket_path, std::chrono::milliseconds timeout);
  ~ControlClient();
  ControlClient(const ControlClient&) = delete;
  ControlClient& operator=(const ControlClient&) = delete;

  // Sends `request` with the protocol version and waits for the answer
  // (requests that drain, such as Flush, answer once the files are
  // written). Returns an error when the connection fails or the reply is
  // not a Response; a Response with ok = false is returned as it is. A
  // daemon that refuses the connection (another user, too many
  // connections) answers with its reason, which comes back as such a
  // Response even when the request could not be sent.
  Result<v1::Response> Call(v1::Request request);

 private:
  ControlClient(int fd, std::string socket_path,
                std::chrono::milliseconds timeout);
  Result<v1::Response> ReadResponse(control::Deadline deadline);

  int fd_;
  std::string socket_path_;
  std::chrono::milliseconds timeout_;
};

// How long a command waits for tprobed unless --timeout says otherwise.
inline constexpr std::chrono::milliseconds kDefaultTimeout{60000};

// --timeout SECONDS (fractions allowed), or kDefaultTimeout when absent. The
// error names the bad value.
Result<std::chrono::milliseconds> CliTimeout(
    const std::optional<std::string>& flag);

// The socket the CLI talks to: --socket, else $TPROBE_SOCKET, else the
// default path (common/control/socket_path.h).
std::string CliSocketPath(const std::string& flag);

// Sends `request` to the daemon on `socket_path` and returns its answer.
// On failure prints "tprobe COMMAND: <why>" to stderr and returns why: no
// daemon or a broken connection (kUnavailable, or the connection's own
// error), or the daemon's refusal with its code (control::StatusOf).
Result<v1::Response> CallDaemon(std::string_view command,
                                const std::string& socket_path,
                                const v1::Request& request,
                                std::chrono::milliseconds timeout);

}  // namespace tprobe::cli

#endif  // TPROBE_TOOLS_CLI_CONTROL_CLIENT_H_
