#include "report/result_json.h"

#include "model/model_loader.h"
#include "report/layers.h"
#include "report/segments.h"
#include "tree/tree_json.h"
#include "util/json.h"

namespace tilescope {

using nlohmann::json;

namespace {

json segmentsJson(const Evaluation& e, const RATree& tree, const Network& net) {
    json segs = json::array();
    // The figures every view shows (report/segments.h); time_cycles, energy_pj and
    // dram_bytes stay per invocation as before, the total_* fields cover all invocations.
    for (const SegmentFigures& s : segmentFigures(e, tree, net)) {
        const RANode& n = tree.node(s.node);
        const NodeFigures& f = e.nodes[size_t(s.node)];
        json j = {{"path", s.path},
                  {"type", toString(n.type)},
                  {"first_layer", s.firstLayer},
                  {"last_layer", s.lastLayer},
                  {"layers", s.layers},
                  {"batch", n.batch},
                  {"sub_batch", n.subBatch},
                  {"invocations", s.invocations},
                  {"time_cycles", f.time},
                  {"energy_pj", f.energy},
                  {"dram_bytes", f.dramBytes},
                  {"total_time_cycles", s.time},
                  {"start_cycles", s.start},
                  {"delay_share_cycles", s.share},
                  {"total_energy_pj", s.energy},
                  {"total_dram_bytes", s.dramBytes},
                  {"buffer_bytes_per_tile", f.bufferPerTile},
                  {"utilisation", f.utilisation},
                  {"bound", toString(f.bound)},
                  {"weight_link_cycles", f.weightLinkCycles}};
        segs.push_back(std::move(j));
    }
    return segs;
}

// The DRAM layout plan (docs/cost-model.md §4b): what was asked, the plan's DRAM time and
// each single layout's, the best of those and the plan's gain over it.
json layoutPlanJson(const Evaluation& e) {
    const auto& lp = e.layouts;
    json fixed = json::object();
    size_t best = 0;
    for (size_t l = 0; l < lp.fixedCycles.size(); ++l) {
        fixed[layoutName(DramLayout(l))] = lp.fixedCycles[l];
        if (lp.fixedCycles[l] < lp.fixedCycles[best]) best = l;
    }
    return {
        {"layouts", layoutChoiceName(lp.choice)},
        {"pins", layoutPinsJson(lp.choice)},
        {"dram_cycles", lp.planCycles},
        {"fixed_dram_cycles", fixed},
        {"best_fixed", layoutName(DramLayout(best))},
        {"gain_over_best_fixed", lp.planCycles > 0 ? lp.fixedCycles[best] / lp.planCycles : 1.0},
        {"plans_visited", lp.planNodes},
        {"exhaustive", lp.planExhaustive}};
}

json layersJson(const Evaluation& e, const RATree& tree, const Network& net, const Hardware& hw) {
    json out = json::array();
    for (const LayerFigures& f : layerFigures(e, tree, net, hw)) {
        out.push_back({{"name", f.name},
                       {"path", tree.pathOf(f.node)},
                       {"tiles", f.tiles},
                       {"partition", f.partition},
                       {"partition_named", f.namedPartition},
                       {"batch", f.batch},
                       {"invocations", f.invocations},
                       {"time_cycles", f.time},
                       {"energy_pj", f.energy},
                       {"dram_bytes", f.dramBytes},
                       {"noc_bytes_in", f.nocBytesIn},
                       {"noc_bytes_out", f.nocBytesOut},
                       {"noc_bytes_inside", f.nocBytesInside},
                       {"moved_bytes", f.movedBytes},
                       {"io_lower_bound_bytes", f.ioLowerBoundBytes},
                       {"pebble_bound_bytes", f.pebbleBoundBytes},
                       {"compulsory_bytes", f.compulsoryBytes},
                       {"ratio", f.ratio},
                       {"array_bytes", f.arrayBytes},
                       {"array_lower_bound_bytes", f.arrayLowerBoundBytes},
                       {"array_ratio", f.arrayRatio}});
        if (e.layouts.active) { // only templates with a run model (docs/cost-model.md §4b)
            out.back()["input_layouts"] = f.inputLayouts;
            out.back()["output_layout"] = f.outputLayout;
            out.back()["dram_runs"] = f.dramRuns;
            out.back()["run_efficiency"] = f.runEfficiency;
        }
        if (f.blocks > 1) { // leaves that fit keep their keys as they were
            out.back()["blocks"] = f.blocks;
            out.back()["blocking"] = f.blocking;
            out.back()["blocking_reason"] = f.blockingReason;
            out.back()["blocking_dram_bytes"] = f.blockingDramBytes;
        }
    }
    return out;
}

} // namespace

json evaluationResultJson(const Evaluation& e, const RATree& tree, const Network& net,
                          const ResultContext& ctx) {
    json hw = ctx.hw ? hardwareToJson(*ctx.hw) : json(nullptr);
    json j = {{"valid", e.valid},
              {"reason", e.reason},
              {"energy_pj", e.energy.total()},
              {"delay_cycles", e.delay},
              {"objective", {e.objective.n, e.objective.m}},
              {"cost", e.cost},
              {"breakdown_pj",
               {{"dram", e.energy.dram},
                {"noc", e.energy.noc},
                {"mac", e.energy.mac},
                {"buffer", e.energy.buffer}}},
              {"dram_bytes", e.dramBytes},
              {"noc_hop_bytes", e.nocHopBytes},
              {"utilisation", e.utilisation},
              {"macs", e.macs},
              {"tree", treeToText(tree, net)},
              {"tree_json", treeToJsonValue(tree, net)},
              {"seed", ctx.seed ? json(*ctx.seed) : json(nullptr)},
              {"iterations", ctx.iterations},
              {"elapsed_s", ctx.elapsedSeconds},
              {"model", ctx.modelPath},
              {"model_sha256", ctx.modelSha256},
              {"hw", hw},
              {"batch", ctx.batch}};
    // Templates with chiplets: the hop-bytes over inter-chiplet links (single-chip results
    // keep their keys as they were).
    if (e.interChipletHopBytes > 0 || (ctx.hw && ctx.hw->chiplets.count() > 1))
        j["inter_chiplet_hop_bytes"] = e.interChipletHopBytes;
    // Compute-in-memory templates: crossbar programming energy and counts (MAC-array results
    // keep their keys as they were).
    if (e.energy.weightWrite > 0 || (ctx.hw && ctx.hw->arch == TileArch::Cim)) {
        j["breakdown_pj"]["weight_write"] = e.energy.weightWrite;
        j["weight_programmings"] = e.weightProgrammings;
        j["weight_programmings_default"] = e.weightProgrammingsDefault;
    }
    // The free dimensions the model was imported at (docs/import.md; static models keep
    // their keys as they were): reloading the result binds them again.
    if (!net.dims.empty()) j["dims"] = net.dims;
    // What it keeps on chip across runs (docs/cost-model.md §6): reloading keeps it again.
    if (auto kept = keptOnChipJson(net); !kept.is_null()) j["kept_on_chip"] = kept;
    // In-tile storage levels: one key per level, named as the template names it (templates
    // without levels keep their keys as they were).
    if (ctx.hw)
        for (size_t i = 0; i < ctx.hw->levels.size() && i < e.energy.levels.size(); ++i)
            j["breakdown_pj"][ctx.hw->levels[i].name] = e.energy.levels[i];
    // Leaves working in blocks (docs/cost-model.md §2b; results without keep their keys).
    if (e.blockedLeaves > 0) {
        j["blocked_leaves"] = e.blockedLeaves;
        j["blocking_dram_bytes"] = e.blockingDramBytes;
    }
    if (!e.nodes.empty()) j["segments"] = segmentsJson(e, tree, net);
    if (e.layouts.active) j["layout_plan"] = layoutPlanJson(e);
    // Lower bounds (docs/cost-model.md §2a): the network's compulsory DRAM traffic and,
    // with the detail figures, each leaf's traffic against its bound (report/layers.h).
    if (ctx.hw) {
        j["compulsory_dram_bytes"] = compulsoryDramBytes(net, *ctx.hw, ctx.batch);
        // Weights kept on chip (docs/cost-model.md §6; results without keep their keys).
        if (const Bytes kept = keptWeightBytes(net, *ctx.hw); kept > 0)
            j["kept_weight_bytes"] = kept;
        if (!e.nodes.empty()) j["layers"] = layersJson(e, tree, net, *ctx.hw);
    }
    return j;
}

json searchResultJson(const SearchResult& r, const Evaluation& bestDetail, const Network& net,
                      const ResultContext& ctx) {
    json j = evaluationResultJson(bestDetail, r.bestTree, net, ctx);
    const SearchConfig& c = r.config;
    json pins = c.pinned;
    j["mode"] = toString(c.mode);
    j["config"] = {{"seed", c.seed},
                   {"beta", c.beta},
                   {"seconds", c.seconds},
                   {"iterations", c.iterations},
                   {"t0", c.t0},
                   {"alpha", c.alpha},
                   {"mode", toString(c.mode)},
                   {"chains", c.chains},
                   {"threads", c.threads},
                   {"batch", c.totalBatch},
                   {"min_utilisation", c.minUtilisation},
                   {"objective", {c.objective.n, c.objective.m}},
                   {"pinned", pins}};
    // Only where the chiplet baseline ran, so the other modes' records keep their keys.
    if (c.mode == SearchMode::Chiplet) {
        j["config"]["chiplet_cost"] = toString(c.chiplet.cost);
        j["config"]["chiplet_chains"] = toString(c.chiplet.chains);
    }
    // Only where the search moved partitions, so other records keep their keys.
    if (c.partitions) j["config"]["partitions"] = true;
    j["config"]["choose_partitions"] = c.choosePartitions;
    if (r.partitionChoice) {
        const PartitionChoiceStats& pc = *r.partitionChoice;
        j["partition_choice"] = {{"evaluations", pc.evaluations}, {"leaves_tried", pc.leaves},
                                 {"leaves_changed", pc.changed},  {"cost_before", pc.costBefore},
                                 {"complete", pc.complete},       {"settled", pc.settled}};
    }
    // Only where blocks were tied, so other records keep their keys.
    if (r.repetition.active()) {
        const BlockRepetition& b = r.repetition;
        j["config"]["repeat_blocks"] = true;
        j["repetition"] = {
            {"blocks", b.count},
            {"layers_per_block", b.length},
            {"first_layer", net.layers[size_t(b.first)].name},
            {"last_layer", net.layers[size_t(b.first + b.count * b.length - 1)].name},
            {"searched_layers", b.searchedLayers(int(net.layers.size()))}};
    }
    j["stopped"] = r.stopped;
    // Under a time budget, what was run: replay a run of this length with --iterations.
    j["iterations_run"] = r.iterationsRun;
    j["initial"] = {{"cost", r.initialEval.cost},
                    {"energy_pj", r.initialEval.energy.total()},
                    {"delay_cycles", r.initialEval.delay},
                    {"tree", treeToText(r.initialTree, net)}};
    json chains = json::array();
    for (const auto& ch : r.chains)
        chains.push_back({{"chain", ch.chain},
                          {"seed", ch.seed},
                          {"role", ch.role},
                          {"start", ch.start},
                          {"cost", ch.bestEval.cost},
                          {"energy_pj", ch.bestEval.energy.total()},
                          {"delay_cycles", ch.bestEval.delay},
                          {"iterations", ch.iterations},
                          {"valid", ch.valid},
                          {"accepted", ch.accepted},
                          {"improvements", ch.improvements}});
    j["chains"] = chains;
    j["best_chain"] = r.bestChain;
    j["stats"] = {{"evaluations", r.stats.evaluations},
                  {"evaluations_per_s", r.stats.evaluationsPerSecond},
                  {"iterations_per_s_per_core", r.stats.iterationsPerSecondPerCore},
                  {"mapper_hit_rate", r.stats.mapperHitRate},
                  {"route_hit_rate", r.stats.routeHitRate},
                  {"valid_rate", r.stats.validRate},
                  {"accept_rate", r.stats.acceptRate}};
    return j;
}

Result<RATree> parseTreeDocument(const std::string& text, const Network& net,
                                 const std::string& file) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return makeError(file, "", "the tree file is empty");
    if (text[first] != '{') return parseTreeText(text, net, file);
    auto parsed = parseJsonText(text);
    if (!std::holds_alternative<json>(parsed)) return makeError(file, "", "not valid JSON");
    json j = std::move(std::get<json>(parsed));
    if (j.contains("sa") && j["sa"].is_object()) j = j["sa"]; // a compare result
    if (j.contains("tree_json") && j["tree_json"].is_object())
        return parseTreeJsonValue(j["tree_json"], net, file);
    if (j.contains("tree") && j["tree"].is_string())
        return parseTreeText(j["tree"].get<std::string>(), net, file);
    if (j.contains("root") || j.contains("type")) return parseTreeJsonValue(j, net, file);
    return makeError(file, "",
                     "JSON holds no tree (expected a tree JSON or a result with \"tree\")");
}

} // namespace tilescope
