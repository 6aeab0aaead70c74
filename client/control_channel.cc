#include "client/control_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/control/frame.h"
#include "common/control/peer_check.h"
#include "common/control/response.h"
#include "common/control/socket_path.h"

namespace tprobe::client {
namespace {

using Clock = std::chrono::steady_clock;

// How long the background thread waits for the socket to take a request
// before it reads replies and comes back to it, and how long the rest of a
// reply may take once its first byte came. A daemon that reads requests
// slowly (its control thread starved on a loaded machine) is not lost: only
// a hang-up or a reset ends the connection.
constexpr auto kWriteSlice = std::chrono::milliseconds(20);
constexpr auto kReadBound = std::chrono::seconds(5);
// Requests that may wait for a daemon that reads none. Each has a caller
// that waits for its reply with a deadline, so a handful at most wait in
// practice; the bound only keeps a hung daemon from growing the queue.
constexpr size_t kMaxUnsent = 32768;

int ConnectUnix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Whether a reply (or a hang-up) waits on `fd`.
bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

bool ReadFrame(int fd, google::protobuf::MessageLite* msg,
               Clock::time_point deadline) {
  return control::ReadFrame(fd, msg, deadline, control::kMaxFrameBytes).ok();
}

}  // namespace

ControlChannel::ControlChannel(Recorder* core, std::string socket_path,
                               v1::Register registration,
                               std::function<Status()> launch)
    : recorder_(core),
      socket_path_(std::move(socket_path)),
      registration_(std::move(registration)),
      launch_(std::move(launch)),
      notice_(socket_path_) {}

ControlChannel::~ControlChannel() { Close(); }

Status ControlChannel::ConnectAndRegister() {
  int fd = ConnectUnix(socket_path_);
  if (fd < 0)
    return Status::Unavailable("no daemon answers on " + socket_path_);
  // Nothing is sent to a listener that is not a trusted uid.
  if (Status s = control::CheckDaemonPeer(fd, socket_path_); !s.ok()) {
    ::close(fd);
    return Status::PermissionDenied(s.message());
  }
  v1::Request req;
  req.set_version(control::kProtocolVersion);
  {
    std::lock_guard lock(mu_);
    *req.mutable_register_() = registration_;
  }
  req.mutable_register_()->set_dropped_no_daemon(
      recorder_->dropped_no_daemon());
  v1::Response reply;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  // The reply carries the segment's memory file.
  int segment_fd = -1;
  Status failed;
  if (!control::WriteFrame(fd, req, deadline).ok() ||
      !control::ReadFrame(fd, &reply, deadline, control::kMaxFrameBytes,
                          &segment_fd)
           .ok()) {
    failed = Status::Unavailable("the daemon on " + socket_path_ +
                                 " did not answer registration");
  } else if (!control::IsOk(reply) || !reply.has_register_()) {
    failed = Status::PermissionDenied("the daemon refused registration: " +
                                      reply.error());
  } else if (segment_fd < 0) {
    failed = Status::Unavailable("the daemon on " + socket_path_ +
                                 " answered registration without its shared "
                                 "memory");
  }
  if (!failed.ok()) {
    if (segment_fd >= 0) ::close(segment_fd);
    ::close(fd);
    return failed;
  }
  auto segment =
      shm::Segment::Open(segment_fd, reply.register_().segment_name());
  if (!segment.ok()) {
    ::close(fd);
    return Status::Unavailable(segment.status().message());
  }
  recorder_->Attach(std::move(segment).value());
  std::lock_guard io(io_mu_);
  fd_ = fd;
  rest_.clear();
  return Status::Ok();
}

void ControlChannel::Disconnect(bool daemon_lost) {
  recorder_->Detach(daemon_lost);
  std::deque<std::shared_ptr<std::promise<v1::Response>>> waiters;
  {
    std::lock_guard io(io_mu_);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    rest_.clear();
    waiters.swap(inflight_);
    for (Outgoing& out : unsent_) waiters.push_back(std::move(out.reply));
    unsent_.clear();
  }
  for (auto& waiter : waiters) {
    waiter->set_value(
        control::ResponseOf(Status::Unavailable("the daemon went away")));
  }
}

Status ControlChannel::Open(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  Status connected;
  bool launched = false;
  while (!(connected = ConnectAndRegister()).ok()) {
    if (connected.code() != StatusCode::kUnavailable) return connected;
    if (!launched && launch_) {
      launched = true;
      if (Status s = launch_(); !s.ok()) {
        std::fprintf(stderr, "[tprobe] %s; training goes on without dumping\n",
                     s.message().c_str());
        break;
      }
    }
    if (!launched || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  thread_ = std::thread([this] { Run(); });
  return connected;
}

void ControlChannel::UpdateConfig(const v1::Config& config) {
  std::lock_guard lock(mu_);
  *registration_.mutable_config() = config;
}

void ControlChannel::AwaitReply(const Outgoing& out) {
  inflight_.push_back(out.reply);
}

bool ControlChannel::WriteQueued(std::deque<Outgoing>& batch,
                                 Clock::time_point deadline) {
  for (Outgoing& out : batch) unsent_.push_back(std::move(out));
  batch.clear();
  auto written = [](const control::FrameResult& r) {
    return r.ok() || r.error == control::FrameError::kTimeout;
  };
  if (!rest_.empty()) {
    size_t sent = 0;
    const control::FrameResult r =
        control::WriteFrameRest(fd_, rest_, &sent, deadline);
    rest_.erase(0, sent);
    if (!r.ok()) return written(r);
  }
  while (!unsent_.empty()) {
    const std::string frame = control::EncodeFrame(unsent_.front().request);
    size_t sent = 0;
    const control::FrameResult r =
        control::WriteFrameRest(fd_, frame, &sent, deadline);
    if (sent > 0) {
      // Its first bytes are out: the reply it awaits comes in this order.
      AwaitReply(unsent_.front());
      unsent_.pop_front();
      rest_ = frame.substr(sent);
    }
    if (!r.ok()) return written(r);
  }
  return true;
}

bool ControlChannel::Submit(Outgoing out) {
  std::lock_guard lock(mu_);
  if (stopping_) return false;
  // Written here only when nothing queued would be overtaken, the
  // background thread is not writing (it holds io_mu_ from taking a batch
  // until the batch is out) and the socket has room now. A forked child
  // shares its parent's socket and never writes to it.
  if (outgoing_.empty() && !InForkedChild()) {
    std::unique_lock io(io_mu_, std::try_to_lock);
    if (io.owns_lock() && fd_ >= 0 && rest_.empty() && unsent_.empty()) {
      std::string frame = control::EncodeFrame(out.request);
      const ssize_t n =
          ::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        // What the socket did not take is written next, by the background
        // thread: the caller never waits for the daemon.
        if (static_cast<size_t>(n) < frame.size()) {
          rest_ = frame.substr(static_cast<size_t>(n));
          cv_.notify_all();
        }
        AwaitReply(out);
        return true;
      }
    }
  }
  outgoing_.push_back(std::move(out));
  cv_.notify_all();
  return true;
}

bool ControlChannel::Call(v1::Request request, int timeout_ms,
                          v1::Response* reply) {
  if (!recorder_->connected()) return false;
  request.set_version(control::kProtocolVersion);
  auto promise = std::make_shared<std::promise<v1::Response>>();
  auto future = promise->get_future();
  if (!Submit({std::move(request), promise})) return false;
  if (future.wait_for(std::chrono::milliseconds(timeout_ms)) !=
      std::future_status::ready) {
    return false;
  }
  *reply = future.get();
  return control::IsOk(*reply);
}

void ControlChannel::Close() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  Disconnect();
  // Requests the thread had not written yet fail as the ones in flight.
  for (Outgoing& out : outgoing_) {
    out.reply->set_value(
        control::ResponseOf(Status::Unavailable("the channel closed")));
  }
  outgoing_.clear();
  // A forked child's counts are its parent's.
  if (!InForkedChild()) notice_.Close(recorder_->dropped_no_daemon());
}

void ControlChannel::Run() {
  for (;;) {
    // Whether records are being lost without a daemon: said on stderr.
    notice_.Poll(Clock::now(), recorder_->connected(),
                 [this] { return recorder_->dropped_no_daemon(); });
    std::deque<Outgoing> batch;
    // Held from taking the batch until it is written: no caller's write
    // overtakes it.
    std::unique_lock<std::mutex> io;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(20),
                   [&] { return stopping_ || !outgoing_.empty(); });
      if (stopping_) return;
      io = std::unique_lock(io_mu_);
      batch.swap(outgoing_);
    }
    if (fd_ < 0) {
      io.unlock();
      Reconnect(batch);
      continue;
    }
    // What the socket does not take within the slice waits for the next
    // pass, after the replies are read; a daemon that has left more than
    // kMaxUnsent requests unread is taken for hung, which bounds the queue.
    const bool written = WriteQueued(batch, Clock::now() + kWriteSlice) &&
                         unsent_.size() <= kMaxUnsent;
    io.unlock();
    if (!written) Disconnect(/*daemon_lost=*/true);
    ReadReplies();
  }
}

void ControlChannel::Reconnect(std::deque<Outgoing>& batch) {
  for (auto& out : batch) {
    out.reply->set_value(
        control::ResponseOf(Status::Unavailable("no daemon connected")));
  }
  if (InForkedChild() || Clock::now() < next_attempt_) return;
  if (ConnectAndRegister().ok()) {
    backoff_ = std::chrono::milliseconds(100);
  } else {
    next_attempt_ = Clock::now() + backoff_;
    backoff_ = std::min(backoff_ * 2, std::chrono::milliseconds(2000));
  }
}

void ControlChannel::ReadReplies() {
  while (fd_ >= 0 && Readable(fd_)) {
    v1::Response reply;
    if (!ReadFrame(fd_, &reply, Clock::now() + kReadBound)) {
      Disconnect(/*daemon_lost=*/true);
      return;
    }
    std::shared_ptr<std::promise<v1::Response>> waiter;
    {
      std::lock_guard lock(io_mu_);
      if (inflight_.empty()) continue;  // a reply to nothing asked: ignored
      waiter = std::move(inflight_.front());
      inflight_.pop_front();
    }
    waiter->set_value(reply);
  }
}

}  // namespace tprobe::client
