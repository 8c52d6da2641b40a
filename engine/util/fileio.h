// Whole-file reads and atomic writes (temporary file in the same folder, then rename),
// so no reader ever sees a half-written file.
#pragma once

#include "util/result.h"

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope {

Result<std::string> readFile(const std::string& path);
// A file mapped read-only into memory (the OS pages it in as it is read; nothing is copied
// to the heap): for large inputs such as program.bin. Empty files map to an empty view.
class MappedFile {
  public:
    static Result<MappedFile> open(const std::string& path);
    MappedFile(MappedFile&& o) noexcept;
    MappedFile& operator=(MappedFile&&) = delete;
    MappedFile(const MappedFile&) = delete;
    ~MappedFile();
    std::string_view view() const { return {static_cast<const char*>(m_data), m_size}; }

  private:
    MappedFile(void* data, std::size_t size) : m_data(data), m_size(size) {}
    void* m_data = nullptr;
    std::size_t m_size = 0;
};
// Writes to "<path>.tmp-XXXX" then renames over path. On failure path is untouched.
std::optional<Error> writeFileAtomic(const std::string& path, const std::string& contents);
// The same with the contents streamed by `write` (a large output never sits in memory whole).
using StreamWriter = std::function<void(std::ostream&)>;
std::optional<Error> writeFileAtomic(const std::string& path, const StreamWriter& write);
// Writes the files (name, contents) into a fresh sibling folder, then swaps it into place,
// so dir holds either the old complete set or the new one, never a mix.
std::optional<Error> writeDirAtomic(const std::string& dir,
                                    const std::vector<std::pair<std::string, std::string>>& files);
// The same with each file streamed by its writer (large outputs never sit in memory whole).
std::optional<Error> writeDirAtomic(const std::string& dir,
                                    const std::vector<std::pair<std::string, StreamWriter>>& files);
std::string sha256Hex(const std::string& data);
Result<std::string> sha256File(const std::string& path);

} // namespace tilescope
