#include "report/trace_json.h"

#include <nlohmann/json.hpp>

namespace tilescope {

std::string traceEventJson(const Evaluation& e, const Network& net, const Hardware& hw,
                           const RATree& tree, int indent) {
    using nlohmann::json;
    const double usPerCycle = 1.0 / (hw.clockGHz * 1000.0);
    json events = json::array();
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"tid", 0},
                      {"args", {{"name", "tilescope " + net.name + " on " + hw.name}}}});
    for (int t = 0; t < hw.tiles(); ++t) {
        const std::string name = "tile " + std::to_string(t) + " (" +
                                 std::to_string(t % hw.meshX) + "," +
                                 std::to_string(t / hw.meshX) + ")";
        events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", t},
                          {"args", {{"name", name}}}});
        // Keeps the tracks in tile order instead of first-event order.
        events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 0}, {"tid", t},
                          {"args", {{"sort_index", t}}}});
    }
    for (const BusyInterval& iv : e.intervals) {
        const std::string layer =
            iv.layer >= 0 && iv.layer < int(net.layers.size()) ? net.layers[size_t(iv.layer)].name : "?";
        const std::string path =
            iv.node >= 0 && iv.node < tree.size() ? tree.pathOf(iv.node) : std::string();
        const double ts = iv.start * usPerCycle;
        const double dur = (iv.end - iv.start) * usPerCycle;
        for (int p = iv.tileBegin; p < iv.tileBegin + iv.tileCount; ++p) {
            if (p < 0 || p >= int(e.tileOrder.size())) continue;
            const int tile = e.tileOrder[size_t(p)];
            events.push_back({{"name", layer + "[" + std::to_string(iv.firstSample) + "," +
                                           std::to_string(iv.lastSample) + "]"},
                              {"cat", "layer"},
                              {"ph", "X"},
                              {"ts", ts},
                              {"dur", dur},
                              {"pid", 0},
                              {"tid", tile},
                              {"args",
                               {{"layer", layer},
                                {"node", path},
                                {"first_sample", iv.firstSample},
                                {"last_sample", iv.lastSample},
                                {"start_cycle", iv.start},
                                {"end_cycle", iv.end},
                                {"energy_pj", iv.energy}}}});
        }
    }
    json doc = {{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ns"},
                {"otherData",
                 {{"generator", "tilescope"},
                  {"model", net.name},
                  {"hardware", hw.name},
                  {"clock_ghz", hw.clockGHz},
                  {"delay_cycles", e.delay},
                  {"energy_pj", e.energy.total()},
                  {"truncated", e.intervalsTruncated}}}};
    return doc.dump(indent);
}

} // namespace tilescope
