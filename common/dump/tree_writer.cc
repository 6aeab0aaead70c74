#include "common/dump/tree_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tprobe::dump {

std::string RankDirName(int rank) {
  return rank < 0 ? std::string("rank") : "rank" + std::to_string(rank);
}

std::string StepRankDir(const std::string& dump_path, uint32_t step, int rank) {
  return dump_path + "/step" + std::to_string(step) + "/" + RankDirName(rank);
}

Status MakeDirs(const std::string& dir) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0750) == 0) {
      ::chmod(path.c_str(), 0750);  // msprobe's mode, whatever the umask
    } else if (errno != EEXIST) {
      return Status::Error("cannot create directory " + path + ": " +
                           std::strerror(errno));
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Error(dir + " is not a directory");
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) {
    return Status::Error("cannot write " + tmp + ": " + std::strerror(errno));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s =
          Status::Error("cannot write " + tmp + ": " + std::strerror(errno));
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0640);
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s =
        Status::Error("cannot replace " + path + ": " + std::strerror(errno));
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::Ok();
}

Status WriteStepTree(const std::string& dir, const StepTree& tree) {
  if (Status s = MakeDirs(dir); !s.ok()) return s;
  const std::pair<const char*, Json> files[] = {
      {"dump.json", tree.DumpDocument()},
      {"stack.json", tree.StackDocument()},
      {"construct.json", tree.ConstructDocument()},
      {"tprobe.json", tree.AccountingDocument()},
  };
  for (const auto& [name, doc] : files) {
    Status s = WriteFileAtomic(dir + "/" + name, PythonJsonDumps(doc));
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace tprobe::dump
