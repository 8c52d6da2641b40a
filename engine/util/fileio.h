// Whole-file reads and atomic writes (temporary file in the same folder, then rename),
// so no reader ever sees a half-written file.
#pragma once

#include "util/result.h"

#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

Result<std::string> readFile(const std::string& path);
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
