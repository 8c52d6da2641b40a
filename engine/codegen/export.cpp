#include "codegen/export.h"

#include "sim/simulator.h"
#include "util/fileio.h"

namespace tilescope {

std::vector<std::pair<std::string, std::string>> programFiles(const CodegenResult& r,
                                                              const Network& net,
                                                              const Hardware& hw) {
    return {
        {"program.json", programToJson(r.program).dump(1) + "\n"},
        {"program.bin", encodeProgram(r.program)},
        {"program.txt", programToText(r.program)},
        {"ir.json", irToJson(r, net).dump(1) + "\n"},
        {"hw.json", hardwareToJson(hw) + "\n"},
    };
}

std::optional<Error> exportProgram(const std::string& dir, const CodegenResult& r,
                                   const Network& net, const Hardware& hw) {
    if (auto err = validateProgram(r.program, hw, dir + "/program.json"))
        return Error{"generated program failed validation (a bug): " + err->message};
    return writeDirAtomic(dir, programFiles(r, net, hw));
}

} // namespace tilescope
