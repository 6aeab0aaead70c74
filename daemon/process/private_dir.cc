#include "daemon/process/private_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tprobe::daemon {

Status MakePrivateDirs(const std::string& dir) {
  for (size_t pos = dir.find('/', 1);; pos = dir.find('/', pos + 1)) {
    const std::string prefix = dir.substr(0, pos);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0700) != 0 &&
        errno != EEXIST) {
      return Status::Error("cannot create directory " + prefix + ": " +
                           std::strerror(errno));
    }
    if (pos == std::string::npos) break;
  }
  // lstat: a symlink put in place of the directory is refused too.
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Error(dir + " is not a directory");
  }
  const std::string refuse = "refusing the socket directory " + dir + ": ";
  if (st.st_uid != ::geteuid()) {
    return Status::Error(refuse + "it belongs to uid " +
                         std::to_string(st.st_uid) +
                         ", not to this daemon's "
                         "uid " +
                         std::to_string(::geteuid()) +
                         " (someone else may have created it; remove it or "
                         "pass another --socket)");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    return Status::Error(refuse + "its mode " + std::string(mode) +
                         " lets other users write to it; run 'chmod 0700 " +
                         dir + "' or pass another --socket");
  }
  return Status::Ok();
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace tprobe::daemon
