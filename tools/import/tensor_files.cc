#include "tools/import/tensor_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/dump/npy.h"
#include "common/dump/stats_json.h"
#include "common/fs/atomic_file.h"
#include "common/stats/crc32.h"
#include "common/stats/tensor_stats.h"
#include "tools/import/mindspore_dtype.h"

namespace tprobe::import {

using dump::Json;

Result<TensorFileSummary> SummarizeTensorFile(const std::string& path,
                                              std::string_view dtype) {
  Result<dump::NpyArray> array = dump::ReadNpy(path);
  if (!array.ok()) return array.status();
  TensorFileSummary summary;
  summary.tensor = Json::object();
  summary.tensor["type"] = "mindspore.Tensor";
  summary.tensor["dtype"] = MindSporeDTypeName(dtype);
  summary.tensor["shape"] = array->shape;
  dump::AppendStats(stats::ComputeStats(array->dtype, array->shape, array->data,
                                        stats::StatRules::kMindSpore),
                    &summary.tensor);
  summary.data_crc = stats::Crc32(array->data);
  return summary;
}

Result<bool> SameTensorData(const std::string& a, const std::string& b) {
  Result<dump::NpyArray> x = dump::ReadNpy(a);
  if (!x.ok()) return x.status();
  Result<dump::NpyArray> y = dump::ReadNpy(b);
  if (!y.ok()) return y.status();
  return x->dtype == y->dtype && x->shape == y->shape && x->data == y->data;
}

Status PlaceTensorFile(const std::string& src, const std::string& dst) {
  struct stat dst_st;
  if (::stat(dst.c_str(), &dst_st) != 0) {
    // A new name: a hard link appears whole, so it needs no temporary.
    if (::link(src.c_str(), dst.c_str()) == 0) return Status::Ok();
  } else {
    struct stat src_st;
    if (::stat(src.c_str(), &src_st) != 0) {
      return Status::Error(src + ": " + std::strerror(errno));
    }
    if (dst_st.st_dev == src_st.st_dev && dst_st.st_ino == src_st.st_ino) {
      return Status::Ok();  // placed by an earlier run
    }
  }

  // Replace `dst`, or copy where linking is not possible, through a
  // temporary name and a rename.
  const std::filesystem::path dst_path(dst);
  const std::string tmp =
      (dst_path.parent_path() / ("." + dst_path.filename().string() + ".tmp" +
                                 std::to_string(::getpid())))
          .string();
  return fs::ReplaceFile(dst, tmp, [&src](const std::string& temp) -> Status {
    if (::link(src.c_str(), temp.c_str()) == 0) return Status::Ok();
    const int link_error = errno;
    if (link_error != EXDEV && link_error != EPERM && link_error != EMLINK &&
        link_error != EOPNOTSUPP) {
      return Status::Error("cannot link " + src + " to " + temp + ": " +
                           std::strerror(link_error));
    }
    std::error_code ec;
    std::filesystem::copy_file(src, temp, ec);
    if (!ec) {
      std::filesystem::permissions(temp,
                                   std::filesystem::perms::owner_read |
                                       std::filesystem::perms::owner_write |
                                       std::filesystem::perms::group_read,
                                   ec);
    }
    if (ec) {
      return Status::Error("cannot copy " + src + " to " + temp + ": " +
                           ec.message());
    }
    return Status::Ok();
  });
}

}  // namespace tprobe::import
