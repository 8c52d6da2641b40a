// Program validation (docs/isa.md, "Simulator"): the structural checks a program must pass
// before it is replayed: tiles, instruction ids, endpoints, dependency targets and stages,
// buffer capacity, SEND/LOAD matching and an acyclic dependency graph with in-order queues.
#pragma once

#include "codegen/instruction_program.h"
#include "hw/hardware.h"
#include "util/result.h"

#include <optional>
#include <string>

namespace tilescope {

// A structural check of the program against the hardware; the first problem found, as
// "<file>: instruction <id>: <reason>" (one line), or nullopt when the program is sound.
std::optional<Error> validateProgram(const Program& p, const Hardware& hw, const std::string& file);

} // namespace tilescope
