// One layer's intra-layer mapping as the `mapping` command reports it (docs/cli.md): the
// partition over a tile group, the per-tile loop order, buffer use, traffic, cycles and
// energy of one invocation; on compute-in-memory tiles also the crossbar blocks and the
// weight programmings of the chosen and of the default template's loop order.
#pragma once

#include "hw/hardware.h"
#include "mapping/mapper.h"
#include "model/network.h"
#include "util/units.h"

#include <array>
#include <nlohmann/json.hpp>
#include <string>

namespace tilescope {

struct LayerMappingReport {
    std::string layer;
    int tiles = 1, batch = 1;
    LeafMapping mapping;
    // One invocation, all tiles.
    PicoJoules macEnergy = 0, bufferEnergy = 0, weightWriteEnergy = 0;
    std::array<PicoJoules, kMaxStorageLevels> levelEnergy{}; // Hardware::levels, in order
    PicoJoules energy() const {
        PicoJoules e = macEnergy + bufferEnergy + weightWriteEnergy;
        for (PicoJoules l : levelEnergy)
            e += l;
        return e;
    }
    // The leaf's alternative partitions (Mapper::alternatives: the mapper's choice first),
    // each with what it costs the leaf alone (Mapper::leafCost) under the objective.
    struct Alternative {
        std::string label;
        std::array<int, 5> factors{}; // as a tree names it (RANode::partition)
        PicoJoules energy = 0;
        Cycles cycles = 0;
        double cost = 0;
    };
    std::vector<Alternative> alternatives;
    double energyExp = 1, delayExp = 1; // the objective they are ranked by
};

// The mapper's choice for `layer` on `tiles` tiles with `batch` samples per invocation, and
// the alternatives under the objective energy^n x delay^m.
LayerMappingReport layerMapping(const Network& net, const Hardware& hw, int layer, int tiles,
                                int batch, double n = 1, double m = 1);
nlohmann::json layerMappingJson(const LayerMappingReport& r, const Hardware& hw);

} // namespace tilescope
