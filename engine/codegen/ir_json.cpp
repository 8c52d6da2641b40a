// ir.json (docs/isa.md, "IR"): the generator's per-tile workloads as JSON, whole or streamed
// one workload a line.
#include "codegen/codegen.h"

#include <ostream>
#include <string>

namespace tilescope {

namespace {

nlohmann::json endpointsJson(const std::vector<std::int32_t>& list) {
    nlohmann::json j = nlohmann::json::array();
    for (auto e : list)
        j.push_back(endpointName(e));
    return j;
}

nlohmann::json boxJson(const Box& b) {
    return {{"lo", b.lo}, {"hi", b.hi}};
}

nlohmann::json workloadJson(const IrWorkload& w, const Network& net) {
    using nlohmann::json;
    json ins = json::array();
    for (const auto& in : w.inputs)
        ins.push_back({{"input", in.index},
                       {"from", in.from},
                       {"via", in.viaDram ? "dram" : "noc"},
                       {"range", boxJson(in.range)},
                       {"sources", endpointsJson(in.sources)},
                       {"bytes", in.bytes}});
    json bufs = json::array();
    for (const auto& b : w.buffers)
        bufs.push_back({{"what", b.what},
                        {"offset", b.offset},
                        {"bytes", b.bytes},
                        {"extents", b.extents},
                        {"first_writer", b.firstWriter},
                        {"last_reader", b.lastReader}});
    const Layer& layer = net.layers[size_t(w.layer)];
    json j = {{"tile", w.tile},
              {"layer", layer.name},
              {"kind", toString(layer.kind)},
              {"segment", w.segment},
              {"segment_invocation", w.segmentInvocation},
              {"samples", {w.firstSample, w.lastSample}},
              {"ofmap", boxJson(w.ofmap)},
              {"inputs", ins},
              {"destinations", endpointsJson(w.destinations)},
              {"buffers", bufs},
              {"compute",
               {{"partition", w.partition},
                {"tiling", w.tiling},
                {"cycles", w.cycles},
                {"instruction", w.computeId}}}};
    if (!w.weights.empty())
        j["weights"] = {{"range", boxJson(w.weights)},
                        {"bytes", w.weightBytes},
                        {"source", "dram"},
                        {"loaded_here", w.weightsLoaded}};
    return j;
}

// Everything of ir.json but the workloads.
nlohmann::json irHeader(const CodegenResult& r) {
    using nlohmann::json;
    json peaks = json::object();
    for (size_t t = 0; t < r.peakBufferBytes.size(); ++t)
        peaks[std::to_string(t)] = r.peakBufferBytes[t];
    return {{"format", "tilescope-ir"},
            {"version", 1},
            {"axes", {{"activations", "b,c,h,w"}, {"weights", "k,c,r,s"}}},
            {"segments", r.layout.segments.size()},
            {"segment_batch", r.layout.segBatch},
            {"segment_invocations", r.layout.segInvocations},
            {"peak_buffer_bytes", peaks}};
}

} // namespace

nlohmann::json irToJson(const CodegenResult& r, const Network& net) {
    nlohmann::json j = irHeader(r);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& w : r.workloads)
        list.push_back(workloadJson(w, net));
    j["workloads"] = std::move(list);
    return j;
}

void writeIrJson(std::ostream& o, const CodegenResult& r, const Network& net) {
    const std::string head = irHeader(r).dump(1);
    o << head.substr(0, head.size() - 2) << ",\n \"workloads\": [";
    for (size_t k = 0; k < r.workloads.size(); ++k)
        o << (k ? ",\n  " : "\n  ") << workloadJson(r.workloads[k], net).dump();
    o << (r.workloads.empty() ? "]\n}\n" : "\n ]\n}\n");
}

} // namespace tilescope
