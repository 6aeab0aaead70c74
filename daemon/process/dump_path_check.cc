#include "daemon/process/dump_path_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>

#include "common/dump/tree_writer.h"
#include "daemon/process/fs_identity.h"

namespace tprobe::daemon {
namespace {

constexpr int kMaxSymlinks = 40;  // as the kernel's path walk

// `dump_path` as an absolute path: relative paths are relative to the
// working directory of `pid`.
Result<std::string> AbsoluteDumpPath(const std::string& dump_path, pid_t pid) {
  namespace fs = std::filesystem;
  if (fs::path(dump_path).is_absolute()) return dump_path;
  std::error_code ec;
  const fs::path cwd =
      fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec);
  if (ec) {
    return Status::Error("dump_path '" + dump_path +
                         "' is relative and the working directory of pid " +
                         std::to_string(pid) + " cannot be read (" +
                         ec.message() + "); use an absolute dump_path");
  }
  return (cwd / dump_path).lexically_normal().string();
}

std::string Refuse(const std::string& path, const std::string& why) {
  return "dump_path " + path + " cannot be used: " + why;
}

// Walks `path` as the kernel would, checking the owner of every symlink.
Status CheckSymlinks(const std::string& path, uid_t uid) {
  namespace stdfs = std::filesystem;
  std::deque<std::string> rest;
  for (const auto& part : stdfs::path(path).relative_path()) {
    rest.push_back(part.string());
  }
  std::string at = "/";
  int links = 0;
  while (!rest.empty()) {
    const std::string part = rest.front();
    rest.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      at = stdfs::path(at).parent_path().string();
      continue;
    }
    const std::string next = (at == "/" ? "" : at) + "/" + part;
    struct stat st;
    if (::lstat(next.c_str(), &st) != 0) {
      if (errno == ENOENT) return Status::Ok();  // created below
      return Status::Error(Refuse(path, next + ": " + std::strerror(errno)));
    }
    if (!S_ISLNK(st.st_mode)) {
      at = next;
      continue;
    }
    if (st.st_uid != uid && st.st_uid != 0 && st.st_uid != ::geteuid()) {
      return Status::Error(Refuse(
          path, "it passes through the symbolic link " + next +
                    ", which belongs to uid " + std::to_string(st.st_uid) +
                    ", not to you (uid " + std::to_string(uid) +
                    ") or root; a link another user controls could send the "
                    "dump anywhere"));
    }
    if (++links > kMaxSymlinks) {
      return Status::Error(Refuse(path, "too many levels of symbolic links"));
    }
    std::error_code ec;
    const stdfs::path target = stdfs::read_symlink(next, ec);
    if (ec) return Status::Error(Refuse(path, next + ": " + ec.message()));
    std::deque<std::string> spliced;
    for (const auto& p : target.relative_path()) spliced.push_back(p.string());
    rest.insert(rest.begin(), spliced.begin(), spliced.end());
    if (target.is_absolute()) at = "/";
  }
  return Status::Ok();
}

bool PeerMayWrite(const struct stat& st, uid_t uid, gid_t gid,
                  std::span<const gid_t> groups) {
  if (st.st_uid == uid) return (st.st_mode & S_IWUSR) != 0;
  if (st.st_gid == gid ||
      std::ranges::find(groups, st.st_gid) != groups.end()) {
    return (st.st_mode & S_IWGRP) != 0;
  }
  return (st.st_mode & S_IWOTH) != 0;
}

}  // namespace

Status PrepareDumpPath(const std::string& path, uid_t uid, gid_t gid,
                       std::span<const gid_t> groups) {
  if (Status s = CheckSymlinks(path, uid); !s.ok()) return s;
  if (Status s = dump::MakeDirs(path); !s.ok()) {
    return Status::Error(Refuse(path, s.message()));
  }
  const std::string probe =
      path + "/.tprobe-write-check." + std::to_string(::getpid());
  const int fd =
      ::open(probe.c_str(),
             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || ::write(fd, "x", 1) != 1) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
    }
    return Status::Error(Refuse(path, "it is not writable (" + why + ")"));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  struct stat st;
  if (::geteuid() == 0 && uid != 0 &&
      (::stat(path.c_str(), &st) != 0 || !PeerMayWrite(st, uid, gid, groups))) {
    return Status::Error(Refuse(path, "uid " + std::to_string(uid) +
                                          " may not write there, and a root "
                                          "tprobed writes only where its "
                                          "client could"));
  }
  return Status::Ok();
}

Result<std::string> ResolveDumpPath(const std::string& dump_path, pid_t pid,
                                    uid_t uid, gid_t gid,
                                    std::span<const gid_t> groups) {
  // A path is cut at its first NUL by every system call: the daemon would
  // write somewhere the client did not name.
  if (dump_path.find('\0') != std::string::npos) {
    return Status::Error(
        "dump_path contains a NUL byte, which no file path can hold");
  }
  auto path = AbsoluteDumpPath(dump_path, pid);
  if (!path.ok()) return path.status();
  // As the client's user: what is made is the user's, and only where the
  // user could make it.
  FsIdentity as_client(uid, gid, groups);
  if (!as_client.ok()) {
    return Status::Error("cannot take the identity of uid " +
                         std::to_string(uid) + " to write its dump");
  }
  if (Status s = PrepareDumpPath(*path, uid, gid, groups); !s.ok()) return s;
  return path;
}

}  // namespace tprobe::daemon
