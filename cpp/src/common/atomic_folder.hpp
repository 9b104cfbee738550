#pragma once
// Writing a folder as a whole. Files go into a temporary sibling folder; commit() flushes them to disk and renames
// the folder into place (exchanging it with the old one, which is then removed), so a reader sees the old folder
// or the new one, never a mix, and a failed or interrupted write leaves the old folder as it was.
#include <string>

namespace relmem {

class AtomicFolder {
 public:
  // Refuses to replace an existing `folder` that is neither empty nor holds a manifest.json (not a saved memory):
  // committing would delete its other files.
  explicit AtomicFolder(const std::string& folder);
  ~AtomicFolder();  // removes the temporary folder unless committed
  AtomicFolder(const AtomicFolder&) = delete;
  AtomicFolder& operator=(const AtomicFolder&) = delete;

  const std::string& path() const { return temporary_; }  // where to write
  void commit();
  void discard();  // removes the temporary folder now

 private:
  std::string folder_;
  std::string temporary_;
  bool done_ = false;
};

// Checksums for files whose format has none of its own (JSON, MessagePack): FNV-1a 64 as 16 hex digits.
std::string content_checksum(const std::string& bytes);

}  // namespace relmem
