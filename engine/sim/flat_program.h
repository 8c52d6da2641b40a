// A program's instructions in one flat array with an id -> position index: what the
// validation and the replay both walk (programs run to millions of instructions).
#pragma once

#include "codegen/idindex.h"
#include "codegen/instruction_program.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tilescope {

struct FlatProgram {
    std::vector<const Instruction*> ins; // all instructions, tile by tile in program order
    IdIndex index;                       // id -> position in ins
};

// Sizes `index` for the program's instruction ids.
inline void prepareIndex(const Program& p, IdIndex& index) {
    size_t count = 0;
    std::uint32_t maxId = 0;
    for (const auto& t : p.tiles) {
        count += t.instructions.size();
        for (const auto& i : t.instructions)
            maxId = std::max(maxId, i.id);
    }
    index.prepare(count, maxId);
}

// The program's instructions flattened; a duplicate id keeps its first position (only a
// validated program is replayed, and validation rejects duplicates).
inline FlatProgram flatten(const Program& p) {
    FlatProgram f;
    prepareIndex(p, f.index);
    for (const auto& t : p.tiles)
        for (const auto& i : t.instructions) {
            f.index.emplace(i.id, f.ins.size());
            f.ins.push_back(&i);
        }
    return f;
}

} // namespace tilescope
