#include "daemon/control/control_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>

#include "common/control/frame.h"
#include "common/control/response.h"
#include "common/control/socket_path.h"
#include "daemon/control/request_deadline.h"
#include "daemon/process/private_dir.h"

namespace tprobe::daemon {
namespace {

namespace asio = boost::asio;
using asio::local::stream_protocol;

// True when something accepts connections on the Unix socket `path`.
bool SomethingAnswers(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const bool answers =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return answers;
}

}  // namespace

ControlServer::ControlServer(asio::io_context& io, std::string socket_path,
                             ControlService& service, Logger log,
                             std::chrono::seconds idle_exit,
                             ConnectionPolicy policy)
    : io_(io),
      socket_path_(std::move(socket_path)),
      service_(service),
      log_(std::move(log)),
      idle_exit_(idle_exit),
      policy_(std::move(policy)),
      acceptor_(io),
      idle_timer_(io) {}

ControlServer::~ControlServer() { Close(); }

Status ControlServer::Listen() {
  const std::string& path = socket_path_;
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Status::Error("socket path " + path + " is " +
                         std::to_string(path.size()) +
                         " bytes; a Unix socket path holds at most " +
                         std::to_string(sizeof(sockaddr_un::sun_path) - 1));
  }
  if (Status s = MakePrivateDirs(DirName(path)); !s.ok()) return s;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return Status::Error(path +
                           " exists and is not a socket; refusing to replace "
                           "it (remove it or pass another --socket)");
    }
    if (SomethingAnswers(path)) {
      return Status::Error("another tprobed already answers on " + path +
                           "; stop it first or pass another --socket");
    }
    ::unlink(path.c_str());
    log_->info("removed the stale socket {}", path);
  }
  boost::system::error_code ec;
  acceptor_.open(stream_protocol(), ec);
  if (!ec) acceptor_.bind(stream_protocol::endpoint(path), ec);
  if (!ec) {
    if (Status s = policy_.access.ApplyTo(path); !s.ok()) {
      acceptor_.close();
      ::unlink(path.c_str());
      return s;
    }
  }
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor_.close();
    return Status::Error("cannot listen on " + path + ": " + ec.message());
  }
  if (::stat(path.c_str(), &st) == 0) socket_inode_ = st.st_ino;
  return Status::Ok();
}

void ControlServer::Run(std::function<void(std::string_view why)> on_stop) {
  on_stop_ = std::move(on_stop);
  ArmIdleTimer();
  asio::co_spawn(io_, Accept(), asio::detached);
}

void ControlServer::Close() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  idle_timer_.cancel();
  struct stat st;
  if (socket_inode_ != 0 && ::stat(socket_path_.c_str(), &st) == 0 &&
      st.st_ino == socket_inode_) {
    ::unlink(socket_path_.c_str());
  }
  socket_inode_ = 0;
}

asio::awaitable<void> ControlServer::Accept() {
  for (;;) {
    boost::system::error_code ec;
    Socket socket(io_);
    co_await acceptor_.async_accept(
        socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (ec) {
      // Out of file descriptors, most likely: back off instead of spinning.
      log_->error("accept on {} failed: {}", socket_path_, ec.message());
      asio::steady_timer pause(io_, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    asio::co_spawn(io_, Serve(std::move(socket)), asio::detached);
  }
}

std::string ControlServer::CheckPeer(Socket& socket, Connection& conn) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred,
                   &len) != 0) {
    log_->warn("closed a connection whose credentials cannot be read: {}",
               std::strerror(errno));
    return "tprobed cannot read this connection's credentials";
  }
  conn.peer = PeerCredentials{cred.uid, cred.gid, cred.pid};
  if (!policy_.access.Allows(cred.uid, cred.gid)) {
    log_->warn(
        "refused a connection from uid {} (pid {}): only {} may use "
        "this daemon",
        cred.uid, cred.pid, policy_.access.Describe());
    return "permission denied: tprobed on " + socket_path_ + " serves only " +
           policy_.access.Describe() + ", not uid " + std::to_string(cred.uid);
  }
  if (connections_ >= policy_.max_connections) {
    log_->warn(
        "refused a connection from pid {}: {} connections are open, "
        "the most this daemon serves",
        cred.pid, connections_);
    return "tprobed on " + socket_path_ + " is busy: it already serves " +
           std::to_string(connections_) +
           " connections, its limit (--max-connections); try again later";
  }
  return "";
}

// One connection's replies, written in request order by Write() while
// Serve() goes on reading. Slots are filled on the io thread.
struct ControlServer::Session {
  explicit Session(Socket s)
      : socket(std::move(s)), wake(socket.get_executor()) {
    wake.expires_at(std::chrono::steady_clock::time_point::max());
  }
  Socket socket;
  Connection conn;
  std::deque<std::shared_ptr<std::optional<v1::Response>>> replies;
  asio::steady_timer wake;  // cancelled to wake Write()
  // Cancelled by Write() when it wrote a reply, to wake a Serve() that
  // waits for room among the replies.
  std::optional<asio::steady_timer> room;
  bool reading = true;
};

asio::awaitable<bool> ControlServer::ReadRequest(Session& session,
                                                 RequestDeadline& deadline,
                                                 std::string* body) {
  const auto token = [](boost::system::error_code& ec) {
    return asio::redirect_error(asio::use_awaitable, ec);
  };
  boost::system::error_code ec;
  // At most max_pending_replies unwritten: the rest waits in the socket.
  while (session.replies.size() >= policy_.max_pending_replies) {
    session.room.emplace(session.socket.get_executor());
    session.room->expires_at(std::chrono::steady_clock::time_point::max());
    co_await session.room->async_wait(token(ec));
  }
  std::array<unsigned char, control::kFrameHeaderBytes> header;
  // A registered trainer may stay quiet for as long as it trains.
  if (!session.conn.producer) deadline.Arm();
  co_await asio::async_read(session.socket, asio::buffer(header), token(ec));
  if (ec) co_return false;  // hang-up
  const uint32_t size = control::FrameBodySize(header.data());
  if (size > policy_.max_request_bytes) {
    log_->warn(
        "closed the connection of pid {}: a frame of {} bytes exceeds the "
        "limit of {}",
        session.conn.peer.pid, size, policy_.max_request_bytes);
    co_return false;
  }
  // Read as the bytes arrive: the length alone allocates nothing.
  deadline.Arm();
  while (!ec && body->size() < size) {
    const size_t have = body->size();
    const size_t chunk = std::min<size_t>(size - have, 64 << 10);
    body->resize(have + chunk);
    co_await asio::async_read(
        session.socket, asio::buffer(body->data() + have, chunk), token(ec));
  }
  deadline.Disarm();
  if (ec && deadline.expired()) {
    log_->warn(
        "closed the connection of pid {}: no complete request within {} s",
        session.conn.peer.pid, policy_.request_timeout.count());
  }
  co_return !ec;
}

asio::awaitable<void> ControlServer::Serve(Socket socket) {
  auto session = std::make_shared<Session>(std::move(socket));
  const auto token = [](boost::system::error_code& ec) {
    return asio::redirect_error(asio::use_awaitable, ec);
  };
  if (std::string why = CheckPeer(session->socket, session->conn);
      !why.empty()) {
    const v1::Response refusal =
        control::ResponseOf(Status::PermissionDenied(why));
    boost::system::error_code ec;
    co_await asio::async_write(session->socket,
                               asio::buffer(control::EncodeFrame(refusal)),
                               token(ec));
    co_return;
  }
  ++connections_;
  idle_timer_.cancel();
  log_->debug("connection from pid {}", session->conn.peer.pid);
  asio::co_spawn(io_, Write(session), asio::detached);
  RequestDeadline deadline(session->socket, policy_.request_timeout);
  // Every request is read and queued, whatever happens to the replies: a
  // client that stopped reading and left still has its requests honoured
  // (its replies are dropped unwritten, which makes room).
  for (;;) {
    std::string body;
    if (!co_await ReadRequest(*session, deadline, &body)) break;
    auto slot = std::make_shared<std::optional<v1::Response>>();
    session->replies.push_back(slot);
    // Workers answer Flush and a waiting Stop: the slot is filled on this
    // thread.
    auto reply = [this, session, slot](v1::Response response) {
      asio::post(io_, [session, slot, response = std::move(response)] {
        *slot = std::move(response);
        session->wake.cancel();
      });
    };
    v1::Request request;
    if (request.ParseFromString(body)) {
      service_.Handle(session->conn, request, std::move(reply));
    } else {
      reply(control::ResponseOf(Status::InvalidArgument(
          "malformed request: the frame is not a tprobe.v1.Request")));
    }
  }
  session->reading = false;
  service_.HangUp(session->conn);
  session->wake.cancel();
}

asio::awaitable<bool> ControlServer::WriteReply(Session& session,
                                                const std::string& reply,
                                                int passed_fd) {
  boost::system::error_code ec;
  auto token = asio::redirect_error(asio::use_awaitable, ec);
  size_t sent = 0;
  while (passed_fd >= 0) {
    const ssize_t n = control::SendWithDescriptor(
        session.socket.native_handle(), reply.data(), reply.size(), passed_fd);
    if (n >= 0) {
      sent = static_cast<size_t>(n);
      break;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) co_return false;
    co_await session.socket.async_wait(Socket::wait_write, token);
    if (ec) co_return false;
  }
  if (sent < reply.size()) {
    co_await asio::async_write(
        session.socket, asio::buffer(reply.data() + sent, reply.size() - sent),
        token);
  }
  co_return !ec;
}

asio::awaitable<void> ControlServer::Write(std::shared_ptr<Session> session) {
  bool can_write = true;
  for (;;) {
    while (!session->replies.empty() && session->replies.front()->has_value()) {
      const v1::Response& response = **session->replies.front();
      const std::string reply = control::EncodeFrame(response);
      // A registered rank gets its segment with the reply that names it.
      const int segment_fd = control::IsOk(response) &&
                                     response.has_register_() &&
                                     session->conn.producer
                                 ? session->conn.producer->segment().fd()
                                 : -1;
      session->replies.pop_front();
      if (session->room) session->room->cancel();
      if (can_write) {
        // The client left: its requests still run.
        can_write = co_await WriteReply(*session, reply, segment_fd);
      }
      if (service_.AfterReply(session->conn)) Stop("a Shutdown request");
    }
    if (!session->reading && session->replies.empty()) break;
    boost::system::error_code ec;
    session->wake.expires_at(std::chrono::steady_clock::time_point::max());
    co_await session->wake.async_wait(
        asio::redirect_error(asio::use_awaitable, ec));
  }
  if (--connections_ == 0) ArmIdleTimer();
}

void ControlServer::ArmIdleTimer() {
  if (idle_exit_.count() == 0) return;
  idle_timer_.expires_after(idle_exit_);
  idle_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || connections_ != 0) return;
    Stop("no client for " + std::to_string(idle_exit_.count()) + " s");
  });
}

void ControlServer::Stop(std::string_view why) {
  log_->info("stopping: {}", why);
  if (on_stop_) on_stop_(why);
}

}  // namespace tprobe::daemon
