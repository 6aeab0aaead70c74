#include "daemon/output/tensor_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/dump/npy.h"
#include "common/dump/tree_writer.h"
#include "common/fs/atomic_file.h"
#include "common/fs/safe_path.h"

namespace tprobe::daemon {
namespace {

// True when the array read back from a file holds exactly `bytes` of
// `dtype` (a bfloat16 tensor as its float32 upcast: each element's two
// bytes become the upper half of a float32 whose lower half is zero).
bool SameData(const dump::NpyArray& file, DType dtype,
              std::span<const std::byte> bytes) {
  if (dtype != DType::kBFloat16) {
    return file.dtype == dtype && file.data.size() == bytes.size() &&
           std::equal(bytes.begin(), bytes.end(), file.data.begin());
  }
  if (file.dtype != DType::kFloat32 || file.data.size() != 2 * bytes.size()) {
    return false;
  }
  for (size_t i = 0; i < bytes.size(); i += 2) {
    const std::byte* f = file.data.data() + 2 * i;
    if (f[0] != std::byte{0} || f[1] != std::byte{0} || f[2] != bytes[i] ||
        f[3] != bytes[i + 1]) {
      return false;
    }
  }
  return true;
}

}  // namespace

TensorStore::TensorStore(std::string dir) : dir_(std::move(dir)) {}

Status TensorStore::Put(const std::string& file_name, DType dtype,
                        std::span<const int64_t> shape,
                        std::span<const std::byte> bytes, uint32_t crc) {
  if (!fs::IsSafeComponent(file_name)) {
    return Status::Error("refusing the tensor file name '" + file_name +
                         "': it is not a single component of " + dir_);
  }
  if (!dir_made_) {
    if (Status s = dump::MakeDirs(dir_); !s.ok()) return s;
    dir_made_ = true;
  }
  const Key key{crc, bytes.size(), dtype,
                std::vector<int64_t>(shape.begin(), shape.end())};
  if (auto it = stored_.find(key); it != stored_.end()) {
    // The newest name first: it is the least likely to have been replaced.
    for (auto name = it->second.rbegin(); name != it->second.rend(); ++name) {
      if (*name == file_name) {
        // Already stored under this very name; check it still holds this.
        auto read = dump::ReadNpy(dir_ + "/" + file_name);
        if (read.ok() && SameData(*read, dtype, bytes)) return Status::Ok();
        continue;
      }
      if (LinkIfSame(*name, file_name, dtype, bytes)) {
        ++files_linked_;
        Remember(key, file_name);
        return Status::Ok();
      }
    }
  }
  Status s = dump::WriteNpy(dir_ + "/" + file_name, dtype, shape, bytes);
  if (!s.ok()) return s;
  ++files_written_;
  Remember(key, file_name);
  return Status::Ok();
}

bool TensorStore::LinkIfSame(const std::string& source,
                             const std::string& file_name, DType dtype,
                             std::span<const std::byte> bytes) {
  const std::string from = dir_ + "/" + source;
  auto read = dump::ReadNpy(from);
  if (!read.ok() || !SameData(*read, dtype, bytes)) return false;
  const std::string to = dir_ + "/" + file_name;
  return fs::ReplaceFile(to, fs::TempPath(to, ".link"),
                         [&from](const std::string& tmp) {
                           return ::link(from.c_str(), tmp.c_str()) == 0
                                      ? Status::Ok()
                                      : Status::Error("no link");
                         })
      .ok();
}

void TensorStore::Remember(const Key& key, const std::string& file_name) {
  // A name replaced with another payload no longer holds its old one.
  if (auto old = key_of_.find(file_name); old != key_of_.end()) {
    if (old->second == key) return;
    auto& names = stored_[old->second];
    std::erase(names, file_name);
    if (names.empty()) stored_.erase(old->second);
    old->second = key;
  } else {
    key_of_.emplace(file_name, key);
  }
  stored_[key].push_back(file_name);
}

}  // namespace tprobe::daemon
