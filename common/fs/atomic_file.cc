#include "common/fs/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tprobe::fs {
namespace {

std::string SystemError(int e) { return std::strerror(e); }

}  // namespace

std::string TempPath(const std::string& path, std::string_view marker) {
  return path + std::string(marker) + std::to_string(::getpid());
}

Status ReplaceFile(const std::string& path, const std::string& tmp,
                   const std::function<Status(const std::string&)>& make) {
  ::unlink(tmp.c_str());
  if (Status s = make(tmp); !s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return Status::Error("cannot rename " + tmp + " over " + path + ": " +
                         SystemError(e));
  }
  return Status::Ok();
}

Result<int> CreateFile(const std::string& tmp) {
  const int fd = ::open(
      tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd < 0) {
    return Status::Error("cannot create " + tmp + ": " + SystemError(errno));
  }
  ::fchmod(fd, 0640);
  return fd;
}

Status WriteFileAtomic(const std::string& path, std::string_view bytes) {
  return ReplaceFile(path, TempPath(path), [bytes](const std::string& tmp) {
    auto fd = CreateFile(tmp);
    if (!fd.ok()) return fd.status();
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(*fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = n < 0 ? errno : EIO;
        ::close(*fd);
        return Status::Error("cannot write " + tmp + ": " + SystemError(e));
      }
      done += static_cast<size_t>(n);
    }
    if (::close(*fd) != 0) {
      return Status::Error("cannot write " + tmp + ": " + SystemError(errno));
    }
    return Status::Ok();
  });
}

}  // namespace tprobe::fs
