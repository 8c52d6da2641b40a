#include "hw/hardware.h"

#include "util/fileio.h"
#include "util/json.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <tuple>

namespace tilescope {

using nlohmann::json;

double EnergyModel::sramPjPerByte(Bytes bufferBytes) const {
    if (sram.empty()) return 0.0;
    if (bufferBytes <= sram.front().bufferBytes) return sram.front().pjPerByte;
    for (size_t i = 1; i < sram.size(); ++i) {
        if (bufferBytes <= sram[i].bufferBytes) {
            const auto& a = sram[i - 1];
            const auto& b = sram[i];
            const double t =
                std::log(bufferBytes / a.bufferBytes) / std::log(b.bufferBytes / a.bufferBytes);
            return a.pjPerByte + t * (b.pjPerByte - a.pjPerByte);
        }
    }
    return sram.back().pjPerByte;
}

const char* toString(LoadOrder o) {
    switch (o) {
    case LoadOrder::WeightsFirst:
        return "weights-first";
    case LoadOrder::InputsFirst:
        return "inputs-first";
    default:
        return "auto";
    }
}

DramRunModel dramRunModel(const Hardware& hw) {
    return {hw.dramBurstBytes, hw.dramRunOverheadCycles, hw.dramChannelBlock,
            hw.dramBytesPerCycle / double(std::max<size_t>(1, hw.dramSides.size()))};
}

Hardware defaultHardware(int meshX, int meshY, const std::string& name) {
    Hardware hw;
    hw.name = name;
    hw.meshX = meshX;
    hw.meshY = meshY;
    // 0.5 GB/s per TOPS of peak compute; at 1 GHz, 1 GB/s is 1 byte/cycle.
    hw.dramBytesPerCycle = 0.5 * hw.peakTops() / hw.clockGHz;
    // Per-byte SRAM access energy by buffer size (CACTI-style figures for a 28 nm-class
    // process, wide accesses); an assumption documented in docs/hardware-format.md.
    hw.energy.sram = {{16 * 1024., 0.18},
                      {64 * 1024., 0.30},
                      {256 * 1024., 0.55},
                      {1024 * 1024., 1.05},
                      {4096 * 1024., 2.0}};
    return hw;
}

double bufferReadPj(const Hardware& hw) {
    return hw.energy.bufferReadPjPerByte > 0 ? hw.energy.bufferReadPjPerByte
                                             : hw.energy.sramPjPerByte(hw.bufferBytes);
}

double bufferWritePj(const Hardware& hw) {
    return hw.energy.bufferWritePjPerByte > 0 ? hw.energy.bufferWritePjPerByte
                                              : hw.energy.sramPjPerByte(hw.bufferBytes);
}

std::vector<std::string> presetNames() {
    return {"edge", "cloud", "eyeriss", "testchip", "cim", "chiplet", "wafer"};
}

namespace {

// The method's NVDLA-style core ("polar"), with the reference implementation's figures
// (docs/hardware-format.md "Storage inside the tile" gives each and its source): 16 PEs of
// 8 input-channel x 8 output-channel lanes (1024 MACs), per PE an 8 KB activation L1, a
// 4 KB weight L1 and a 2 KB output L1, per tile a 28 KB output L2 and the 1 MB global
// buffer. Energies in pJ per byte (8-bit data).
void polarTile(Hardware& hw) {
    hw.macsPerTile = 1024;
    hw.bufferBytes = 1 << 20;
    hw.energy.bufferReadPjPerByte = 1.0537;
    hw.energy.bufferWritePjPerByte = 1.8722;
    // fanout: an activation read feeds the 8 output-channel lanes, a weight is held for the
    // 256 output positions one lane's output L1 holds (2 KB / 8 lanes), a partial-sum
    // write follows the reduction over 8 input-channel lanes.
    hw.levels = {{"al1", 8192, 16, HoldsInput, 0.3885, 0.3293, 8},
                 {"wl1", 4096, 16, HoldsWeight, 0.3053, 0.2471, 256},
                 {"ol1", 2048, 16, HoldsOutput, 0.6416, 0.5672, 8},
                 {"ol2", 28672, 1, HoldsOutput, 0.6119, 0.7919, 1}};
}

// The method's Eyeriss-style core (row-stationary), with the reference implementation's
// figures: a 32 x 32 PE array, per PE a 32-byte input scratchpad, a 128-byte weight
// scratchpad and a partial-sum register (free in the reference), the 1 MB global buffer.
// Every MAC reads its input and its weight from its PE's scratchpads.
Hardware eyerissHardware() {
    Hardware hw = defaultHardware(4, 4, "eyeriss");
    hw.dramInterleaved = true; // as the reference's 4x4 chip, like edge
    hw.macsPerTile = 1024;
    hw.energy.bufferReadPjPerByte = 1.0537;
    hw.energy.bufferWritePjPerByte = 1.8722;
    hw.levels = {{"ifmap_spad", 32, 1024, HoldsInput, 0.4072, 0.4048, 1},
                 {"weight_spad", 128, 1024, HoldsWeight, 0.436, 0.432, 1},
                 {"psum_reg", 1, 1024, HoldsOutput, 0, 0, 1}};
    return hw;
}

// The reference compute-in-memory chip: a 4x4 mesh of the reference tile (CimParams'
// defaults; docs/hardware-format.md gives each figure and its source).
Hardware cimHardware() {
    Hardware hw = defaultHardware(4, 4, "cim");
    hw.arch = TileArch::Cim;
    hw.macsPerTile = hw.cim.peakMacs(hw.dataBits);
    hw.dramBytesPerCycle = 0.5 * hw.peakTops() / hw.clockGHz;
    return hw;
}

// The reference chiplet package: 2 x 2 chiplets of 4 x 4 edge tiles (an 8 x 8 tile mesh,
// DRAM by the usual rule: 64 B/cycle on the west and east sides). The snake numbering
// takes stripes of a chiplet's width, so 16 consecutive positions fill one chiplet and the
// chiplets follow one another in serpentine order. Inter-chiplet links: a third of the
// on-chiplet bandwidth at about three times the energy (docs/hardware-format.md gives the
// figures and their sources).
Hardware chipletHardware() {
    Hardware hw = defaultHardware(8, 8, "chiplet");
    hw.stripe = 4;
    hw.chiplets.x = 2;
    hw.chiplets.y = 2;
    hw.chiplets.linkBytesPerCycle = 8;
    hw.chiplets.pjPerBitHop = 2.0;
    return hw;
}

// A wafer-scale mesh: 32 x 32 cloud tiles with DRAM on all four sides, by the usual rule
// 0.5 GB/s per TOPS: 2 x 1024 MACs x 1024 tiles at 1 GHz = 2048 TOPS -> 1024 B/cycle.
Hardware waferHardware() {
    Hardware hw = defaultHardware(32, 32, "wafer");
    hw.dramSides = {MeshSide::West, MeshSide::East, MeshSide::North, MeshSide::South};
    return hw;
}

} // namespace

bool presetHardware(const std::string& name, Hardware& out) {
    if (name == "edge" || name == "cloud") {
        out = name == "edge" ? defaultHardware(4, 4, "edge") : defaultHardware(12, 12, "cloud");
        polarTile(out);
        // The reference implementation's 4x4 chip: memory interleaved over its 8 ports.
        out.dramInterleaved = name == "edge";
    } else if (name == "eyeriss")
        out = eyerissHardware();
    else if (name == "testchip")
        out = defaultHardware(2, 2, "testchip");
    else if (name == "cim")
        out = cimHardware();
    else if (name == "chiplet")
        out = chipletHardware();
    else if (name == "wafer")
        out = waferHardware();
    else
        return false;
    return true;
}

namespace {

const char* sideName(MeshSide s) {
    switch (s) {
    case MeshSide::West:
        return "west";
    case MeshSide::East:
        return "east";
    case MeshSide::North:
        return "north";
    case MeshSide::South:
        return "south";
    }
    return "?";
}

// An optional key naming one of two values (the enum's first and second): false when it
// names neither.
template <typename E>
bool twoWayKey(const json& obj, const char* key, const std::array<const char*, 2>& names, E& out) {
    if (!obj.contains(key)) return true;
    const json& v = obj[key];
    for (size_t i = 0; i < 2; ++i)
        if (v == names[i]) {
            out = E(i);
            return true;
        }
    return false;
}

// The "cim" object and what it implies for tile.macs (after data_bits, before the DRAM
// default, which follows the peak).
std::optional<Error> parseCim(const json& j, Hardware& hw, JsonReader& r, const std::string& file) {
    const bool macsGiven = j.contains("tile") && j["tile"].contains("macs");
    if (j.contains("cim")) {
        if (hw.arch != TileArch::Cim)
            return makeError(file, "cim", "only for a tile.arch \"cim\" template");
        const json& c = j["cim"];
        CimParams& p = hw.cim;
        if (!r.checkKeys(c, "cim",
                         {"cores", "crossbars_per_core", "rows", "cols", "bits_per_cell",
                          "write_pj_per_bit", "write_cycles_per_row", "read_pj_per_op",
                          "psum_buffer_bytes", "mvm_cycles", "double_buffered_crossbars",
                          "weight_slicing", "core_binding"}) ||
            !r.num(c, "cim", "cores", p.cores, true) ||
            !r.num(c, "cim", "crossbars_per_core", p.crossbarsPerCore, true) ||
            !r.num(c, "cim", "rows", p.rows, true) || !r.num(c, "cim", "cols", p.cols, true) ||
            !r.num(c, "cim", "bits_per_cell", p.bitsPerCell, true) ||
            !r.num(c, "cim", "write_pj_per_bit", p.writePjPerBit, false) ||
            !r.num(c, "cim", "write_cycles_per_row", p.writeCyclesPerRow, false) ||
            !r.num(c, "cim", "read_pj_per_op", p.readPjPerOp, false) ||
            !r.num(c, "cim", "psum_buffer_bytes", p.psumBufferBytes, true) ||
            !r.num(c, "cim", "mvm_cycles", p.mvmCycles, true))
            return makeError(file, "", r.error);
        if (c.contains("double_buffered_crossbars")) {
            if (!c["double_buffered_crossbars"].is_boolean())
                return makeError(file, "cim.double_buffered_crossbars", "expected true or false");
            p.doubleBufferedCrossbars = c["double_buffered_crossbars"].get<bool>();
        }
        if (!twoWayKey(c, "weight_slicing", {"cells", "crossbars"}, p.slicing))
            return makeError(file, "cim.weight_slicing", "expected \"cells\" or \"crossbars\"");
        if (!twoWayKey(c, "core_binding", {"tile", "output-channels"}, p.binding))
            return makeError(file, "cim.core_binding", "expected \"tile\" or \"output-channels\"");
        if (p.rows > 4096 || p.cols > 4096)
            return makeError(file, p.rows > 4096 ? "cim.rows" : "cim.cols",
                             "at most 4096 cells per crossbar side");
        if (p.cores > 1024 || p.crossbarsPerCore > 1024)
            return makeError(file, p.cores > 1024 ? "cim.cores" : "cim.crossbars_per_core",
                             "at most 1024");
        for (const auto& [key, v] :
             {std::pair<const char*, double>{"write_cycles_per_row", p.writeCyclesPerRow},
              {"mvm_cycles", p.mvmCycles}})
            if (v > 1e6) return makeError(file, std::string("cim.") + key, "at most 10^6 cycles");
        if (p.psumBufferBytes > 1e12)
            return makeError(file, "cim.psum_buffer_bytes", "at most 10^12 bytes");
        if (p.bitsPerCell > 8)
            return makeError(file, "cim.bits_per_cell",
                             "at most 8 bits per cell (got " + std::to_string(p.bitsPerCell) + ")");
        if (p.weightColumns(hw.dataBits) < 1)
            return makeError(file, "cim.cols",
                             std::to_string(p.cols) + " cells cannot hold one " +
                                 std::to_string(hw.dataBits) + "-bit weight at " +
                                 std::to_string(p.bitsPerCell) + " bits per cell (needs " +
                                 std::to_string(p.cellsPerWeight(hw.dataBits)) + ")");
        const double onePass = 4.0 * p.weightColumns(hw.dataBits);
        if (p.psumBufferBytes < onePass)
            return makeError(file, "cim.psum_buffer_bytes",
                             "must hold one crossbar's partial sums (" +
                                 std::to_string(p.weightColumns(hw.dataBits)) +
                                 " x 4 bytes = " + std::to_string(int(onePass)) + ")");
        if (p.doubleBufferedCrossbars && p.crossbars() < 2)
            return makeError(file, "cim.double_buffered_crossbars",
                             "needs at least 2 crossbars per tile");
    }
    if (hw.arch != TileArch::Cim) return std::nullopt;
    const double peakExact = double(hw.cim.crossbars()) * hw.cim.rows *
                             hw.cim.weightColumns(hw.dataBits) / hw.cim.mvmCycles;
    if (peakExact < 1)
        return makeError(file, "cim.mvm_cycles",
                         "leaves a tile less than one MAC per cycle (lower it or add crossbars)");
    if (peakExact > 1e9) return makeError(file, "cim", "more than 10^9 MACs per cycle per tile");
    const int peak = hw.cim.peakMacs(hw.dataBits);
    if (macsGiven && hw.macsPerTile != peak)
        return makeError(file, "tile.macs",
                         "a cim tile's MACs per cycle follow from cim (cores x crossbars_per_core "
                         "x rows x weights per crossbar row / mvm_cycles = " +
                             std::to_string(peak) + "); omit tile.macs or give " +
                             std::to_string(peak) + " (got " + std::to_string(hw.macsPerTile) +
                             ")");
    hw.macsPerTile = peak;
    return std::nullopt;
}

// The "chiplets" object (after the mesh): chiplets per row and column, each dividing the
// mesh evenly, and the inter-chiplet link's bandwidth and energy.
std::optional<Error> parseChiplets(const json& j, Hardware& hw, JsonReader& r,
                                   const std::string& file) {
    if (!j.contains("chiplets")) return std::nullopt;
    const json& c = j["chiplets"];
    ChipletLinks& k = hw.chiplets;
    if (!r.checkKeys(c, "chiplets", {"x", "y", "link_bytes_per_cycle", "pj_per_bit_hop"}) ||
        !r.num(c, "chiplets", "x", k.x, true) || !r.num(c, "chiplets", "y", k.y, true) ||
        !r.num(c, "chiplets", "link_bytes_per_cycle", k.linkBytesPerCycle, true) ||
        !r.num(c, "chiplets", "pj_per_bit_hop", k.pjPerBitHop, false))
        return makeError(file, "", r.error);
    for (const auto& [key, n, size, what] :
         {std::tuple<const char*, int, int, const char*>{"x", k.x, hw.meshX, "columns"},
          {"y", k.y, hw.meshY, "rows"}})
        if (size % n != 0)
            return makeError(file, std::string("chiplets.") + key,
                             std::to_string(n) + " chiplets do not divide the mesh's " +
                                 std::to_string(size) + " " + what + " evenly");
    return std::nullopt;
}

// The breakdown keys a level may not take (EnergyBreakdown's own parts).
bool reservedLevelName(const std::string& n) {
    for (const char* k : {"dram", "noc", "mac", "buffer", "weight_write", "total"})
        if (n == k) return true;
    return false;
}

// "tile.levels": the storage inside a MAC-array tile, MACs outwards.
std::optional<Error> parseLevels(const json& t, Hardware& hw, JsonReader& r,
                                 const std::string& file) {
    if (!t.contains("levels")) return std::nullopt;
    const json& ls = t["levels"];
    if (!ls.is_array()) return makeError(file, "tile.levels", "expected a list of levels");
    if (ls.size() > size_t(kMaxStorageLevels))
        return makeError(file, "tile.levels",
                         "at most " + std::to_string(kMaxStorageLevels) + " levels");
    if (!ls.empty() && hw.arch == TileArch::Cim)
        return makeError(file, "tile.levels", "only for MAC-array tiles (tile.arch \"nvdla\")");
    hw.levels.clear();
    for (size_t i = 0; i < ls.size(); ++i) {
        const std::string where = "tile.levels[" + std::to_string(i) + "]";
        const json& l = ls[i];
        StorageLevel v;
        if (!r.checkKeys(l, where,
                         {"name", "bytes", "instances", "holds", "read_pj_per_byte",
                          "write_pj_per_byte", "fanout"}) ||
            !r.num(l, where, "bytes", v.bytes, true) ||
            !r.num(l, where, "instances", v.instances, true) ||
            !r.num(l, where, "read_pj_per_byte", v.readPjPerByte, false) ||
            !r.num(l, where, "write_pj_per_byte", v.writePjPerByte, false) ||
            !r.num(l, where, "fanout", v.fanout, true))
            return makeError(file, "", r.error);
        if (!l.contains("name") || !l["name"].is_string() || l["name"].get<std::string>().empty())
            return makeError(file, where + ".name", "expected a non-empty string");
        v.name = l["name"].get<std::string>();
        if (reservedLevelName(v.name))
            return makeError(file, where + ".name",
                             "\"" + v.name + "\" is a key of the energy breakdown already");
        for (const StorageLevel& o : hw.levels)
            if (o.name == v.name)
                return makeError(file, where + ".name", "\"" + v.name + "\" is listed twice");
        if (!l.contains("bytes")) return makeError(file, where + ".bytes", "required");
        if (!l.contains("holds") || !l["holds"].is_array() || l["holds"].empty())
            return makeError(file, where + ".holds",
                             "expected a non-empty list of \"input\", \"weight\", \"output\"");
        for (const auto& h : l["holds"]) {
            const std::string n = h.is_string() ? h.get<std::string>() : "";
            const unsigned bit = n == "input"    ? HoldsInput
                                 : n == "weight" ? HoldsWeight
                                 : n == "output" ? HoldsOutput
                                                 : 0u;
            if (bit == 0)
                return makeError(file, where + ".holds",
                                 "unknown operand " + h.dump() + " (input, weight, output)");
            v.holds |= bit;
        }
        if (v.bytes > 1e12) return makeError(file, where + ".bytes", "at most 10^12 bytes");
        if (v.instances > 1 << 20)
            return makeError(file, where + ".instances", "at most 2^20 per tile");
        if (v.fanout > 1 << 20) return makeError(file, where + ".fanout", "at most 2^20");
        hw.levels.push_back(v);
    }
    return std::nullopt;
}

// The template's "tile" object into hw.
std::optional<Error> parseTile(const json& t, Hardware& hw, JsonReader& r,
                               const std::string& file) {
    if (!r.checkKeys(t, "tile",
                     {"macs", "buffer_bytes", "vector_lanes", "arch", "levels", "load_order",
                      "stage_bytes", "channel_split"}))
        return makeError(file, "", r.error);
    if (t.contains("channel_split")) {
        if (!t["channel_split"].is_boolean())
            return makeError(file, "tile.channel_split",
                             "expected true or false, got " + t["channel_split"].dump());
        hw.channelSplit = t["channel_split"].get<bool>();
    }
    if (t.contains("load_order")) {
        const std::string o = t["load_order"].is_string() ? t["load_order"].get<std::string>() : "";
        bool known = false;
        for (LoadOrder c : {LoadOrder::Auto, LoadOrder::WeightsFirst, LoadOrder::InputsFirst})
            if (o == toString(c)) hw.loadOrder = c, known = true;
        if (!known)
            return makeError(file, "tile.load_order",
                             "expected \"auto\", \"weights-first\" or \"inputs-first\"");
    }
    if (!r.num(t, "tile", "macs", hw.macsPerTile, true) ||
        !r.num(t, "tile", "buffer_bytes", hw.bufferBytes, true) ||
        !r.num(t, "tile", "vector_lanes", hw.vectorLanes, true) ||
        !r.num(t, "tile", "stage_bytes", hw.stageBytes, true))
        return makeError(file, "", r.error);
    if (t.contains("arch")) {
        const std::string a = t["arch"].is_string() ? t["arch"].get<std::string>() : "";
        if (a == "nvdla")
            hw.arch = TileArch::Nvdla;
        else if (a == "cim")
            hw.arch = TileArch::Cim;
        else
            return makeError(file, "tile.arch", "expected \"nvdla\" or \"cim\"");
    }
    return parseLevels(t, hw, r, file);
}

std::string presetList() {
    std::string s;
    for (const std::string& p : presetNames())
        s += (s.empty() ? "" : ", ") + p;
    return s;
}

} // namespace

Result<Hardware> parseHardware(const std::string& jsonText, const std::string& file) {
    auto parsed = parseJson(jsonText, file);
    if (!parsed) return parsed.error();
    return parseHardwareValue(*parsed, file);
}

Result<Hardware> parseHardwareValue(const json& j, const std::string& file) {
    JsonReader r;
    auto fail = [&]() { return makeError(file, "", r.error); };
    if (!r.checkKeys(j, "",
                     {"name", "mesh", "tile", "noc", "dram", "clock_ghz", "data_bits", "energy",
                      "cim", "chiplets", "comment"}))
        return fail();

    int mx = 4, my = 4;
    if (j.contains("mesh")) {
        const json& m = j["mesh"];
        if (!r.checkKeys(m, "mesh", {"x", "y", "stripe"})) return fail();
        if (!r.num(m, "mesh", "x", mx, true) || !r.num(m, "mesh", "y", my, true)) return fail();
    }
    if (mx * my <= 0) return makeError(file, "mesh", "0 tiles");
    if (mx > 64 || my > 64) return makeError(file, "mesh", "at most 64x64 tiles are supported");
    // Type first: value() on a non-string "name" throws json::type_error (found by fuzzing).
    if (j.contains("name") && !j["name"].is_string())
        return makeError(file, "name", "expected a string");
    Hardware hw = defaultHardware(mx, my, j.value("name", std::string("custom")));
    bool dramGiven = false;
    if (j.contains("mesh") && !r.num(j["mesh"], "mesh", "stripe", hw.stripe, true)) return fail();
    if (auto err = parseChiplets(j, hw, r, file)) return *err;
    if (j.contains("tile"))
        if (auto err = parseTile(j["tile"], hw, r, file)) return *err;
    if (j.contains("noc")) {
        if (!r.checkKeys(j["noc"], "noc", {"link_bytes_per_cycle"}) ||
            !r.num(j["noc"], "noc", "link_bytes_per_cycle", hw.nocBytesPerCycle, true))
            return fail();
    }
    if (j.contains("dram")) {
        const json& d = j["dram"];
        if (!r.checkKeys(d, "dram",
                         {"bytes_per_cycle", "sides", "latency_cycles", "max_outstanding_loads",
                          "port_bytes_per_cycle", "burst_bytes", "run_overhead_cycles",
                          "channel_block", "ports"}) ||
            !r.num(d, "dram", "bytes_per_cycle", hw.dramBytesPerCycle, true) ||
            !r.num(d, "dram", "latency_cycles", hw.dramLatencyCycles, false) ||
            !r.num(d, "dram", "max_outstanding_loads", hw.maxOutstandingLoads, true) ||
            !r.num(d, "dram", "port_bytes_per_cycle", hw.dramPortBytesPerCycle, true, true) ||
            !r.num(d, "dram", "burst_bytes", hw.dramBurstBytes, true) ||
            !r.num(d, "dram", "run_overhead_cycles", hw.dramRunOverheadCycles, false) ||
            !r.num(d, "dram", "channel_block", hw.dramChannelBlock, true))
            return fail();
        dramGiven = d.contains("bytes_per_cycle");
        if (d.contains("ports")) {
            const std::string p = d["ports"].is_string() ? d["ports"].get<std::string>() : "";
            if (p != "nearest" && p != "interleaved")
                return makeError(file, "dram.ports",
                                 "expected \"nearest\" or \"interleaved\", got " +
                                     d["ports"].dump());
            hw.dramInterleaved = p == "interleaved";
        }
        if (d.contains("sides")) {
            if (!d["sides"].is_array() || d["sides"].empty())
                return makeError(file, "dram.sides", "expected a non-empty list of sides");
            hw.dramSides.clear();
            for (const auto& s : d["sides"]) {
                const std::string n = s.is_string() ? s.get<std::string>() : "";
                if (n == "west")
                    hw.dramSides.push_back(MeshSide::West);
                else if (n == "east")
                    hw.dramSides.push_back(MeshSide::East);
                else if (n == "north")
                    hw.dramSides.push_back(MeshSide::North);
                else if (n == "south")
                    hw.dramSides.push_back(MeshSide::South);
                else
                    return makeError(file, "dram.sides",
                                     "unknown side " + s.dump() + " (west, east, north, south)");
            }
        }
    }
    if (!r.num(j, "", "clock_ghz", hw.clockGHz, true) ||
        !r.num(j, "", "data_bits", hw.dataBits, true))
        return fail();
    if (hw.dataBits != 8 && hw.dataBits != 16)
        return makeError(file, "data_bits", "only 8- and 16-bit data are supported");
    if (auto err = parseCim(j, hw, r, file)) return *err;
    if (!dramGiven) hw.dramBytesPerCycle = 0.5 * hw.peakTops() / hw.clockGHz;
    if (j.contains("energy")) {
        const json& e = j["energy"];
        if (!r.checkKeys(e, "energy",
                         {"dram_pj_per_bit", "noc_pj_per_bit_hop", "mac_pj", "vector_pj_per_op",
                          "sram_pj_per_byte", "buffer_read_pj_per_byte",
                          "buffer_write_pj_per_byte"}))
            return fail();
        if (!r.num(e, "energy", "buffer_read_pj_per_byte", hw.energy.bufferReadPjPerByte, false) ||
            !r.num(e, "energy", "buffer_write_pj_per_byte", hw.energy.bufferWritePjPerByte, false))
            return fail();
        if (!r.num(e, "energy", "dram_pj_per_bit", hw.energy.dramPjPerBit, false) ||
            !r.num(e, "energy", "noc_pj_per_bit_hop", hw.energy.nocPjPerBitHop, false) ||
            !r.num(e, "energy", "mac_pj", hw.energy.macPj, false) ||
            !r.num(e, "energy", "vector_pj_per_op", hw.energy.vectorPjPerOp, false))
            return fail();
        if (e.contains("sram_pj_per_byte")) {
            const json& s = e["sram_pj_per_byte"];
            if (!s.is_array() || s.empty())
                return makeError(file, "energy.sram_pj_per_byte",
                                 "expected a list of [buffer_bytes, pj_per_byte]");
            hw.energy.sram.clear();
            for (size_t i = 0; i < s.size(); ++i) {
                const std::string place = "energy.sram_pj_per_byte[" + std::to_string(i) + "]";
                if (!s[i].is_array() || s[i].size() != 2 || !s[i][0].is_number() ||
                    !s[i][1].is_number())
                    return makeError(file, place, "expected [buffer_bytes, pj_per_byte]");
                const double b = s[i][0].get<double>(), p = s[i][1].get<double>();
                if (!(b > 0) || !(p >= 0))
                    return makeError(file, place, "sizes must be positive, energies non-negative");
                if (!hw.energy.sram.empty() && b <= hw.energy.sram.back().bufferBytes)
                    return makeError(file, place,
                                     "entries must be sorted by increasing buffer size");
                hw.energy.sram.push_back({b, p});
            }
        }
    }
    return hw;
}

Result<Hardware> loadHardware(const std::string& pathOrPreset) {
    Hardware hw;
    std::error_code ec;
    if (!std::filesystem::exists(pathOrPreset, ec) && presetHardware(pathOrPreset, hw)) return hw;
    if (!std::filesystem::exists(pathOrPreset, ec))
        return makeError(pathOrPreset, "", "no such file, and not a preset (" + presetList() + ")");
    auto text = readFile(pathOrPreset);
    if (!text) return text.error();
    return parseHardware(*text, pathOrPreset);
}

json hardwareToJson(const Hardware& hw) {
    json sram = json::array();
    for (const auto& p : hw.energy.sram)
        sram.push_back({p.bufferBytes, p.pjPerByte});
    json sides = json::array();
    for (auto s : hw.dramSides)
        sides.push_back(sideName(s));
    json j = {
        {"name", hw.name},
        {"mesh", {{"x", hw.meshX}, {"y", hw.meshY}, {"stripe", hw.stripe}}},
        {"tile",
         {{"macs", hw.macsPerTile},
          {"buffer_bytes", hw.bufferBytes},
          {"vector_lanes", hw.vectorLanes},
          {"arch", hw.arch == TileArch::Cim ? "cim" : "nvdla"}}},
        {"noc", {{"link_bytes_per_cycle", hw.nocBytesPerCycle}}},
        {"dram",
         {{"bytes_per_cycle", hw.dramBytesPerCycle},
          {"sides", sides},
          {"latency_cycles", hw.dramLatencyCycles},
          {"max_outstanding_loads", hw.maxOutstandingLoads},
          {"port_bytes_per_cycle", hw.dramPortBytesPerCycle}}},
        {"clock_ghz", hw.clockGHz},
        {"data_bits", hw.dataBits},
        {"energy",
         {{"dram_pj_per_bit", hw.energy.dramPjPerBit},
          {"noc_pj_per_bit_hop", hw.energy.nocPjPerBitHop},
          {"mac_pj", hw.energy.macPj},
          {"vector_pj_per_op", hw.energy.vectorPjPerOp},
          {"sram_pj_per_byte", sram}}},
    };
    // Written only when set, so a template without them reads back as it was.
    if (hw.loadOrder != LoadOrder::Auto) j["tile"]["load_order"] = toString(hw.loadOrder);
    if (hw.stageBytes > 0) j["tile"]["stage_bytes"] = hw.stageBytes;
    if (hw.channelSplit) j["tile"]["channel_split"] = true;
    if (hw.dramBurstBytes > 0) j["dram"]["burst_bytes"] = hw.dramBurstBytes;
    if (hw.dramRunOverheadCycles > 0) j["dram"]["run_overhead_cycles"] = hw.dramRunOverheadCycles;
    if (hw.dramChannelBlock != 16) j["dram"]["channel_block"] = hw.dramChannelBlock;
    if (hw.dramInterleaved) j["dram"]["ports"] = "interleaved";
    if (hw.energy.bufferReadPjPerByte > 0)
        j["energy"]["buffer_read_pj_per_byte"] = hw.energy.bufferReadPjPerByte;
    if (hw.energy.bufferWritePjPerByte > 0)
        j["energy"]["buffer_write_pj_per_byte"] = hw.energy.bufferWritePjPerByte;
    if (!hw.levels.empty()) {
        json levels = json::array();
        for (const StorageLevel& l : hw.levels) {
            json holds = json::array();
            for (const auto& [bit, n] : {std::pair<unsigned, const char*>{HoldsInput, "input"},
                                         {HoldsWeight, "weight"},
                                         {HoldsOutput, "output"}})
                if (l.holds & bit) holds.push_back(n);
            levels.push_back({{"name", l.name},
                              {"bytes", l.bytes},
                              {"instances", l.instances},
                              {"holds", holds},
                              {"read_pj_per_byte", l.readPjPerByte},
                              {"write_pj_per_byte", l.writePjPerByte},
                              {"fanout", l.fanout}});
        }
        j["tile"]["levels"] = levels;
    }
    if (hw.chiplets != ChipletLinks{}) // a single-chip template's JSON stays as it was
        j["chiplets"] = {{"x", hw.chiplets.x},
                         {"y", hw.chiplets.y},
                         {"link_bytes_per_cycle", hw.chiplets.linkBytesPerCycle},
                         {"pj_per_bit_hop", hw.chiplets.pjPerBitHop}};
    if (hw.arch == TileArch::Cim) {
        const CimParams& c = hw.cim;
        j["cim"] = {{"cores", c.cores},
                    {"crossbars_per_core", c.crossbarsPerCore},
                    {"rows", c.rows},
                    {"cols", c.cols},
                    {"bits_per_cell", c.bitsPerCell},
                    {"write_pj_per_bit", c.writePjPerBit},
                    {"write_cycles_per_row", c.writeCyclesPerRow},
                    {"read_pj_per_op", c.readPjPerOp},
                    {"psum_buffer_bytes", c.psumBufferBytes},
                    {"mvm_cycles", c.mvmCycles},
                    {"double_buffered_crossbars", c.doubleBufferedCrossbars}};
        // Written only when not the default, so templates without them read back unchanged.
        if (c.slicing == CimSlicing::Crossbars) j["cim"]["weight_slicing"] = "crossbars";
        if (c.binding == CimBinding::OutputChannels) j["cim"]["core_binding"] = "output-channels";
    }
    return j;
}

} // namespace tilescope
