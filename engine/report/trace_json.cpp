#include "report/trace_json.h"

#include <algorithm>
#include <map>
#include <set>

namespace tilescope {

namespace {

std::string tileName(int t, const Hardware& hw) {
    return "tile " + std::to_string(t) + " (" + std::to_string(t % hw.meshX) + "," +
           std::to_string(t / hw.meshX) + ")";
}

} // namespace

std::string traceEventJson(const std::vector<TraceEvent>& events, double clockGHz,
                           const nlohmann::json& otherData, int indent) {
    using nlohmann::json;
    const double usPerCycle = 1.0 / (std::max(1e-9, clockGHz) * 1000.0);
    json out = json::array();
    // Metadata first: names once per process and track; sort indices keep tiles and
    // engines in numeric order instead of first-event order.
    std::map<int, std::string> processes;
    std::map<std::pair<int, int>, std::string> tracks;
    for (const TraceEvent& e : events) {
        processes.try_emplace(e.pid, e.process);
        tracks.try_emplace({e.pid, e.tid}, e.track);
    }
    for (const auto& [pid, name] : processes) {
        if (!name.empty())
            out.push_back({{"name", "process_name"},
                           {"ph", "M"},
                           {"pid", pid},
                           {"tid", 0},
                           {"args", {{"name", name}}}});
        out.push_back({{"name", "process_sort_index"},
                       {"ph", "M"},
                       {"pid", pid},
                       {"tid", 0},
                       {"args", {{"sort_index", pid}}}});
    }
    for (const auto& [key, name] : tracks) {
        if (!name.empty())
            out.push_back({{"name", "thread_name"},
                           {"ph", "M"},
                           {"pid", key.first},
                           {"tid", key.second},
                           {"args", {{"name", name}}}});
        out.push_back({{"name", "thread_sort_index"},
                       {"ph", "M"},
                       {"pid", key.first},
                       {"tid", key.second},
                       {"args", {{"sort_index", key.second}}}});
    }
    for (const TraceEvent& e : events) {
        if (e.counter) {
            out.push_back({{"name", e.label},
                           {"ph", "C"},
                           {"ts", e.start * usPerCycle},
                           {"pid", e.pid},
                           {"tid", e.tid},
                           {"args", e.args}});
            continue;
        }
        json ev = {{"name", e.label},
                   {"ph", "X"},
                   {"ts", e.start * usPerCycle},
                   {"dur", std::max(0.0, e.end - e.start) * usPerCycle},
                   {"pid", e.pid},
                   {"tid", e.tid},
                   {"args", e.args}};
        if (!e.category.empty()) ev["cat"] = e.category;
        out.push_back(std::move(ev));
    }
    json other = otherData.is_object() ? otherData : json::object();
    other["clock_ghz"] = clockGHz;
    json doc = {{"traceEvents", std::move(out)},
                {"displayTimeUnit", "ns"},
                {"otherData", std::move(other)}};
    return doc.dump(indent);
}

std::string traceEventJson(const Evaluation& e, const Network& net, const Hardware& hw,
                           const RATree& tree, int indent) {
    const std::string process = "tilescope " + net.name + " on " + hw.name;
    std::vector<TraceEvent> events;
    for (const BusyInterval& iv : e.intervals) {
        const std::string layer = iv.layer >= 0 && iv.layer < int(net.layers.size())
                                      ? net.layers[size_t(iv.layer)].name
                                      : "?";
        const std::string path =
            iv.node >= 0 && iv.node < tree.size() ? tree.pathOf(iv.node) : std::string();
        for (int p = iv.tileBegin; p < iv.tileBegin + iv.tileCount; ++p) {
            if (p < 0 || p >= int(e.tileOrder.size())) continue;
            const int tile = e.tileOrder[size_t(p)];
            TraceEvent ev;
            ev.pid = 0;
            ev.process = process;
            ev.tid = tile;
            ev.track = tileName(tile, hw);
            ev.label = layer + "[" + std::to_string(iv.firstSample) + "," +
                       std::to_string(iv.lastSample) + "]";
            ev.category = "layer";
            ev.start = iv.start;
            ev.end = iv.end;
            ev.args = {{"layer", layer},
                       {"node", path},
                       {"first_sample", iv.firstSample},
                       {"last_sample", iv.lastSample},
                       {"start_cycle", iv.start},
                       {"end_cycle", iv.end},
                       {"energy_pj", iv.energy}};
            events.push_back(std::move(ev));
        }
    }
    const nlohmann::json other = {
        {"generator", "tilescope"},      {"model", net.name},
        {"hardware", hw.name},           {"delay_cycles", e.delay},
        {"energy_pj", e.energy.total()}, {"truncated", e.intervalsTruncated}};
    return traceEventJson(events, hw.clockGHz, other, indent);
}

std::vector<TraceEvent> simTraceEvents(const SimResult& r, const Program& p) {
    std::map<int, std::pair<int, int>> xy; // tile id -> (x, y) as the program lists them
    for (const auto& t : p.tiles)
        xy[t.id] = {t.x, t.y};
    std::vector<TraceEvent> events;
    events.reserve(r.timeline.size());
    // LOADs in flight overlap; trace viewers drop slices that overlap on one track without
    // nesting, so each goes to the first load lane free at its start (the timeline is in
    // start order).
    std::map<int, std::vector<Cycles>> laneFree; // tile -> end of each load lane's last LOAD
    for (const SimInterval& iv : r.timeline) {
        TraceEvent ev;
        ev.pid = iv.tile;
        const auto it = xy.find(iv.tile);
        ev.process = "tile " + std::to_string(iv.tile) +
                     (it != xy.end() ? " (" + std::to_string(it->second.first) + "," +
                                           std::to_string(it->second.second) + ")"
                                     : std::string());
        ev.tid = int(iv.engine);
        ev.track = toString(iv.engine);
        if (iv.engine == Engine::Load) {
            auto& lanes = laneFree[iv.tile];
            size_t lane = 0;
            while (lane < lanes.size() && lanes[lane] > iv.start)
                ++lane;
            if (lane == lanes.size()) lanes.push_back(iv.end);
            lanes[lane] = iv.end;
            if (lane > 0) {
                ev.tid = 2 + int(lane);
                ev.track = "load " + std::to_string(lane + 1);
            }
        }
        const std::string layer =
            iv.layer >= 0 && size_t(iv.layer) < p.layers.size() ? p.layers[size_t(iv.layer)] : "";
        ev.label = std::string(toString(iv.op)) + (layer.empty() ? "" : " " + layer);
        ev.category = toString(iv.op);
        ev.start = iv.start;
        ev.end = iv.end;
        ev.args = {
            {"id", iv.id}, {"layer", layer}, {"start_cycle", iv.start}, {"end_cycle", iv.end}};
        events.push_back(std::move(ev));
    }
    // The DRAM's bandwidth in use over time, as a counter track of its own process (after
    // the tiles'): where the DRAM idles, nothing the program had issued was waiting for it.
    int dramPid = 0;
    for (const auto& t : p.tiles)
        dramPid = std::max(dramPid, t.id + 1);
    for (const auto& [from, used] : r.dramInUse) {
        TraceEvent ev;
        ev.pid = dramPid;
        ev.process = "DRAM";
        ev.track = "bandwidth in use";
        ev.label = "DRAM bytes/cycle";
        ev.start = ev.end = from;
        ev.args = {{"in use", used}};
        ev.counter = true;
        events.push_back(std::move(ev));
    }
    return events;
}

} // namespace tilescope
