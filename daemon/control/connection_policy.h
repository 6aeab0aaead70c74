#ifndef TPROBE_DAEMON_CONTROL_CONNECTION_POLICY_H_
#define TPROBE_DAEMON_CONTROL_CONNECTION_POLICY_H_

// Who may use the control socket, and how much one connection may cost the
// daemon (docs/architecture.md, section 3: only the owning user, root or a
// configured group may connect).
//
// Peers: the daemon's own uid and root always; with --group NAME, members of
// that group too (primary or supplementary). The socket file and its folder
// then get that group (socket 0660, folder 0750), so members can reach it;
// without a group they are 0600 and 0700.
//
// Costs: at most max_connections connections at once (the excess is
// answered with a refusal and closed); a request is at most
// max_request_bytes, checked before anything is allocated, and its bytes are
// read as they arrive; a connection that has not registered and sends
// nothing for request_timeout, or any connection that stalls in the middle
// of a frame that long, is closed. A connection with max_pending_replies
// replies not yet written (it does not read them, or its steps are still
// being written) is not read until some are: what it sends waits in its own
// socket, not in the daemon.
//
// Thread safety: immutable after construction.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace tprobe::daemon {

class AccessPolicy {
 public:
  // The daemon's own effective uid and root only.
  AccessPolicy();
  // Also the members of group `name` (a name or a number). Fails when the
  // system knows no such group.
  static Result<AccessPolicy> ForGroup(const std::string& name);

  // True when a peer with these credentials may use the daemon.
  bool Allows(uid_t uid, gid_t gid) const;
  // "uid 1000 and root" or "uid 1000, root and members of group 'ml'".
  std::string Describe() const;
  const std::optional<gid_t>& group() const { return group_; }

  // Gives the bound socket file and its folder the modes (and group) above.
  Status ApplyTo(const std::string& socket_path) const;

 private:
  uid_t owner_;
  std::optional<gid_t> group_;
  std::string group_name_;
};

struct ConnectionPolicy {
  AccessPolicy access;
  int max_connections = 256;
  uint32_t max_request_bytes = 1u << 20;
  size_t max_pending_replies = 4096;
  std::chrono::seconds request_timeout{30};
};

// The policy of tprobed's flags: `group` empty or a group name (an error
// names it when there is no such group), connections as ConnectionsThatFit.
Result<ConnectionPolicy> MakeConnectionPolicy(const std::string& group,
                                              int max_connections,
                                              std::chrono::seconds timeout);

// Raises this process's open-file limit to its hard limit and returns how
// many control connections fit under it next to the rest of the daemon's
// files (at most `wanted`, at least 1).
int ConnectionsThatFit(int wanted);

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_CONTROL_CONNECTION_POLICY_H_
