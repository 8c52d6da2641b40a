#include "report/mapping_json.h"

#include "mapping/cim.h"
#include "tree/ratree.h"

namespace tilescope {

using nlohmann::json;

LayerMappingReport layerMapping(const Network& net, const Hardware& hw, int layer, int tiles,
                                int batch, double n, double m_) {
    LayerMappingReport r;
    r.layer = net.layers[size_t(layer)].name;
    r.tiles = tiles;
    r.batch = batch;
    Mapper mapper(net, hw);
    mapper.setObjective(n, m_);
    r.energyExp = n, r.delayExp = m_;
    r.mapping = mapper.map(layer, tiles, batch);
    for (const LeafMapping& a : mapper.alternatives(layer, tiles, batch)) {
        const Mapper::LeafCost c = mapper.leafCost(a);
        r.alternatives.push_back(
            {a.partitionLabel(), Mapper::factorsOf(a), c.energyPj, c.cycles, c.cost});
    }
    const LeafMapping& m = r.mapping;
    // The evaluator's energy terms for one invocation (docs/cost-model.md §4), without the
    // traffic that depends on where the leaf's data comes from.
    const Mapper::OwnEnergy own = mapper.ownEnergy(m);
    r.macEnergy = own.mac;
    r.bufferEnergy = own.buffer;
    r.levelEnergy = own.levels;
    r.weightWriteEnergy = m.cim.used ? double(m.cim.programmings) * cimWritePj(hw) : 0.0;
    return r;
}

json layerMappingJson(const LayerMappingReport& r, const Hardware& hw) {
    const LeafMapping& m = r.mapping;
    json j = {
        {"layer", r.layer},
        {"tiles", r.tiles},
        {"batch", r.batch},
        {"arch", hw.arch == TileArch::Cim ? "cim" : "nvdla"},
        {"partition",
         {{"label", m.partitionLabel()},
          {"k", m.pk},
          {"b", m.pb},
          {"h", m.ph},
          {"w", m.pw},
          {"c", m.pc}}},
        {"loop_order", m.tiling},
        {"buffer_bytes_per_tile",
         {{"input", m.ifmapPerTile},
          {"weights", m.weightPerTile},
          {"operand_b", m.operandBPerTile},
          {"output", m.ofmapPerTile},
          {"total", m.ifmapPerTile + m.weightPerTile + m.operandBPerTile + m.ofmapPerTile},
          {"capacity", hw.bufferBytes}}},
        {"traffic",
         {{"buffer_access_bytes", m.bufferAccessBytes},
          {"io_lower_bound_bytes_per_tile", m.ioLowerBound},
          {"input_multicast", m.inputMulticast},
          {"weight_multicast", m.weightMulticast},
          {"input_dma_runs", m.inputDmaRuns}}},
        {"cycles", m.cycles},
        {"macs", m.macs},
        {"vector_ops", m.vectorOps},
        {"utilisation", m.peUtilisation},
        {"energy_pj",
         {{"mac", r.macEnergy},
          {"buffer", r.bufferEnergy},
          {"weight_write", r.weightWriteEnergy},
          {"total", r.energy()}}},
    };
    for (size_t i = 0; i < hw.levels.size(); ++i) { // in-tile storage, docs/cost-model.md §2c
        j["energy_pj"][hw.levels[i].name] = r.levelEnergy[i];
        j["traffic"]["levels"][hw.levels[i].name] = {{"read_bytes", m.levelReads[i]},
                                                     {"write_bytes", m.levelWrites[i]}};
    }
    json alts = json::array(); // docs/cost-model.md §2, "Alternative partitions"
    for (size_t i = 0; i < r.alternatives.size(); ++i) {
        const auto& a = r.alternatives[i];
        alts.push_back({{"index", i},
                        {"partition", a.label},
                        {"token", partitionToken(a.factors)},
                        {"energy_pj", a.energy},
                        {"cycles", a.cycles},
                        {"cost", a.cost}});
    }
    j["alternatives"] = {{"objective", {{"energy_exp", r.energyExp}, {"delay_exp", r.delayExp}}},
                         {"partitions", std::move(alts)}};
    if (m.splitsChannels()) // docs/cost-model.md §2d; the buffer figures above are a root's
        j["partial_sums"] = {{"members_per_slot", m.pc}, {"reduce_cycles", m.reduceCycles}};
    if (m.blocked()) { // docs/cost-model.md §2b; the buffer figures above are one block's
        j["blocks"] = {{"channels", m.bk},       {"rows", m.bh},        {"columns", m.bw},
                       {"input_channels", m.bc}, {"count", m.blocks()}, {"label", m.blockLabel()}};
        j["buffer_bytes_per_tile"]["total"] = m.bufferPerTile();
    }
    if (m.cim.used) {
        const CimLeafMapping& c = m.cim;
        j["cim"] = {
            {"blocks_per_tile", c.blocksPerTile},
            {"crossbars_per_tile", c.crossbars},
            {"loop_order", c.order},
            {"default_loop_order", c.defaultOrder},
            {"psum_bytes", c.psumBytes},
            {"psum_buffer_bytes", hw.cim.psumBufferBytes},
            {"input_read_bytes", c.inputReads},
            {"weight_slicing", hw.cim.slicing == CimSlicing::Crossbars ? "crossbars" : "cells"},
            {"core_binding",
             hw.cim.binding == CimBinding::OutputChannels ? "output-channels" : "tile"},
            {"compute_cycles", c.computeCycles},
            {"write_cycles", c.writeCycles},
            {"exposed_write_cycles", c.exposedWrite}};
        j["weight_programmings"] = c.programmings;
        j["weight_programmings_default"] = c.programmingsDefault;
    }
    return j;
}

} // namespace tilescope
