// Writes a generated program as the folder the test-chip tools read: program.json,
// program.bin, program.txt, ir.json and hw.json, replaced atomically as a whole.
#pragma once

#include "codegen/codegen.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "util/fileio.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

// (file name, writer) of every file of a program folder; the writers refer to r, net and hw.
std::vector<std::pair<std::string, StreamWriter>>
programFiles(const CodegenResult& r, const Network& net, const Hardware& hw);
// Validates the program (a failure is a generator bug, reported as such) and writes the
// folder atomically: dir ends up with the old complete folder or the new one.
std::optional<Error> exportProgram(const std::string& dir, const CodegenResult& r,
                                   const Network& net, const Hardware& hw);

} // namespace tilescope
