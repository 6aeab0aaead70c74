#ifndef TPROBE_DAEMON_CONTROL_CONTROL_SERVICE_H_
#define TPROBE_DAEMON_CONTROL_CONTROL_SERVICE_H_

// What each control request means (proto/tprobe/v1/control.proto), apart
// from how it travels (control_server.h). The control thread only answers:
// it never drains a ring or writes a file. Requests that concern the data
// are queued into the producer's pipeline (rank_pipeline.h says what each
// does there), behind the records sent before them:
//   Register  creates the client's Rank and segment; the reply carries
//             the segment (control_server.h).
//             The rank's journals left by a killed daemon are recovered.
//   Stop      queued; the reply (at once) means "queued in order". From the
//             CLI it also has the open steps written; with wait set, it is
//             answered once they are.
//   Flush     queued; the reply comes once the files are written.
//   Status    one RankStatus per producer, from what the workers published.
//   Configure (the CLI) checked once (config::FromProto) and offered to
//             every registered rank (live_directive.h); answered at once.
//   FetchConfig
//             (a rank that saw a new config generation) answered with the
//             offered config; a Configure command is queued so that the
//             rank's pipeline switches to it behind the records before.
//   Shutdown  replies, then the daemon drains and writes everything, removes
//             every segment and exits 0.
// A rank's Start, Step and Goodbye never come here: they travel in its
// boundary ring, in order with its records (common/shm/README.md), and the
// socket refuses them. On a connection that did not register (the CLI),
// Stop, Flush, Configure, a live Start and Status reach the ranks of the
// peer's uid; for root and the daemon's own uid (the operator), every rank.
// Only the operator may Shutdown. A live Start or Stop becomes a capture
// directive (live_directive.h).
//
// Thread safety: Handle, HangUp and Register run on the control (Asio)
// thread; the reply callbacks of Flush and a waiting Stop run on a worker
// thread.
// FinishAll runs once the workers have stopped.

#include <sys/types.h>

#include <functional>
#include <memory>
#include <vector>

#include "daemon/ingest/registry.h"
#include "daemon/process/logger.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::daemon {

// What the daemon knows about one control connection.
struct Connection {
  PeerCredentials peer;
  std::shared_ptr<Rank> producer;  // set by Register
  bool hung_up = false;            // HangUp was queued
  bool stop_daemon = false;        // Shutdown was asked
};

class ControlService {
 public:
  // Delivers the response to one request; it may be called on any thread,
  // at once or later.
  using Reply = std::function<void(v1::Response)>;

  ControlService(Registry& registry, Logger log, RankLimits limits = {});

  // Answers one request through `reply`, exactly once. Never blocks on a
  // producer.
  void Handle(Connection& conn, const v1::Request& request, Reply reply);

  // After the reply to the last request was sent: true when the daemon
  // should now stop (Shutdown).
  bool AfterReply(const Connection& conn) const { return conn.stop_daemon; }

  // The connection hung up. Its producer gets a HangUp command: once its
  // process is gone its rings are read to the end, and it is finalised as
  // dead unless a Goodbye is there.
  void HangUp(Connection& conn);

  // Daemon shutdown: runs what is queued, drains, writes and removes every
  // producer. REQUIRES: the drain workers have stopped.
  void FinishAll();

 private:
  // Registration also recovers the journals a stopped daemon left for the
  // producer's rank (journal.h), unless a producer of the same rank and
  // dump path is registered.
  v1::Response Register(Connection& conn, const v1::Register& reg);
  void RecoverJournals(const Rank& producer) const;
  // One RankStatus per rank the connection may see (Visible).
  v1::Response Report(const Connection& conn) const;
  v1::Response FetchConfig(const Connection& conn,
                           const v1::FetchConfig& fetch);
  // The producers a request applies to: the connection's own, or those it
  // may see for a connection that did not register.
  std::vector<std::shared_ptr<Rank>> Targets(const Connection& conn) const;
  // Every producer for the operator (root or the daemon's uid); for any
  // other peer, the producers of its uid.
  std::vector<std::shared_ptr<Rank>> Visible(const Connection& conn) const;
  // Queues `command` for every target; `reply` gets Ok (or the first write
  // error) once all of them ran it, or at once when `wait` is false.
  void Queue(const Connection& conn, Command command, bool wait, Reply reply);

  Registry& registry_;
  Logger log_;
  const RankLimits limits_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_CONTROL_CONTROL_SERVICE_H_
