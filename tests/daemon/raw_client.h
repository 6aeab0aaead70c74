#ifndef TPROBE_TESTS_DAEMON_RAW_CLIENT_H_
#define TPROBE_TESTS_DAEMON_RAW_CLIENT_H_

// A control connection to a real tprobed, written here from the protocol
// (control.proto) rather than with the client library, for end-to-end
// tests of the daemon, and the requests it sends (Register with a config,
// Step, Goodbye).

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "common/config/config_proto.h"
#include "common/control/response.h"
#include "common/control/socket_path.h"
#include "common/shm/segment.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::testing {

using Clock = std::chrono::steady_clock;

// Waits for `condition` until `timeout`; polls every millisecond.
template <typename F>
inline bool WaitFor(F condition, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return condition();
}

// A raw control connection: frames are a 4-byte little-endian length, then
// the serialized message.
class RawClient {
 public:
  explicit RawClient(const std::string& socket) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket.c_str(), sizeof addr.sun_path - 1);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
    if (passed_fd_ >= 0) ::close(passed_fd_);
  }
  bool connected() const { return fd_ >= 0; }
  // Hangs up.
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Sends `request` (with the protocol version unless `version` says
  // otherwise) and waits up to 10 s for the response.
  bool Call(v1::Request request, v1::Response* response,
            uint32_t version = control::kProtocolVersion) {
    request.set_version(version);
    const std::string body = request.SerializeAsString();
    std::string frame(4, '\0');
    for (int i = 0; i < 4; ++i) {
      frame[i] = static_cast<char>((body.size() >> (8 * i)) & 0xff);
    }
    frame += body;
    if (::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(frame.size())) {
      return false;
    }
    unsigned char len[4];
    if (!Read(len, 4)) return false;
    std::string reply(len[0] | len[1] << 8 | len[2] << 16 | len[3] << 24, '\0');
    return Read(reply.data(), reply.size()) && response->ParseFromString(reply);
  }

  // Registers and opens the segment the daemon created.
  std::unique_ptr<shm::Segment> Register(const v1::Register& reg,
                                         std::string* error) {
    v1::Request req;
    *req.mutable_register_() = reg;
    v1::Response resp;
    if (!Call(req, &resp) || !control::IsOk(resp)) {
      *error = "register failed: " + resp.error();
      return nullptr;
    }
    if (passed_fd_ < 0) {
      *error = "the Register reply carried no segment";
      return nullptr;
    }
    auto segment = shm::Segment::Open(std::exchange(passed_fd_, -1),
                                      resp.register_().segment_name());
    if (!segment.ok()) {
      *error = segment.status().message();
      return nullptr;
    }
    return std::move(segment).value();
  }

 private:
  bool Read(void* out, size_t size) {
    auto* p = static_cast<char*>(out);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (size > 0) {
      pollfd pfd{fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - Clock::now());
      if (left.count() <= 0 || ::poll(&pfd, 1, left.count()) <= 0) {
        return false;
      }
      // A reply may carry a descriptor (the Register reply: its segment).
      iovec iov{p, size};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      ssize_t n = ::recvmsg(fd_, &msg, MSG_CMSG_CLOEXEC);
      if (n <= 0) return false;
      if (cmsghdr* c = CMSG_FIRSTHDR(&msg);
          c != nullptr && c->cmsg_type == SCM_RIGHTS) {
        int passed;
        std::memcpy(&passed, CMSG_DATA(c), sizeof passed);
        if (passed_fd_ >= 0) ::close(passed_fd_);
        passed_fd_ = passed;
      }
      p += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  int fd_ = -1;
  int passed_fd_ = -1;  // the last descriptor a reply carried
};

// A config.json with `dump_path`; `task_section` is added as the section of
// the task when not empty (for example R"({"summary_mode": "md5"})").
inline std::string ConfigJson(const std::string& dump_path,
                              const std::string& task = "statistics",
                              const std::string& level = "mix",
                              const std::string& task_section = "") {
  std::string json = R"({"task": ")" + task + R"(", "dump_path": ")" +
                     dump_path + R"(", "level": ")" + level + R"(")";
  if (!task_section.empty()) json += ", \"" + task + "\": " + task_section;
  return json + "}";
}

// A Register for this process, with the config `config_json` parses to
// (as the client sends it).
inline v1::Register MakeRegister(const std::string& config_json,
                                 uint32_t ring_count = 1, int rank = 0) {
  v1::Register reg;
  reg.set_pid(::getpid());
  reg.set_start_time(shm::ProcessStartTime(::getpid()));
  reg.set_rank(rank);
  auto config = config::ParseConfig(config_json);
  EXPECT_TRUE(config.ok()) << config.status().message();
  if (config.ok()) *reg.mutable_config() = config::ToProto(*config);
  reg.set_ring_count(ring_count);
  reg.set_ring_bytes(uint64_t{1} << 16);
  reg.set_framework("pytorch");
  return reg;
}

inline v1::Request StepRequest(uint32_t step) {
  v1::Request r;
  r.mutable_step()->set_step(step);
  return r;
}

inline v1::Request GoodbyeRequest() {
  v1::Request r;
  r.mutable_goodbye();
  return r;
}

}  // namespace tprobe::testing

#endif  // TPROBE_TESTS_DAEMON_RAW_CLIENT_H_
