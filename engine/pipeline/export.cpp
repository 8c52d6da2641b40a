#include "pipeline/export.h"

#include "sim/simulator.h"
#include "util/fileio.h"

#include <ostream>

namespace tilescope {

std::vector<std::pair<std::string, StreamWriter>>
programFiles(const CodegenResult& r, const Network& net, const Hardware& hw) {
    return {
        {"program.json", [&](std::ostream& o) { writeProgramJson(o, r.program); }},
        {"program.bin", [&](std::ostream& o) { writeProgramBin(o, r.program); }},
        {"program.txt", [&](std::ostream& o) { writeProgramText(o, r.program); }},
        {"ir.json", [&](std::ostream& o) { writeIrJson(o, r, net); }},
        {"hw.json", [&](std::ostream& o) { o << hardwareToJson(hw).dump(2) << "\n"; }},
    };
}

std::optional<Error> exportProgram(const std::string& dir, const CodegenResult& r,
                                   const Network& net, const Hardware& hw) {
    if (auto err = validateProgram(r.program, hw, dir + "/program.json"))
        return Error{"generated program failed validation (a bug): " + err->message};
    return writeDirAtomic(dir, programFiles(r, net, hw));
}

} // namespace tilescope
