#include "hw/hardware.h"

#include "util/fileio.h"
#include "util/json.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

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

std::vector<std::string> presetNames() {
    return {"edge", "cloud", "testchip"};
}

bool presetHardware(const std::string& name, Hardware& out) {
    if (name == "edge")
        out = defaultHardware(4, 4, "edge");
    else if (name == "cloud")
        out = defaultHardware(12, 12, "cloud");
    else if (name == "testchip")
        out = defaultHardware(2, 2, "testchip");
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
                      "cim", "comment"}))
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
    if (j.contains("tile")) {
        const json& t = j["tile"];
        if (!r.checkKeys(t, "tile", {"macs", "buffer_bytes", "vector_lanes", "arch"}))
            return fail();
        if (!r.num(t, "tile", "macs", hw.macsPerTile, true) ||
            !r.num(t, "tile", "buffer_bytes", hw.bufferBytes, true) ||
            !r.num(t, "tile", "vector_lanes", hw.vectorLanes, true))
            return fail();
        if (t.contains("arch")) {
            const std::string a = t["arch"].is_string() ? t["arch"].get<std::string>() : "";
            if (a == "nvdla")
                hw.arch = TileArch::Nvdla;
            else if (a == "cim")
                hw.arch = TileArch::Cim;
            else
                return makeError(file, "tile.arch", "expected \"nvdla\" or \"cim\"");
        }
    }
    if (j.contains("noc")) {
        if (!r.checkKeys(j["noc"], "noc", {"link_bytes_per_cycle"}) ||
            !r.num(j["noc"], "noc", "link_bytes_per_cycle", hw.nocBytesPerCycle, true))
            return fail();
    }
    if (j.contains("dram")) {
        const json& d = j["dram"];
        if (!r.checkKeys(d, "dram",
                         {"bytes_per_cycle", "sides", "latency_cycles", "max_outstanding_loads",
                          "port_bytes_per_cycle"}) ||
            !r.num(d, "dram", "bytes_per_cycle", hw.dramBytesPerCycle, true) ||
            !r.num(d, "dram", "latency_cycles", hw.dramLatencyCycles, false) ||
            !r.num(d, "dram", "max_outstanding_loads", hw.maxOutstandingLoads, true) ||
            !r.num(d, "dram", "port_bytes_per_cycle", hw.dramPortBytesPerCycle, true, true))
            return fail();
        dramGiven = d.contains("bytes_per_cycle");
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
    if (!dramGiven) hw.dramBytesPerCycle = 0.5 * hw.peakTops() / hw.clockGHz;
    if (j.contains("energy")) {
        const json& e = j["energy"];
        if (!r.checkKeys(e, "energy",
                         {"dram_pj_per_bit", "noc_pj_per_bit_hop", "mac_pj", "vector_pj_per_op",
                          "sram_pj_per_byte"}))
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
    if (j.contains("cim")) {
        const json& c = j["cim"];
        if (!r.checkKeys(c, "cim",
                         {"crossbar_bytes", "reprogram_cycles_per_kib", "reprogram_pj_per_byte"}) ||
            !r.num(c, "cim", "crossbar_bytes", hw.cim.crossbarBytes, true) ||
            !r.num(c, "cim", "reprogram_cycles_per_kib", hw.cim.reprogramCyclesPerKiB, false) ||
            !r.num(c, "cim", "reprogram_pj_per_byte", hw.cim.reprogramPjPerByte, false))
            return fail();
    }
    return hw;
}

Result<Hardware> loadHardware(const std::string& pathOrPreset) {
    Hardware hw;
    std::error_code ec;
    if (!std::filesystem::exists(pathOrPreset, ec) && presetHardware(pathOrPreset, hw)) return hw;
    if (!std::filesystem::exists(pathOrPreset, ec))
        return makeError(pathOrPreset, "",
                         "no such file, and not a preset (edge, cloud, testchip)");
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
    if (hw.arch == TileArch::Cim)
        j["cim"] = {{"crossbar_bytes", hw.cim.crossbarBytes},
                    {"reprogram_cycles_per_kib", hw.cim.reprogramCyclesPerKiB},
                    {"reprogram_pj_per_byte", hw.cim.reprogramPjPerByte}};
    return j;
}

} // namespace tilescope
