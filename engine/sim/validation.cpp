#include "sim/validation.h"

#include "sim/flat_program.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>

namespace tilescope {

namespace {

// Builds the validation error for instruction `id`.
struct BadInstruction {
    const std::string& file;
    Error operator()(std::uint32_t id, const std::string& why) const {
        return makeError(file, "instruction " + std::to_string(id), why);
    }
};

std::optional<Error> checkTiles(const Program& p, const Hardware& hw, const std::string& file) {
    const int tiles = hw.tiles();
    std::set<int> seenTiles;
    for (const auto& t : p.tiles) {
        if (t.id < 0 || t.id >= tiles)
            return makeError(file, "tile " + std::to_string(t.id),
                             "no such tile on a " + std::to_string(hw.meshX) + "x" +
                                 std::to_string(hw.meshY) + " mesh");
        if (!seenTiles.insert(t.id).second)
            return makeError(file, "tile " + std::to_string(t.id), "listed twice");
    }
    return std::nullopt;
}

std::optional<Error> indexInstructions(const Program& p, FlatProgram& f,
                                       const BadInstruction& bad) {
    prepareIndex(p, f.index);
    for (const auto& t : p.tiles)
        for (const auto& i : t.instructions) {
            if (!f.index.emplace(i.id, f.ins.size())) return bad(i.id, "duplicate instruction id");
            f.ins.push_back(&i);
        }
    return std::nullopt;
}

// One instruction on its own: stages, endpoints, operation, dependencies, buffers.
std::optional<Error> checkInstruction(const Instruction& i, const FlatProgram& f,
                                      const Hardware& hw, const BadInstruction& bad) {
    const int tiles = hw.tiles();
    auto inMesh = [&](std::int32_t e) { return e == kDram || (e >= 0 && e < tiles); };
    if (i.stages < 1 || i.stages > 4096)
        return bad(i.id, "stage count " + std::to_string(i.stages) + " out of range 1..4096");
    if (!inMesh(i.src) || !inMesh(i.dst)) return bad(i.id, "endpoint outside the mesh");
    for (auto m : i.mcast)
        if (m < 0 || m >= tiles)
            return bad(i.id,
                       "multicast destination tile:" + std::to_string(m) + " outside the mesh");
    if (i.core >= 0) {
        if (i.op != Op::Compute && i.op != Op::Program)
            return bad(i.id,
                       std::string(toString(i.op)) + " runs on the tile's engines, not a core");
        if (hw.arch != TileArch::Cim || i.core >= hw.cim.cores)
            return bad(i.id, "core " + std::to_string(i.core) + " outside the tile's " +
                                 std::to_string(hw.arch == TileArch::Cim ? hw.cim.cores : 0) +
                                 " compute-in-memory cores");
    }
    switch (i.op) {
    case Op::Load:
        if (i.dst != i.tile)
            return bad(i.id, "LOAD must write its own tile (dst " + endpointName(i.dst) + ")");
        if (i.src == i.tile) return bad(i.id, "LOAD from its own tile");
        break;
    case Op::Store:
        if (i.dst != kDram || i.src != i.tile)
            return bad(i.id, "STORE must go from its own tile to dram");
        break;
    case Op::Send:
        if (i.dst == kDram || i.src != i.tile)
            return bad(i.id, "SEND must go from its own tile to a tile");
        break;
    case Op::Compute:
        break;
    case Op::Program: // crossbar writes on the compute engine, from the tile's own buffer
        if (i.src != i.tile || i.dst != i.tile)
            return bad(i.id, "PROGRAM must write its own tile's crossbars");
        break;
    }
    for (const auto& d : i.deps) {
        const size_t at = f.index.find(d.id);
        if (at == IdIndex::npos)
            return bad(i.id, "missing dependency target " + std::to_string(d.id));
        if (d.id == i.id) return bad(i.id, "depends on itself");
        const Instruction& q = *f.ins[at];
        if (d.stage < 1 || d.stage > q.stages)
            return bad(i.id, "dependency on " + std::to_string(d.id) + " names stage " +
                                 std::to_string(d.stage) + " of " + std::to_string(q.stages));
    }
    for (const auto& b : i.buffers) {
        if (b.tile < 0 || b.tile >= tiles)
            return bad(i.id, "buffer on tile " + std::to_string(b.tile) + " outside the mesh");
        if (double(b.offset) + double(b.bytes) > hw.bufferBytes)
            return bad(i.id, "buffer over capacity: tile " + std::to_string(b.tile) + " region [" +
                                 std::to_string(b.offset) + ", " +
                                 std::to_string(b.offset + b.bytes) + ") exceeds the " +
                                 std::to_string(std::uint64_t(hw.bufferBytes)) + "-byte buffer");
    }
    return std::nullopt;
}

// Every SEND destination has a consumer: an instruction on that tile that depends on
// it (the generator's computes read the SEND's data straight from their buffer; a
// LOAD from the sender acknowledging it counts too). Every LOAD from a tile waits for a
// SEND of that tile to it.
std::optional<Error> checkSendsConsumed(const FlatProgram& f, const BadInstruction& bad) {
    std::vector<std::pair<std::uint32_t, int>> received; // (SEND id, tile of a consumer)
    for (const Instruction* ip : f.ins) {
        const Instruction& i = *ip;
        const bool remoteLoad = i.op == Op::Load && i.src != kDram;
        bool matched = false;
        for (const auto& d : i.deps) {
            const Instruction& q = *f.ins[f.index.at(d.id)];
            if (q.op != Op::Send || (remoteLoad && q.tile != i.src)) continue;
            if (q.sendsTo(i.tile)) {
                received.emplace_back(q.id, i.tile);
                matched = true;
            }
        }
        if (remoteLoad && !matched)
            return bad(i.id,
                       "LOAD from " + endpointName(i.src) +
                           " depends on no SEND of that tile to tile:" + std::to_string(i.tile));
    }
    std::sort(received.begin(), received.end());
    received.erase(std::unique(received.begin(), received.end()), received.end());
    for (const Instruction* ip : f.ins) {
        const Instruction& i = *ip;
        if (i.op != Op::Send) continue;
        for (auto d : i.destinations())
            if (!std::binary_search(received.begin(), received.end(), std::make_pair(i.id, int(d))))
                return bad(i.id, "SEND without a consumer: no instruction on tile:" +
                                     std::to_string(d) + " depends on it");
    }
    return std::nullopt;
}

// The dependency graph plus the in-order queue of each engine, successor lists in one
// array (CSR): programs run to millions of instructions.
struct SuccessorGraph {
    std::vector<int> indeg;
    std::vector<size_t> first;
    std::vector<std::uint32_t> succ;
    std::span<const std::uint32_t> successors(size_t k) const {
        return std::span<const std::uint32_t>(succ.data() + first[k], first[k + 1] - first[k]);
    }
};

void buildSuccessors(const FlatProgram& f, SuccessorGraph& g) {
    const size_t n = f.ins.size();
    std::vector<int>& indeg = g.indeg;
    std::vector<size_t>& first = g.first;
    indeg.assign(n, 0);
    first.assign(n + 1, 0);
    std::vector<size_t> prevOnQueue(n, n);
    {
        std::map<std::pair<int, int>, size_t> lastOf;
        for (size_t k = 0; k < n; ++k) {
            const Instruction& i = *f.ins[k];
            const auto key = std::make_pair(i.tile, int(i.engine()));
            if (auto it = lastOf.find(key); it != lastOf.end())
                prevOnQueue[k] = it->second, ++first[it->second + 1];
            lastOf[key] = k;
            for (const auto& d : i.deps)
                ++first[f.index.at(d.id) + 1];
        }
    }
    for (size_t k = 0; k < n; ++k)
        first[k + 1] += first[k];
    std::vector<std::uint32_t>& succ = g.succ;
    succ.assign(first[n], 0);
    {
        std::vector<size_t> fill(first.begin(), first.end() - 1);
        for (size_t k = 0; k < n; ++k) {
            if (prevOnQueue[k] < n) succ[fill[prevOnQueue[k]]++] = std::uint32_t(k), ++indeg[k];
            for (const auto& d : f.ins[k]->deps)
                succ[fill[f.index.at(d.id)]++] = std::uint32_t(k), ++indeg[k];
        }
    }
}

// Called with the in-degrees left by a topological walk that did not reach every node.
Error reportCycle(const FlatProgram& f, const SuccessorGraph& g, const BadInstruction& bad) {
    const size_t n = f.ins.size();
    const std::vector<int>& indeg = g.indeg;
    // Walk predecessors inside the unresolved set until one repeats: that is a cycle.
    std::vector<std::vector<size_t>> pred(n);
    for (size_t k = 0; k < n; ++k)
        for (size_t s : g.successors(k))
            if (indeg[s] > 0 && indeg[k] > 0) pred[s].push_back(k);
    size_t cur = 0;
    while (indeg[cur] == 0)
        ++cur;
    std::vector<size_t> path;
    std::map<size_t, size_t> pos;
    while (!pos.count(cur)) {
        pos[cur] = path.size();
        path.push_back(cur);
        cur = pred[cur].front();
    }
    std::string cyc;
    for (size_t q = path.size(); q-- > pos[cur];)
        cyc += std::to_string(f.ins[path[q]]->id) + " -> ";
    cyc += std::to_string(f.ins[path.back()]->id);
    return bad(f.ins[cur]->id, "dependency cycle (dependencies and in-order queues): " + cyc);
}

// Acyclic: dependencies plus the in-order queue of each engine (a dependency on a later
// instruction of the same queue can never be met either).
std::optional<Error> checkAcyclic(const FlatProgram& f, const BadInstruction& bad) {
    const size_t n = f.ins.size();
    SuccessorGraph g;
    buildSuccessors(f, g);
    std::vector<int>& indeg = g.indeg;
    std::vector<size_t> ready;
    for (size_t k = 0; k < n; ++k)
        if (!indeg[k]) ready.push_back(k);
    size_t seen = 0;
    while (!ready.empty()) {
        const size_t k = ready.back();
        ready.pop_back();
        ++seen;
        for (size_t s : g.successors(k))
            if (--indeg[s] == 0) ready.push_back(s);
    }
    if (seen != n) return reportCycle(f, g, bad);
    return std::nullopt;
}

} // namespace

std::optional<Error> validateProgram(const Program& p, const Hardware& hw,
                                     const std::string& file) {
    const BadInstruction bad{file};
    if (auto err = checkTiles(p, hw, file)) return err;
    FlatProgram f;
    if (auto err = indexInstructions(p, f, bad)) return err;
    for (const Instruction* ip : f.ins)
        if (auto err = checkInstruction(*ip, f, hw, bad)) return err;
    if (auto err = checkSendsConsumed(f, bad)) return err;
    return checkAcyclic(f, bad);
}

} // namespace tilescope
