#include "daemon/output/tensor_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <vector>

#include "common/dump/npy.h"
#include "common/stats/crc32.h"
#include "tests/support/daemon_process.h"

namespace tprobe::daemon {
namespace {

using testing::TempDir;

std::vector<std::byte> Floats(std::initializer_list<float> values) {
  std::vector<std::byte> out(values.size() * sizeof(float));
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

class TensorStoreTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const {
    return dir_.path() + "/data/" + name;
  }
  struct stat Stat(const std::string& name) const {
    struct stat st {};
    EXPECT_EQ(::stat(Path(name).c_str(), &st), 0) << name;
    return st;
  }
  Status Put(TensorStore& store, const std::string& name, DType dtype,
             std::vector<int64_t> shape, const std::vector<std::byte>& bytes) {
    return store.Put(name, dtype, shape, bytes, stats::Crc32(bytes));
  }
  std::vector<std::byte> Data(const std::string& name) const {
    auto npy = dump::ReadNpy(Path(name));
    EXPECT_TRUE(npy.ok()) << npy.status().message();
    return npy.ok() ? npy->data : std::vector<std::byte>{};
  }

  TempDir dir_;
};

TEST_F(TensorStoreTest, IdenticalPayloadsAreStoredOnceAsHardLinks) {
  TensorStore store(dir_.path() + "/data");
  const auto bytes = Floats({1.0f, -2.0f, 3.5f});
  ASSERT_TRUE(
      Put(store, "A.forward.input.0.npy", DType::kFloat32, {3}, bytes).ok());
  ASSERT_TRUE(
      Put(store, "A.forward.output.0.npy", DType::kFloat32, {3}, bytes).ok());
  ASSERT_TRUE(
      Put(store, "B.forward.input.0.npy", DType::kFloat32, {3}, bytes).ok());
  EXPECT_EQ(store.files_written(), 1u);
  EXPECT_EQ(store.files_linked(), 2u);
  const struct stat a = Stat("A.forward.input.0.npy");
  EXPECT_EQ(a.st_nlink, 3u);
  EXPECT_EQ(Stat("A.forward.output.0.npy").st_ino, a.st_ino);
  EXPECT_EQ(Stat("B.forward.input.0.npy").st_ino, a.st_ino);
  EXPECT_EQ(Data("B.forward.input.0.npy"), bytes);
}

TEST_F(TensorStoreTest, PayloadsThatDifferInShapeOrDtypeAreNotShared) {
  TensorStore store(dir_.path() + "/data");
  const auto bytes = Floats({1.0f, 2.0f, 3.0f, 4.0f});
  ASSERT_TRUE(Put(store, "a.npy", DType::kFloat32, {4}, bytes).ok());
  ASSERT_TRUE(Put(store, "b.npy", DType::kFloat32, {2, 2}, bytes).ok());
  ASSERT_TRUE(Put(store, "c.npy", DType::kInt32, {4}, bytes).ok());
  EXPECT_EQ(store.files_written(), 3u);
  EXPECT_NE(Stat("a.npy").st_ino, Stat("b.npy").st_ino);
  EXPECT_NE(Stat("a.npy").st_ino, Stat("c.npy").st_ino);
}

TEST_F(TensorStoreTest, AChecksumCollisionIsCaughtByComparingTheBytes) {
  TensorStore store(dir_.path() + "/data");
  const auto first = Floats({1.0f, 2.0f});
  const auto second = Floats({1.0f, 2.5f});
  // Same size, dtype, shape and (as if colliding) the same CRC.
  ASSERT_TRUE(
      store.Put("a.npy", DType::kFloat32, std::vector<int64_t>{2}, first, 7)
          .ok());
  ASSERT_TRUE(
      store.Put("b.npy", DType::kFloat32, std::vector<int64_t>{2}, second, 7)
          .ok());
  EXPECT_EQ(store.files_linked(), 0u);
  EXPECT_EQ(Data("a.npy"), first);
  EXPECT_EQ(Data("b.npy"), second);
}

TEST_F(TensorStoreTest, Bfloat16PayloadsAreComparedThroughTheirUpcast) {
  TensorStore store(dir_.path() + "/data");
  // bf16 1.0, -2.0, 0.5: the upper halves of the float32 values.
  const std::vector<std::byte> bf16 = {std::byte{0x80}, std::byte{0x3f},
                                       std::byte{0x00}, std::byte{0xc0},
                                       std::byte{0x00}, std::byte{0x3f}};
  ASSERT_TRUE(Put(store, "a.npy", DType::kBFloat16, {3}, bf16).ok());
  ASSERT_TRUE(Put(store, "b.npy", DType::kBFloat16, {3}, bf16).ok());
  EXPECT_EQ(store.files_linked(), 1u);
  EXPECT_EQ(Data("b.npy"), Floats({1.0f, -2.0f, 0.5f}));
}

TEST_F(TensorStoreTest, ReplacingANameLeavesTheNamesItSharedWithIntact) {
  TensorStore store(dir_.path() + "/data");
  const auto first = Floats({1.0f});
  const auto second = Floats({2.0f});
  ASSERT_TRUE(Put(store, "x.npy", DType::kFloat32, {1}, first).ok());
  ASSERT_TRUE(Put(store, "y.npy", DType::kFloat32, {1}, first).ok());
  ASSERT_TRUE(Put(store, "x.npy", DType::kFloat32, {1}, second).ok());
  EXPECT_EQ(Data("x.npy"), second);
  EXPECT_EQ(Data("y.npy"), first);
  // "x" no longer holds the first payload; "y" still does.
  ASSERT_TRUE(Put(store, "z.npy", DType::kFloat32, {1}, first).ok());
  EXPECT_EQ(Stat("z.npy").st_ino, Stat("y.npy").st_ino);
  EXPECT_EQ(Data("z.npy"), first);
}

TEST_F(TensorStoreTest, StoringTheSamePayloadUnderTheSameNameAgainIsANoOp) {
  TensorStore store(dir_.path() + "/data");
  const auto bytes = Floats({3.0f});
  ASSERT_TRUE(Put(store, "x.npy", DType::kFloat32, {1}, bytes).ok());
  const ino_t ino = Stat("x.npy").st_ino;
  ASSERT_TRUE(Put(store, "x.npy", DType::kFloat32, {1}, bytes).ok());
  EXPECT_EQ(Stat("x.npy").st_ino, ino);
  EXPECT_EQ(store.files_written(), 1u);
}

TEST_F(TensorStoreTest, AnUncreatableDirectoryIsAnErrorNamingIt) {
  testing::RunCommand("touch " + dir_.path() + "/file", nullptr);
  TensorStore store(dir_.path() + "/file/data");
  Status s = Put(store, "x.npy", DType::kFloat32, {1}, Floats({1.0f}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir_.path() + "/file"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace tprobe::daemon
