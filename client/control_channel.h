#ifndef TPROBE_CLIENT_CONTROL_CHANNEL_H_
#define TPROBE_CLIENT_CONTROL_CHANNEL_H_

// The client's side of the control socket: registration, the requests that
// are answered (Configure, FetchConfig, Flush, Status), and reconnection
// with backoff. Step boundaries never travel here: Start, Step and Goodbye
// go into the boundary ring (Recorder::WriteBoundary). A request is written by
// the caller when the socket takes it at once; otherwise it waits in a
// queue that a background thread writes. That thread also reads the
// replies and reconnects, so callers never block on the daemon except in
// Call(), which has a deadline. While no daemon is attached and records are
// lost, it says so on stderr (outage_notice.h); Close says the total lost.
//
// Thread safety: all public methods may be called from any thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "client/outage_notice.h"
#include "client/recorder.h"
#include "common/status.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::client {

class ControlChannel {
 public:
  // `registration` is sent on every (re)connection; on success the daemon's
  // segment is opened and attached to `core`. `launch`, when set, starts a
  // daemon on the socket; it is called at most once.
  ControlChannel(Recorder* core, std::string socket_path,
                 v1::Register registration, std::function<Status()> launch);
  ~ControlChannel();

  // Connects (launching a daemon if needed and allowed) within timeout_ms,
  // then starts the background thread. Ok when a daemon is attached;
  // kUnavailable when none answered (the thread keeps trying). When a
  // daemon answered but refused (an unusable dump_path, a listener that is
  // not a trusted uid: common/control/peer_check.h), returns at once
  // kPermissionDenied with its reason and starts no thread.
  Status Open(int timeout_ms);

  // The config sent when the channel registers again (a live config the
  // session took up replaces the one it started with).
  void UpdateConfig(const v1::Config& config);

  // Sends and waits for the reply until timeout_ms. Returns false when no
  // daemon is connected or it does not answer in time.
  bool Call(v1::Request request, int timeout_ms, v1::Response* reply);

  // Stops the background thread and closes the socket, failing the calls
  // still waiting; says on stderr how many records the process lost without
  // a daemon, if any.
  void Close();

  const std::string& socket_path() const { return socket_path_; }

 private:
  struct Outgoing {
    v1::Request request;
    std::shared_ptr<std::promise<v1::Response>> reply;
  };

  // Connects, registers and attaches the segment. kUnavailable when no
  // daemon answered as it should (tried again later), kPermissionDenied
  // when one refused.
  Status ConnectAndRegister();
  // Queues `out`, or writes it now when nothing is queued before it and the
  // socket takes it without waiting. False once Close began.
  bool Submit(Outgoing out);
  // Notes the reply a request written awaits, in order; io_mu_ held.
  void AwaitReply(const Outgoing& out);
  // Writes, in order, the end of a frame begun before, the requests the
  // socket did not take before and then `batch`, noting the replies they
  // await, until `deadline`; what the socket does not take by then waits
  // for the next call. False when the connection failed. io_mu_ held.
  bool WriteQueued(std::deque<Outgoing>& batch,
                   std::chrono::steady_clock::time_point deadline);
  // Detaches the core and fails the requests in flight. `daemon_lost`: the
  // daemon hung up or stopped answering (not a Close).
  void Disconnect(bool daemon_lost = false);
  void Run();
  // Without a connection: fails `batch` and tries to connect again when the
  // backoff allows.
  void Reconnect(std::deque<Outgoing>& batch);
  // Hands the replies waiting on the socket to their callers; disconnects
  // on a hang-up or a broken reply.
  void ReadReplies();

  Recorder* recorder_;
  const std::string socket_path_;
  v1::Register registration_;  // guarded by mu_
  std::function<Status()> launch_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Outgoing> outgoing_;
  bool stopping_ = false;

  // Guards the writes to fd_ and the replies awaited; taken after mu_. Only
  // the background thread (or Open, before it runs) changes fd_.
  std::mutex io_mu_;
  int fd_ = -1;
  // The end of a frame a write left (the socket took only part of it): the
  // background thread writes it before anything else, then unsent_, the
  // requests the socket did not take yet.
  std::string rest_;
  std::deque<Outgoing> unsent_;

  // Owned by the background thread once it runs.
  std::chrono::milliseconds backoff_{100};
  std::chrono::steady_clock::time_point next_attempt_;
  // The replies awaited, in request order; guarded by io_mu_.
  std::deque<std::shared_ptr<std::promise<v1::Response>>> inflight_;
  // Polled by the background thread; closed once it stopped.
  OutageNotice notice_;
  std::thread thread_;
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_CONTROL_CHANNEL_H_
