// Hardware for the model-agreement matrix (tst_fidelity, bench_codegen): a preset name, or
// a mesh "XxY" with the defaults for its size, optionally followed by variants:
// "+fastlinks" (96 B/cycle links), "+slowdram" (a quarter of the DRAM bandwidth), "+4sides"
// (DRAM ports on all four sides), "+onechip" (no chiplets: the same mesh as one chip),
// "+runs" (a DRAM run model: 64-byte bursts, 20 cycles a run; docs/cost-model.md §4b),
// "+weightsfirst" / "+inputsfirst" (tile.load_order; docs/isa.md, "Load orders"),
// "+stageN" (tile.stage_bytes = N: an instruction of B bytes in ceil(B / N) stages; docs/isa.md,
// "Stage granularity"), "+split" (tile.channel_split: input-channel parts; docs/cost-model.md
// §2d).
#pragma once

#include "hw/hardware.h"

#include <cstdio>
#include <string>

namespace tilescope::test {

inline bool hardwareVariant(const std::string& spec, Hardware& hw) {
    const auto plus = spec.find('+');
    const std::string base = spec.substr(0, plus);
    if (!presetHardware(base, hw)) {
        int x = 0, y = 0;
        if (std::sscanf(base.c_str(), "%dx%d", &x, &y) != 2 || x < 1 || y < 1) return false;
        hw = defaultHardware(x, y, base);
    }
    for (auto p = plus; p != std::string::npos;) {
        const auto q = spec.find('+', p + 1);
        const std::string v =
            spec.substr(p + 1, q == std::string::npos ? std::string::npos : q - p - 1);
        if (v == "fastlinks")
            hw.nocBytesPerCycle = 96;
        else if (v == "slowdram")
            hw.dramBytesPerCycle /= 4;
        else if (v == "onechip") // a chiplet template's mesh as one chip
            hw.chiplets = ChipletLinks{};
        else if (v == "4sides")
            hw.dramSides = {MeshSide::West, MeshSide::East, MeshSide::North, MeshSide::South};
        else if (v == "runs")
            hw.dramBurstBytes = 64, hw.dramRunOverheadCycles = 20;
        else if (v == "weightsfirst")
            hw.loadOrder = LoadOrder::WeightsFirst;
        else if (v == "inputsfirst")
            hw.loadOrder = LoadOrder::InputsFirst;
        else if (v == "split")
            hw.channelSplit = true;
        else if (long long n = 0;
                 v.rfind("stage", 0) == 0 && std::sscanf(v.c_str() + 5, "%lld", &n) == 1 && n > 0)
            hw.stageBytes = n;
        else
            return false;
        p = q;
    }
    hw.name = spec;
    return true;
}

} // namespace tilescope::test
