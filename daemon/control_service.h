#ifndef TPROBE_DAEMON_CONTROL_SERVICE_H_
#define TPROBE_DAEMON_CONTROL_SERVICE_H_

// What each control request means (proto/tprobe/v1/control.proto), apart
// from how it travels (control_server.h):
//   Register  creates the client's Producer and segment; the reply names it.
//   Start     notes the step and opens its tree (msprobe writes the empty
//             files at start()).
//   Stop      drains the producer completely and writes its open trees,
//             keeping them: later entries of the step (API backward after
//             stop) are written at the next flush.
//   Step      drains completely, settles the construct nodes still held
//             back (drain.h), writes every tree up to that step and forgets
//             them.
//   Flush     drains completely and writes every open tree; the reply means
//             the files are on disk.
//   Goodbye   drains, writes everything and replies; the segment is removed
//             after the reply.
//   Status    one RankStatus per producer.
//   Shutdown  replies, then the daemon drains and writes everything, removes
//             every segment and exits 0.
// Start, Stop, Step and Flush on a connection that did not register (the
// CLI) apply to every producer; a live Start or Stop (the CLI's) becomes a
// capture directive instead (live_directive.h).
//
// Thread safety: called from the control (Asio) thread only. It takes each
// producer's lock, so the drain thread may run meanwhile.

#include <sys/types.h>

#include <memory>
#include <vector>

#include "daemon/logger.h"
#include "daemon/registry.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::daemon {

// What the daemon knows about one control connection.
struct Connection {
  PeerCredentials peer;
  std::shared_ptr<Producer> producer;  // set by Register
  bool goodbye = false;                // the producer was finalised
  bool remove_segment = false;         // after the pending reply
  bool stop_daemon = false;            // Shutdown was asked
};

class ControlService {
 public:
  ControlService(Registry& registry, Logger log);

  // Answers one request, draining synchronously where the request needs it.
  v1::Response Handle(Connection& conn, const v1::Request& request);

  // Does what follows the reply to the last request (Goodbye: removes the
  // segment). Returns true when the daemon should now stop (Shutdown).
  bool AfterReply(Connection& conn);

  // The connection hung up. If its producer did not say Goodbye it is gone
  // (rank death): drains what it committed, marks its open trees
  // producer_died, writes them and removes its segment.
  void HangUp(Connection& conn);

  // Daemon shutdown: drains, writes and removes every producer.
  void FinishAll();

 private:
  v1::Response Register(Connection& conn, const v1::Register& reg);
  v1::Response Report() const;
  // The producers a request applies to: the connection's own, or every one
  // for a connection that did not register.
  std::vector<std::shared_ptr<Producer>> Targets(const Connection& conn) const;
  // Drains the producer completely, writes its open trees, marks it closed
  // and forgets it. `died` marks the trees producer_died first.
  Status Finalise(Producer& producer, bool died, uint64_t dropped_no_daemon);

  Registry& registry_;
  Logger log_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_CONTROL_SERVICE_H_
