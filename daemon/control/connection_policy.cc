#include "daemon/control/connection_policy.h"

#include <grp.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include "daemon/process/private_dir.h"

namespace tprobe::daemon {
namespace {

// Files the daemon keeps open besides control connections: the log, the
// acceptor, segments being created, tree files being written.
constexpr int kReservedFiles = 64;

bool InSupplementaryGroups(uid_t uid, gid_t group) {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || !found) {
    return false;
  }
  int count = 64;
  std::vector<gid_t> groups(count);
  if (::getgrouplist(found->pw_name, found->pw_gid, groups.data(), &count) <
      0) {
    groups.resize(count);
    if (::getgrouplist(found->pw_name, found->pw_gid, groups.data(), &count) <
        0) {
      return false;
    }
  }
  groups.resize(count);
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

}  // namespace

AccessPolicy::AccessPolicy() : owner_(::geteuid()) {}

Result<AccessPolicy> AccessPolicy::ForGroup(const std::string& name) {
  AccessPolicy policy;
  struct group buf_group {};
  struct group* found = nullptr;
  std::vector<char> buf(16384);
  gid_t gid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), gid);
  if (ec == std::errc() && end == name.data() + name.size()) {
    ::getgrgid_r(gid, &buf_group, buf.data(), buf.size(), &found);
  } else {
    ::getgrnam_r(name.c_str(), &buf_group, buf.data(), buf.size(), &found);
  }
  if (found == nullptr) {
    return Status::Error("--group " + name + ": no such group on this system");
  }
  policy.group_ = found->gr_gid;
  policy.group_name_ = found->gr_name;
  return policy;
}

bool AccessPolicy::Allows(uid_t uid, gid_t gid) const {
  if (uid == owner_ || uid == 0) return true;
  if (!group_) return false;
  return gid == *group_ || InSupplementaryGroups(uid, *group_);
}

std::string AccessPolicy::Describe() const {
  std::string text = "uid " + std::to_string(owner_);
  if (!group_) return text + " and root";
  return text + ", root and members of group '" + group_name_ + "'";
}

Status AccessPolicy::ApplyTo(const std::string& socket_path) const {
  const std::string dir = DirName(socket_path);
  const mode_t socket_mode = group_ ? 0660 : 0600;
  const mode_t dir_mode = group_ ? 0750 : 0700;
  if (group_) {
    if (::chown(socket_path.c_str(), static_cast<uid_t>(-1), *group_) != 0 ||
        ::chown(dir.c_str(), static_cast<uid_t>(-1), *group_) != 0) {
      return Status::Error("cannot give " + socket_path + " to group '" +
                           group_name_ + "': " + std::strerror(errno) +
                           " (the daemon's user must be a member of it)");
    }
  }
  if (::chmod(socket_path.c_str(), socket_mode) != 0 ||
      ::chmod(dir.c_str(), dir_mode) != 0) {
    return Status::Error("cannot set the mode of " + socket_path + ": " +
                         std::strerror(errno));
  }
  return Status::Ok();
}

Result<ConnectionPolicy> MakeConnectionPolicy(const std::string& group,
                                              int max_connections,
                                              std::chrono::seconds timeout) {
  ConnectionPolicy policy;
  if (!group.empty()) {
    auto access = AccessPolicy::ForGroup(group);
    if (!access.ok()) return access.status();
    policy.access = std::move(access).value();
  }
  policy.max_connections = ConnectionsThatFit(max_connections);
  policy.request_timeout = timeout;
  return policy;
}

int ConnectionsThatFit(int wanted) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return std::max(1, wanted);
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  const rlim_t usable = limit.rlim_cur > static_cast<rlim_t>(kReservedFiles)
                            ? limit.rlim_cur - kReservedFiles
                            : 1;
  return static_cast<int>(std::max<rlim_t>(
      1, std::min<rlim_t>(usable, static_cast<rlim_t>(std::max(1, wanted)))));
}

}  // namespace tprobe::daemon
