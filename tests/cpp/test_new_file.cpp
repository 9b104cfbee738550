#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>
#include <string>

#include "../../cpp/src/common/new_file.hpp"
#include "relmem/common.hpp"
#include "test_util.hpp"

namespace {

size_t entries(const std::string& folder) {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(folder), {}));
}

TEST(NewFile, WritesThroughATemporaryOfItsOwnAndLeavesOtherFilesAlone) {
  relmem_test::TempDir dir;
  const std::string path = dir.file("aliases.json");
  relmem_test::write_bytes(path + ".tmp", "someone else's");  // the name a fixed temporary suffix would take
  relmem::write_file_atomically(path, "one", "test");
  relmem::write_file_atomically(path, "two", "test");
  EXPECT_EQ(relmem_test::read_bytes(path), "two");
  EXPECT_EQ(relmem_test::read_bytes(path + ".tmp"), "someone else's");
  EXPECT_EQ(entries(dir.path()), 2u);
}

TEST(NewFile, AFailedWriteLeavesNothingBehind) {
  relmem_test::TempDir dir;
  EXPECT_THROW(relmem::write_file_atomically(dir.file("missing/folder/file"), "x", "test"), relmem::Error);
  const std::string temporary = relmem::make_temporary_sibling(dir.file("kept"), "test");
  relmem_test::write_bytes(temporary, "half");
  std::filesystem::create_directory(dir.file("kept"));  // a folder where the file should go: the rename fails
  relmem_test::write_bytes(dir.file("kept") + "/inside", "x");
  EXPECT_THROW(relmem::move_into_place(temporary, dir.file("kept"), "test"), relmem::Error);
  EXPECT_FALSE(std::filesystem::exists(temporary));
  EXPECT_EQ(entries(dir.path()), 1u);
}

}  // namespace
