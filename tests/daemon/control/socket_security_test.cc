// tprobed against a hostile neighbour, end to end with the real daemon, the
// real CLI and real sockets: socket folders and logs someone else prepared,
// other users, huge frames, idle and surplus connections, client-chosen
// names and symlinked dump paths, and what a crashed daemon left behind.
// Tests that need another user create a throwaway one when run as root and
// are skipped, saying so, otherwise.

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "common/control/frame.h"
#include "common/control/response.h"
#include "tests/daemon/raw_client.h"
#include "tests/daemon/ring_records.h"
#include "tests/daemon/test_rank.h"
#include "tests/support/daemon_process.h"
#include "tests/support/daemon_test.h"
#include "tests/support/sanitizers.h"

namespace tprobe {
namespace {

using testing::ConfigJson;
using testing::DaemonProcess;
using testing::MakeRegister;
using testing::RawClient;
using testing::ReadFile;
using testing::RunCommand;
using testing::WaitFor;
namespace stdfs = std::filesystem;

bool IsRoot() { return ::geteuid() == 0; }

// A user (and, with `group`, a member of that group) that exists for the
// test only. REQUIRES: root.
class ThrowawayUser {
 public:
  explicit ThrowawayUser(const std::string& group = "") {
    static std::atomic<int> n{0};
    name_ = "tpt" + std::to_string(::getpid()) + "u" + std::to_string(n++);
    std::string cmd = "useradd -M -N -s /usr/sbin/nologin ";
    if (!group.empty()) cmd += "-G " + group + " ";
    ok_ = RunCommand(cmd + name_, nullptr) == 0;
    std::string out;
    RunCommand("id -u " + name_, &out);
    uid_ = static_cast<uid_t>(std::atoi(out.c_str()));
    RunCommand("id -g " + name_, &out);
    gid_ = static_cast<gid_t>(std::atoi(out.c_str()));
  }
  ~ThrowawayUser() {
    if (ok_) RunCommand("userdel " + name_, nullptr);
  }
  bool ok() const { return ok_; }
  uid_t uid() const { return uid_; }
  gid_t gid() const { return gid_; }
  // `command` run through /bin/sh as this user.
  std::string Wrap(const std::string& command) const {
    return "setpriv --reuid=" + name_ + " --regid=" + std::to_string(gid_) +
           " --init-groups sh -c '" + command + "'";
  }

 private:
  std::string name_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  bool ok_ = false;
};

class ThrowawayGroup {
 public:
  ThrowawayGroup() {
    name_ = "tpt" + std::to_string(::getpid()) + "g";
    ok_ = RunCommand("groupadd " + name_, nullptr) == 0;
  }
  ~ThrowawayGroup() {
    if (ok_) RunCommand("groupdel " + name_, nullptr);
  }
  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  bool ok_ = false;
};

// Resident memory of `pid` in KiB.
long RssKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::atol(line.c_str() + 6);
  }
  return -1;
}

int ConnectRaw(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The daemon's answer to a Status on a fresh connection to `socket`, if it
// answered.
std::optional<v1::Response> StatusOf(const std::string& socket) {
  RawClient probe(socket);
  v1::Request status;
  status.mutable_status();
  v1::Response reply;
  if (!probe.Call(status, &reply)) return std::nullopt;
  return reply;
}

// True once the daemon closed `fd` (a read returns end of file or an error).
bool ClosedByPeer(int fd, std::chrono::milliseconds timeout) {
  return WaitFor(
      [fd] {
        char c;
        const ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT);
        return n == 0 || (n < 0 && errno != EAGAIN);
      },
      timeout);
}

class SocketSecurityTest : public testing::DaemonTest {
 protected:
  SocketSecurityTest() : DaemonTest("run/tprobed.sock") {}
  void SetUp() override {
    // Other users must be able to reach what lies under it.
    ::chmod(dir_.path().c_str(), 0755);
  }
  std::string Tprobe(const std::string& args) const {
    return std::string(TPROBE_BIN) + " " + args;
  }
};

TEST_F(SocketSecurityTest, ASocketDirectoryOthersCanWriteIsRefused) {
  const std::string run = dir_.path() + "/run";
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(run.c_str(), 0777), 0);
  std::string output;
  EXPECT_EQ(RunCommand(std::string(TPROBED_PATH) + " --foreground --socket " +
                           Socket(),
                       &output),
            1);
  EXPECT_NE(output.find("refusing the socket directory " + run +
                        ": its mode 0777 lets other users write to it"),
            std::string::npos)
      << output;
  EXPECT_FALSE(stdfs::exists(Socket()));
}

TEST_F(SocketSecurityTest, ASocketDirectoryOfAnotherUserIsRefused) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to make a folder of another user";
  const std::string run = dir_.path() + "/run";
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  ASSERT_EQ(::chown(run.c_str(), 65534, 65534), 0);
  std::string output;
  EXPECT_EQ(
      RunCommand(std::string(TPROBED_PATH) + " --socket " + Socket(), &output),
      1);
  EXPECT_NE(output.find("refusing the socket directory " + run +
                        ": it belongs to uid 65534"),
            std::string::npos)
      << output;
  EXPECT_FALSE(stdfs::exists(Socket()));
  EXPECT_FALSE(stdfs::exists(run + "/tprobed.log"));
}

TEST_F(SocketSecurityTest, TheLogIsNeverWrittenThroughASymlink) {
  const std::string run = dir_.path() + "/run";
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  const std::string victim = dir_.path() + "/victim";
  { std::ofstream(victim) << "precious\n"; }
  ASSERT_EQ(::symlink(victim.c_str(), (run + "/tprobed.log").c_str()), 0);
  std::string output;
  // Without --foreground tprobed detaches and opens its log.
  EXPECT_EQ(
      RunCommand(std::string(TPROBED_PATH) + " --socket " + Socket(), &output),
      1);
  EXPECT_NE(output.find("cannot open log file " + run +
                        "/tprobed.log: it is a symbolic link"),
            std::string::npos)
      << output;
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_FALSE(testing::SocketAnswers(Socket()));
}

TEST_F(SocketSecurityTest, RingsThatCannotFitInMemoryStopTheStart) {
  std::string output;
  // 4096 ranks of 4 x 8 MiB and 1 MiB: 132 GiB.
  EXPECT_EQ(
      RunCommand(std::string(TPROBED_PATH) +
                     " --foreground --expect-ranks 4096 --socket " + Socket(),
                 &output),
      1);
  EXPECT_NE(output.find("tprobed: --expect-ranks 4096: that many ranks with 4 "
                        "rings of 8 MiB each and a boundary ring of 1 MiB "
                        "need 135"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("MiB of shared memory, but "), std::string::npos)
      << output;
  EXPECT_NE(output.find(" MiB available; lower tprobe.ring_bytes"),
            std::string::npos)
      << output;
  EXPECT_FALSE(testing::SocketAnswers(Socket()));
}

TEST_F(SocketSecurityTest, AHugeLengthPrefixIsRefusedBeforeAnyAllocation) {
  DaemonProcess daemon(DaemonCommand(), Socket());
  ASSERT_TRUE(daemon.started());
  const long before = RssKiB(daemon.pid());
  ASSERT_GT(before, 0);
  // 4 GiB - 1 announced: the connection is closed at once.
  std::vector<int> fds;
  for (int i = 0; i < 10; ++i) {
    const int fd = ConnectRaw(Socket());
    ASSERT_GE(fd, 0);
    const unsigned char huge[4] = {0xff, 0xff, 0xff, 0xff};
    ASSERT_EQ(::send(fd, huge, 4, MSG_NOSIGNAL), 4);
    EXPECT_TRUE(ClosedByPeer(fd, std::chrono::seconds(10)));
    ::close(fd);
  }
  // 1 MiB announced (the limit) and never sent: nothing is allocated for it.
  for (int i = 0; i < 30; ++i) {
    const int fd = ConnectRaw(Socket());
    ASSERT_GE(fd, 0);
    const unsigned char mib[4] = {0x00, 0x00, 0x10, 0x00};
    ASSERT_EQ(::send(fd, mib, 4, MSG_NOSIGNAL), 4);
    fds.push_back(fd);
  }
  // The daemon has read every prefix once it answers a later request.
  const auto reply = StatusOf(Socket());
  ASSERT_TRUE(reply);
  EXPECT_TRUE(control::IsOk(*reply));
  const long after = RssKiB(daemon.pid());
  EXPECT_LT(after - before, 8 * 1024)
      << "30 announced 1 MiB frames grew the daemon from " << before
      << " KiB to " << after << " KiB";
  for (int fd : fds) ::close(fd);
}

TEST_F(SocketSecurityTest, ConnectionsBeyondTheCapAreRefusedWithAMessage) {
  DaemonProcess daemon(DaemonCommand({"--max-connections", "2"}), Socket());
  ASSERT_TRUE(daemon.started());
  RawClient a(Socket());
  RawClient b(Socket());
  v1::Request status;
  status.mutable_status();
  v1::Response reply;
  ASSERT_TRUE(a.Call(status, &reply));
  ASSERT_TRUE(b.Call(status, &reply));
  std::string output;
  EXPECT_EQ(RunCommand(Tprobe("status --socket " + Socket()), &output), 1);
  EXPECT_NE(output.find("tprobe status: tprobed: tprobed on " + Socket() +
                        " is busy: it already serves 2 connections"),
            std::string::npos)
      << output;
}

TEST_F(SocketSecurityTest, ASilentConnectionIsClosedAfterTheRequestTimeout) {
  DaemonProcess daemon(DaemonCommand({"--request-timeout", "1"}), Socket());
  ASSERT_TRUE(daemon.started());
  const int silent = ConnectRaw(Socket());
  ASSERT_GE(silent, 0);
  // Half a frame: the length, then nothing.
  const int stalled = ConnectRaw(Socket());
  const unsigned char len[4] = {16, 0, 0, 0};
  ASSERT_EQ(::send(stalled, len, 4, MSG_NOSIGNAL), 4);
  EXPECT_TRUE(ClosedByPeer(silent, std::chrono::seconds(20)));
  EXPECT_TRUE(ClosedByPeer(stalled, std::chrono::seconds(20)));
  ::close(silent);
  ::close(stalled);
  std::string output;
  EXPECT_EQ(RunCommand(Tprobe("status --socket " + Socket()), &output), 0)
      << output;
}

TEST_F(SocketSecurityTest, TheCliGivesUpOnASilentListenerAfterItsTimeout) {
  const std::string run = dir_.path() + "/run";
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  // Listens and never answers: connect succeeds through the backlog.
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, Socket().c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr),
            0);
  ASSERT_EQ(::listen(listener, 4), 0);
  std::string output;
  EXPECT_EQ(
      RunCommand(Tprobe("status --timeout 0.5 --socket " + Socket()), &output),
      1);
  EXPECT_NE(
      output.find("tprobed on " + Socket() + " did not answer within 0.5 s"),
      std::string::npos)
      << output;
  EXPECT_EQ(
      RunCommand(Tprobe("flush --timeout 0 --socket " + Socket()), &output), 2);
  EXPECT_NE(output.find("bad --timeout '0'"), std::string::npos) << output;
  ::close(listener);
}

TEST_F(SocketSecurityTest, GroupMembersAreServedAndOtherUsersRefused) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to create throwaway users";
  ThrowawayGroup group;
  ASSERT_TRUE(group.ok());
  ThrowawayUser member(group.name());
  ThrowawayUser outsider;
  ASSERT_TRUE(member.ok() && outsider.ok());
  DaemonProcess daemon(DaemonCommand({"--group", group.name()}), Socket());
  ASSERT_TRUE(daemon.started());
  struct stat st;
  ASSERT_EQ(::stat(Socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  ASSERT_EQ(::stat((dir_.path() + "/run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u);

  std::string output;
  EXPECT_EQ(
      RunCommand(member.Wrap(Tprobe("status --socket " + Socket())), &output),
      0)
      << output;
  // Open the folder and the socket to everyone, as a careless operator
  // might: SO_PEERCRED still refuses the outsider.
  ::chmod((dir_.path() + "/run").c_str(), 0755);
  ::chmod(Socket().c_str(), 0666);
  EXPECT_EQ(
      RunCommand(outsider.Wrap(Tprobe("status --socket " + Socket())), &output),
      1);
  EXPECT_NE(output.find("permission denied: tprobed on " + Socket() +
                        " serves only uid 0, root and members of group '" +
                        group.name() + "', not uid " +
                        std::to_string(outsider.uid())),
            std::string::npos)
      << output;
}

// A root daemon shared with a throwaway group, and a throwaway member of
// it, as on a node where tprobed runs under systemd with --group.
class SharedDaemonTest : public SocketSecurityTest {
 protected:
  void SetUp() override {
    SocketSecurityTest::SetUp();
    if (!IsRoot()) GTEST_SKIP() << "needs root to create throwaway users";
    group_.emplace();
    ASSERT_TRUE(group_->ok());
    member_.emplace(group_->name());
    ASSERT_TRUE(member_->ok());
    daemon_.emplace(DaemonCommand({"--group", group_->name()}), Socket());
    ASSERT_TRUE(daemon_->started());
  }
  void TearDown() override {
    daemon_.reset();  // before the user and group go
    member_.reset();
    group_.reset();
  }

  // Runs tprobe-example as the member with `config` for `steps` steps;
  // returns its exit status, with what it printed in *output.
  int RunExampleAsMember(const std::string& config, int steps,
                         std::string* output) const {
    return RunCommand(member_->Wrap(std::string(EXAMPLE_PATH) + " --config " +
                                    config + " --socket " + Socket() +
                                    " --steps " + std::to_string(steps)),
                      output);
  }

  // Waits until the daemon serves no rank any more and `file` (the last
  // step's) exists; false after 30 s.
  bool WaitUntilWritten(const std::string& file) const {
    return WaitFor(
        [&] {
          const auto reply = StatusOf(Socket());
          return reply && reply->status().ranks_size() == 0 &&
                 stdfs::exists(file);
        },
        std::chrono::seconds(30));
  }

  std::optional<ThrowawayGroup> group_;
  std::optional<ThrowawayUser> member_;
};

// A group member's CLI on a root daemon: it sees and controls its own rank
// only, and cannot shut the daemon down for everyone.
TEST_F(SharedDaemonTest, AGroupMemberReachesOnlyItsOwnRanksAndCannotShutDown) {
  const ThrowawayGroup& group = *group_;
  const ThrowawayUser& member = *member_;

  // Rank 0 is root's; rank 1 the member's, registered by a process of that
  // user which waits for `go`.
  RawClient root_rank(Socket());
  std::string error;
  auto root_segment = root_rank.Register(
      MakeRegister(ConfigJson(dir_.path() + "/root-dump"), 1, 0), &error);
  ASSERT_NE(root_segment, nullptr) << error;
  const std::string member_dump = dir_.path() + "/member-dump";
  ASSERT_EQ(::mkdir(member_dump.c_str(), 0700), 0);
  ASSERT_EQ(::chown(member_dump.c_str(), member.uid(), member.gid()), 0);
  int ready[2], go[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(go), 0);
  const v1::Register member_reg = MakeRegister(ConfigJson(member_dump), 1, 1);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    ::close(go[1]);
    // The daemon's group is the member's only supplementary group.
    const ::group* g = ::getgrnam(group.name().c_str());
    const gid_t groups[1] = {g ? g->gr_gid : member.gid()};
    if (::setgroups(1, groups) != 0 || ::setgid(member.gid()) != 0 ||
        ::setuid(member.uid()) != 0) {
      ::_exit(2);
    }
    v1::Register reg = member_reg;
    reg.set_pid(::getpid());
    reg.set_start_time(shm::ProcessStartTime(::getpid()));
    RawClient client(Socket());
    std::string why;
    const char registered = client.Register(reg, &why) ? 'y' : 'n';
    (void)!::write(ready[1], &registered, 1);
    char c;
    (void)!::read(go[0], &c, 1);
    ::_exit(0);
  }
  ::close(ready[1]);
  ::close(go[0]);
  char registered = 0;
  ASSERT_EQ(::read(ready[0], &registered, 1), 1);
  ASSERT_EQ(registered, 'y');

  std::string output;
  EXPECT_EQ(
      RunCommand(member.Wrap(Tprobe("status --json --socket " + Socket())),
                 &output),
      0)
      << output;
  EXPECT_NE(output.find("\"rank\": 1"), std::string::npos) << output;
  EXPECT_EQ(output.find("\"rank\": 0"), std::string::npos)
      << "root's rank is visible to the member: " << output;
  EXPECT_EQ(
      RunCommand(member.Wrap(Tprobe("stop --ranks 0 --socket " + Socket())),
                 &output),
      3)
      << output;
  EXPECT_NE(output.find("no registered rank matches --ranks 0"),
            std::string::npos)
      << output;
  EXPECT_EQ(
      RunCommand(member.Wrap(Tprobe("stop --socket " + Socket())), &output), 0)
      << output;
  EXPECT_EQ(
      RunCommand(member.Wrap(Tprobe("shutdown --socket " + Socket())), &output),
      1)
      << output;
  EXPECT_NE(output.find("permission denied: only root and uid " +
                        std::to_string(::geteuid()) +
                        " (the daemon's user) may shut down tprobed"),
            std::string::npos)
      << output;

  // The daemon still serves both ranks; root sees them all.
  const auto reply = StatusOf(Socket());
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status().ranks_size(), 2);
  EXPECT_EQ(::write(go[1], "x", 1), 1);
  int wstatus = 0;
  ::waitpid(child, &wstatus, 0);
  ::close(ready[0]);
  ::close(go[1]);
  EXPECT_EQ(RunCommand(Tprobe("shutdown --socket " + Socket()), &output), 0)
      << output;
}

// A client that sends requests and never reads the replies: the daemon
// stops reading it once max_pending_replies are unwritten, so its memory
// stays bounded, and it serves everyone else.
TEST_F(SocketSecurityTest, RepliesNobodyReadsAreBounded) {
  DaemonProcess daemon(DaemonCommand(), Socket());
  ASSERT_TRUE(daemon.started());
  const long before = RssKiB(daemon.pid());
  ASSERT_GT(before, 0);
  const int fd = ConnectRaw(Socket());
  ASSERT_GE(fd, 0);
  v1::Request status;
  status.set_version(control::kProtocolVersion);
  status.mutable_status();
  const std::string one = control::EncodeFrame(status);
  std::string batch;
  constexpr int kPerSend = 1000;
  for (int i = 0; i < kPerSend; ++i) batch += one;
  // Without the bound the daemon takes all of them (300k requests held it
  // at +46 MB); with it, its socket fills and stays full.
  constexpr int kRequests = 300000;
  int sent = 0;
  size_t offset = 0;
  auto last_progress = std::chrono::steady_clock::now();
  while (sent < kRequests && std::chrono::steady_clock::now() - last_progress <
                                 std::chrono::seconds(2)) {
    const ssize_t n = ::send(fd, batch.data() + offset, batch.size() - offset,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      offset += static_cast<size_t>(n);
      if (offset == batch.size()) {
        offset = 0;
        sent += kPerSend;
      }
      last_progress = std::chrono::steady_clock::now();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  EXPECT_LT(sent, kRequests) << "the daemon read every request";
  const auto reply = StatusOf(Socket());
  ASSERT_TRUE(reply);
  EXPECT_TRUE(control::IsOk(*reply));
  // ASan keeps freed memory in its quarantine, so there RSS grows with
  // every request handled, bounded or not: the count above says it.
  if (!testing::kAddressSanitizer) {
    const long after = RssKiB(daemon.pid());
    EXPECT_LT(after - before, 16 * 1024)
        << sent << " unread Status requests grew the daemon from " << before
        << " KiB to " << after << " KiB";
  }
  ::close(fd);
  // Once it hangs up, the replies go and the daemon exits cleanly.
  EXPECT_EQ(daemon.Terminate(), 0);
}

// Every file of a rank is made as the rank's user, so the kernel checks each
// path as that user: the user owns and can delete its dump, a symlink it
// planted in its dump path cannot lead root's writes into a root-only
// folder, and a dump_path the user could not create is refused with nothing
// created.
TEST_F(SharedDaemonTest, ARootDaemonWritesOnlyAsTheUser) {
  const ThrowawayUser& member = *member_;

  // A root-only folder with a secret, which must not change.
  const std::string secret_dir = dir_.path() + "/rootonly";
  ASSERT_EQ(::mkdir(secret_dir.c_str(), 0700), 0);
  std::ofstream(secret_dir + "/secret") << "root's";
  // The member's folder; in its dump path, a step folder it made a link to
  // the root-only one.
  const std::string home = dir_.path() + "/member";
  const std::string dump = home + "/dump";
  ASSERT_EQ(::mkdir(home.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(dump.c_str(), 0750), 0);
  ASSERT_EQ(::symlink(secret_dir.c_str(), (dump + "/step1").c_str()), 0);
  // In step 2's rank folder, links to the secret where the daemon writes
  // dump.json and the journal.
  const std::string rank2 = dump + "/step2/rank";
  ASSERT_TRUE(stdfs::create_directories(rank2));
  for (const char* name : {"/dump.json", "/tprobe.journal"}) {
    ASSERT_EQ(
        ::symlink((secret_dir + "/secret").c_str(), (rank2 + name).c_str()), 0);
  }
  for (const std::string& p :
       {home, dump, dump + "/step1", dump + "/step2", rank2,
        rank2 + "/dump.json", rank2 + "/tprobe.journal"}) {
    ASSERT_EQ(::lchown(p.c_str(), member.uid(), member.gid()), 0) << p;
  }
  auto config = [&](const std::string& name, const std::string& path) {
    const std::string file = home + "/" + name;
    std::ofstream(file) << R"({"task": "statistics", "level": "L0", )"
                        << R"("step": [], "dump_path": ")" << path << "\"}";
    EXPECT_EQ(::chown(file.c_str(), member.uid(), member.gid()), 0);
    return file;
  };
  std::string output;
  EXPECT_EQ(RunExampleAsMember(config("c.json", dump), 3, &output), 0)
      << output;
  ASSERT_TRUE(WaitUntilWritten(dump + "/step2/rank/tprobe.json"));

  // The secret folder is as it was: step 1 was not written through the
  // link.
  std::vector<std::string> secret_files;
  for (const auto& e : stdfs::directory_iterator(secret_dir)) {
    secret_files.push_back(e.path().filename());
  }
  EXPECT_EQ(secret_files, std::vector<std::string>{"secret"});
  EXPECT_EQ(ReadFile(secret_dir + "/secret"), "root's");
  // Everything else in the dump is the member's.
  int files = 0;
  for (auto it = stdfs::recursive_directory_iterator(dump);
       it != stdfs::recursive_directory_iterator(); ++it) {
    struct stat st;
    ASSERT_EQ(::lstat(it->path().c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, member.uid()) << it->path();
    ++files;
  }
  EXPECT_GT(files, 8);
  EXPECT_TRUE(stdfs::exists(dump + "/step0/rank/dump.json"));
  // The planted dump.json link was replaced, not followed.
  EXPECT_TRUE(
      stdfs::is_regular_file(stdfs::symlink_status(rank2 + "/dump.json")));
  // The member can delete its dump.
  EXPECT_EQ(RunCommand(member.Wrap("rm -rf " + dump), &output), 0) << output;
  EXPECT_FALSE(stdfs::exists(dump));

  // A dump_path the member could not create: refused, nothing made.
  RunExampleAsMember(config("bad.json", secret_dir + "/made/by/root"), 1,
                     &output);
  EXPECT_NE(output.find("cannot be used"), std::string::npos) << output;
  EXPECT_FALSE(stdfs::exists(secret_dir + "/made"));
}

// A dump path the member may write only as a member of the daemon's group
// (one of its supplementary groups): a root daemon writes there as the
// member with that group, and the files are the member's.
TEST_F(SharedDaemonTest, ADumpPathWritableThroughASupplementaryGroupWorks) {
  const ThrowawayUser& member = *member_;
  struct group* g = ::getgrnam(group_->name().c_str());
  ASSERT_NE(g, nullptr);
  const gid_t shared_gid = g->gr_gid;
  ASSERT_NE(shared_gid, member.gid())
      << "the group must be a supplementary one";
  const std::string shared = dir_.path() + "/shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0770), 0);
  ASSERT_EQ(::chown(shared.c_str(), 0, shared_gid), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0770), 0);
  const std::string config = dir_.path() + "/group.json";
  std::ofstream(config) << R"({"task": "statistics", "level": "L0", )"
                        << R"("step": [], "dump_path": ")" << shared
                        << "/dump\"}";
  ASSERT_EQ(::chmod(config.c_str(), 0644), 0);
  std::string output;
  EXPECT_EQ(RunExampleAsMember(config, 2, &output), 0) << output;
  ASSERT_TRUE(WaitUntilWritten(shared + "/dump/step1/rank/tprobe.json"))
      << output;
  struct stat st;
  ASSERT_EQ(::stat((shared + "/dump/step1/rank/dump.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, member.uid());
}

TEST_F(SocketSecurityTest, ClientsSendNothingToADaemonOfAnotherUser) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to create a throwaway user";
  ThrowawayUser other;
  ASSERT_TRUE(other.ok());
  const std::string run = dir_.path() + "/run";
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  ASSERT_EQ(::chown(run.c_str(), other.uid(), other.gid()), 0);
  DaemonProcess daemon(
      {"setpriv", "--reuid=" + std::to_string(other.uid()),
       "--regid=" + std::to_string(other.gid()), "--clear-groups", TPROBED_PATH,
       "--socket", Socket(), "--foreground", "--log-level", "warn"},
      Socket());
  ASSERT_TRUE(daemon.started());
  ::chmod(Socket().c_str(), 0666);  // reachable, as a planted socket is
  std::string output;
  EXPECT_EQ(RunCommand(Tprobe("status --socket " + Socket()), &output), 1);
  EXPECT_NE(output.find("refusing the daemon on " + Socket() +
                        ": it runs as uid " + std::to_string(other.uid())),
            std::string::npos)
      << output;
  EXPECT_EQ(RunCommand("TPROBE_DAEMON_UID=" + std::to_string(other.uid()) +
                           " " + Tprobe("status --socket " + Socket()),
                       &output),
            0)
      << output;
  EXPECT_NE(output.find(": 0 ranks"), std::string::npos) << output;
}

// Registration fails with `fragment` in the daemon's answer.
void ExpectRefused(const std::string& socket, const std::string& dump_path,
                   const std::string& fragment) {
  RawClient client(socket);
  std::string error;
  auto segment = client.Register(MakeRegister(ConfigJson(dump_path)), &error);
  EXPECT_EQ(segment, nullptr);
  EXPECT_NE(error.find(fragment), std::string::npos) << error;
}

TEST_F(SocketSecurityTest, AnUnusableDumpPathIsRefusedAtRegistration) {
  DaemonProcess daemon(DaemonCommand(), Socket());
  ASSERT_TRUE(daemon.started());
  const std::string file = dir_.path() + "/a-file";
  { std::ofstream(file) << "x"; }
  ExpectRefused(Socket(), file + "/dump",
                "dump_path " + file + "/dump cannot be used: " + file +
                    "/dump: Not a directory");
  const std::string ro = dir_.path() + "/ro";
  ASSERT_EQ(::mkdir(ro.c_str(), 0755), 0);
  if (IsRoot()) {
    if (RunCommand("mount -t tmpfs -o ro,size=1m tmpfs " + ro, nullptr) != 0) {
      GTEST_SKIP() << "root, but cannot mount a read-only tmpfs here";
    }
  } else {
    ASSERT_EQ(::chmod(ro.c_str(), 0555), 0);
  }
  ExpectRefused(Socket(), ro,
                "dump_path " + ro +
                    " cannot be used: it is "
                    "not writable");
  if (IsRoot()) RunCommand("umount " + ro, nullptr);
}

TEST_F(SocketSecurityTest, ADumpPathWithANulIsRefusedAndCreatesNothing) {
  DaemonProcess daemon(DaemonCommand(), Socket());
  ASSERT_TRUE(daemon.started());
  // The JSON escape reaches the daemon as a NUL inside the string.
  ExpectRefused(Socket(), dir_.path() + "/cut\\u0000/dump",
                "dump_path contains a NUL byte");
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/cut"));
}

TEST_F(SocketSecurityTest, ADumpPathThroughAnotherUsersSymlinkIsRefused) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to own a symlink as another user";
  DaemonProcess daemon(DaemonCommand(), Socket());
  ASSERT_TRUE(daemon.started());
  const std::string real = dir_.path() + "/real";
  const std::string link = dir_.path() + "/link";
  ASSERT_EQ(::mkdir(real.c_str(), 0755), 0);
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  ExpectRefused(Socket(), link + "/dump",
                "it passes through the symbolic link " + link +
                    ", which belongs to uid 65534");
  EXPECT_FALSE(stdfs::exists(real + "/dump"));
  // The same link owned by the client is fine.
  ASSERT_EQ(::lchown(link.c_str(), 0, 0), 0);
  RawClient client(Socket());
  std::string error;
  EXPECT_NE(client.Register(MakeRegister(ConfigJson(link + "/dump")), &error),
            nullptr)
      << error;
}

TEST_F(SocketSecurityTest, ANameWithSlashesAndDotsStaysInsideItsRankFolder) {
  DaemonProcess daemon(DaemonCommand(), Socket());
  ASSERT_TRUE(daemon.started());
  const std::string dump = dir_.path() + "/dump";
  // The folder the name would climb into exists, as in the report.
  ASSERT_EQ(::mkdir((dir_.path() + "/escape").c_str(), 0755), 0);
  RawClient client(Socket());
  v1::Register reg = MakeRegister(ConfigJson(dump, "tensor", "L0"));
  std::string error;
  auto segment = client.Register(reg, &error);
  ASSERT_NE(segment, nullptr) << error;
  testing::RecordWriter w(segment->ring_header(0), segment->ring_data(0));
  const std::string name = "Module.x/../../../../escape/evil.Conv2d.forward.0";
  ASSERT_TRUE(w.Intern(1, record::InternKind::kName, name));
  const std::vector<float> values = {1, 2, 3, 4};
  ASSERT_TRUE(w.Tensor(1, DType::kFloat32, {4}, false, sizeof(float) * 4));
  ASSERT_TRUE(w.Chunk(1, 0, values.data(), sizeof(float) * 4));
  ASSERT_TRUE(w.Entry(
      1, 0, 1, 0,
      testing::MakeEntry({{"input_args", testing::List({})},
                          {"output", testing::List({testing::Ref(1)})}})));
  v1::Response reply;
  ASSERT_TRUE(w.Boundary(testing::StepRequest(0)));
  v1::Request flush;  // waits for the step's files
  flush.mutable_flush();
  ASSERT_TRUE(client.Call(flush, &reply));
  ASSERT_TRUE(control::IsOk(reply)) << reply.error();
  // Every file the daemon wrote lies under step0/rank0.
  std::vector<std::string> files;
  for (const auto& e : stdfs::recursive_directory_iterator(dir_.path())) {
    if (!e.is_regular_file()) continue;
    const std::string p = e.path().string();
    if (p.starts_with(dir_.path() + "/run/")) continue;
    files.push_back(p);
    EXPECT_TRUE(p.starts_with(dump + "/step0/rank0/")) << p;
  }
  const std::string safe =
      "Module.x_.._.._.._.._escape_evil.Conv2d.forward.0.output.0.npy";
  EXPECT_TRUE(stdfs::exists(dump + "/step0/rank0/dump_tensor_data/" + safe))
      << ::testing::PrintToString(files);
  EXPECT_NE(ReadFile(dump + "/step0/rank0/dump.json")
                .find("\"data_name\": \"" + safe + "\""),
            std::string::npos);
  EXPECT_TRUE(stdfs::is_empty(dir_.path() + "/escape"));
}

TEST_F(SocketSecurityTest, ARestartedDaemonRemovesWhatACrashedOneLeft) {
  const std::string dump = dir_.path() + "/dump";
  pid_t crashed = 0;
  {
    DaemonProcess first(DaemonCommand(), Socket());
    ASSERT_TRUE(first.started());
    crashed = first.pid();
    RawClient client(Socket());
    std::string error;
    auto segment = client.Register(MakeRegister(ConfigJson(dump)), &error);
    ASSERT_NE(segment, nullptr) << error;
    ::kill(first.pid(), SIGKILL);
    first.Terminate();  // reaps it
    // Its segment is a memory file with no name: nothing of it is left in
    // /dev/shm, and the client's mapping stays valid.
    EXPECT_FALSE(stdfs::exists("/dev/shm/" + segment->name()));
    segment->header()->producer_step = 7;
  }
  DaemonProcess second(DaemonCommand(), Socket());
  ASSERT_TRUE(second.started());
  // A half-written file of the crashed daemon, and one of a running daemon
  // (the new one stands in for another daemon on the machine).
  const std::string rank_dir = dump + "/step3/rank0";
  stdfs::create_directories(rank_dir + "/dump_tensor_data");
  const std::string stale =
      rank_dir + "/dump_tensor_data/x.npy.tmp" + std::to_string(crashed);
  const std::string live =
      rank_dir + "/dump.json.tmp" + std::to_string(second.pid());
  { std::ofstream(stale) << "{"; }
  { std::ofstream(live) << "{"; }
  RawClient client(Socket());
  std::string error;
  ASSERT_NE(client.Register(MakeRegister(ConfigJson(dump)), &error), nullptr)
      << error;
  EXPECT_FALSE(stdfs::exists(stale));
  EXPECT_TRUE(stdfs::exists(live)) << "its daemon is running";
}

}  // namespace
}  // namespace tprobe
