// The shared writer and reader of relmem's checksummed binary files: the exact bytes written, round trips, and a
// clear relmem::Error naming the file for every kind of damage.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <iterator>

#include "../../cpp/src/common/checksummed_file.hpp"
#include "test_util.hpp"

using namespace relmem;

namespace {

constexpr ChecksummedFormat kByteFormat{"test", "RMTS", 1, 2, /*checksum_word_size=*/1};
constexpr ChecksummedFormat kWordFormat{"test", "RMTS", 1, 2, /*checksum_word_size=*/8};

std::string with_checksum(std::string bytes, uint64_t checksum) {
  return bytes.append(reinterpret_cast<const char*>(&checksum), sizeof checksum);
}

// "RMTS" | u32 version 2 | "abc" and its checksum.
const std::string kPayload = std::string("RMTS\x02\x00\x00\x00", 8) + "abc";
const std::string kByteFile = with_checksum(kPayload, 0xc6fafb8968957ff9ULL);
const std::string kWordFile = with_checksum(kPayload, 0xa15409f39b2630bcULL);  // two words, "abc" zero-padded

void write_file(const ChecksummedFormat& format, const std::string& path, const std::string& payload) {
  ChecksummedFileWriter file(format, path);
  file.write(payload.data(), payload.size());
  file.commit();
}

std::string read_payload(const ChecksummedFormat& format, const std::string& path, size_t size) {
  ChecksummedFileReader file(format, path);
  std::string payload(size, '\0');
  file.read(payload.data(), size);
  file.finish();
  return payload;
}

void expect_error(const std::function<void()>& action, const std::string& fragment) {
  try {
    action();
    FAIL() << "expected relmem::Error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// Opening a file holding `bytes` fails with a message containing `fragment`.
void expect_open_error(const ChecksummedFormat& format, const std::string& path, const std::string& bytes,
                       const std::string& fragment) {
  relmem_test::write_bytes(path, bytes);
  expect_error([&] { ChecksummedFileReader(format, path); }, fragment);
}

}  // namespace

TEST(ChecksummedFile, WritesMagicVersionPayloadAndChecksum) {
  relmem_test::TempDir dir;
  write_file(kByteFormat, dir.file("byte"), "abc");
  write_file(kWordFormat, dir.file("word"), "abc");
  EXPECT_EQ(relmem_test::read_bytes(dir.file("byte")), kByteFile);
  EXPECT_EQ(relmem_test::read_bytes(dir.file("word")), kWordFile);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 2);  // no temporary left
}

TEST(ChecksummedFile, RoundTripsValuesArraysAndOlderVersions) {
  relmem_test::TempDir dir;
  const std::string path = dir.file("values");
  const std::vector<float> floats(300000, 0.5f);  // spans more than one of the reader's checksum chunks
  for (const ChecksummedFormat& format : {kByteFormat, kWordFormat}) {
    {
      ChecksummedFileWriter file(format, path);
      file.write_values(int64_t{-7}, static_cast<uint64_t>(floats.size()));
      file.write(floats.data(), floats.size() * sizeof(float));
      file.commit();
    }
    ChecksummedFileReader file(format, path);
    EXPECT_EQ(file.version(), 2u);
    EXPECT_EQ(file.read_value<int64_t>(), -7);
    EXPECT_EQ(file.read_array<float>(file.read_value<uint64_t>()), floats);
    file.finish();
  }
  relmem_test::write_bytes(path, with_checksum(std::string("RMTS\x01\x00\x00\x00", 8), 0xdf43d5ba26895984ULL));
  EXPECT_EQ(ChecksummedFileReader(kByteFormat, path).version(), 1u);
}

TEST(ChecksummedFile, MissingOrUnwritableFilesAreClearErrors) {
  relmem_test::TempDir dir;
  expect_error([&] { ChecksummedFileReader(kByteFormat, dir.file("missing")); },
               "cannot open test file " + dir.file("missing"));
  expect_error([&] { ChecksummedFileWriter(kByteFormat, dir.file("no/such/folder")); },
               "cannot write test file " + dir.file("no/such/folder"));
}

TEST(ChecksummedFile, ForeignFilesAndOtherVersionsAreRefused) {
  relmem_test::TempDir dir;
  const std::string path = dir.file("f");
  auto expect_load_error = [&](const std::string& bytes, const std::string& fragment) {
    expect_open_error(kByteFormat, path, bytes, fragment);
  };
  expect_load_error("", path + " is not a relmem test file (bad magic)");
  expect_load_error("RMT", "bad magic");
  expect_load_error("XXXX" + kByteFile.substr(4), "bad magic");
  std::string newer = kByteFile;
  newer[4] = 3;
  expect_load_error(newer, "test file " + path + " has format version 3; this relmem reads versions 1 to 2");
  newer[4] = 0;
  expect_load_error(newer, "has format version 0");
}

TEST(ChecksummedFile, DamageIsReportedBeforeAnyFieldIsRead) {
  relmem_test::TempDir dir;
  const std::string path = dir.file("d");
  auto expect_load_error = [&](const std::string& bytes, const std::string& fragment) {
    expect_open_error(kWordFormat, path, bytes, fragment);
  };
  expect_load_error(kWordFile.substr(0, 6), "test file " + path + " is truncated");
  expect_load_error(kWordFile.substr(0, 12), "is truncated");  // no room for a checksum
  expect_load_error(kWordFile.substr(0, kWordFile.size() - 1), "is corrupt (checksum mismatch)");
  for (size_t at : {size_t{9}, kWordFile.size() - 1}) {  // a payload byte, a checksum byte
    std::string flipped = kWordFile;
    flipped[at] ^= 0x20;
    expect_load_error(flipped, "test file " + path + " is corrupt (checksum mismatch)");
  }
}

TEST(ChecksummedFile, ReadingPastOrShortOfThePayloadIsAClearError) {
  relmem_test::TempDir dir;
  const std::string path = dir.file("p");
  relmem_test::write_bytes(path, kByteFile);
  EXPECT_EQ(read_payload(kByteFormat, path, 3), "abc");
  expect_error([&] { read_payload(kByteFormat, path, 4); }, "test file " + path + " is truncated");
  expect_error([&] { read_payload(kByteFormat, path, 2); }, "test file " + path + " has trailing bytes");
  expect_error([&] { ChecksummedFileReader(kByteFormat, path).read_array<float>(uint64_t{1} << 62); }, "is truncated");
}

TEST(ChecksummedFile, AnUnfinishedWriteLeavesThePreviousFile) {
  relmem_test::TempDir dir;
  const std::string path = dir.file("kept");
  write_file(kByteFormat, path, "abc");
  try {
    ChecksummedFileWriter file(kByteFormat, path);
    file.write("xyz", 3);
    throw std::runtime_error("serialization failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(relmem_test::read_bytes(path), kByteFile);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);  // the temporary is gone
}
