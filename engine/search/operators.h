// The six tree-mutation operators of docs/method.md §4, built on the shared edit operations of
// tree/ratree.h so that the search and the GUI agree on what an edit means and on pins.
#pragma once

#include "tree/ratree.h"
#include "util/result.h"

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tilescope {

using Rng = std::mt19937_64; // the engine-owned RNG; seeded from SearchConfig, never random_device

// Uniform integer in [0, n) by the multiply-shift method: unlike
// std::uniform_int_distribution its output is the same on every standard library, so a
// seed reproduces a run on any platform.
inline int randBelow(Rng& rng, int n) {
    return int((static_cast<unsigned __int128>(rng()) * static_cast<unsigned>(n)) >> 64);
}
// Uniform double in [0, 1) from the top 53 bits.
inline double randUnit(Rng& rng) {
    return double(rng() >> 11) * 0x1.0p-53;
}

enum class Operator {
    SwapLeaves,       // 1: swap two leaves adjacent in the whole leaf order, if independent
    MoveLeaf,         // 2: move a leaf into a cut sharing its parent or grandparent
    Group,            // 3: wrap consecutive children of a cut in a new cut
    Dissolve,         // 4: delete a non-root cut, its children go to its parent
    IncreaseSubBatch, // 5: any larger divisor of the cut's batch
    DecreaseSubBatch, // 6: any smaller divisor
    // 7: another of a leaf's alternative partitions (RANode::partition), drawn only where the
    // search moves partitions (OperatorContext::partitionsOf)
    Repartition,
};
constexpr int kOperatorCount = 6; // the tree's own operators, 1 to 6
const char* toString(Operator op);

// A restricted space (LS / LP baselines, docs/search.md "Spaces"): when set, every cut
// among the root's children must have this type, and no node may lie deeper than
// maxDepth (the root at 0; 2 keeps those cuts' children leaves). Leaves at depth one are
// always allowed.
struct SpaceRule {
    std::optional<NodeType> depthOneCut;
    int maxDepth = 0; // 0: no limit
    // Why t is outside the space (naming the node), or nullopt.
    std::optional<Error> check(const RATree& t) const;
};

// Inputs every operator needs; deps is Network::transitiveDeps(), computed once per run.
struct OperatorContext {
    const Network& net;
    const std::vector<std::vector<bool>>& deps;
    SpaceRule rule;
    // Where partitions move: a leaf node's alternative partitions on the tiles it has in the
    // tree operated on (Mapper::alternatives, the mapper's choice first) into `out`. Unset:
    // operator 7 is never drawn, and the draws are those of the six alone.
    std::function<void(int node, std::vector<PartitionFactors>& out)> partitionsOf;
    // The operators drawn from: the six, and operator 7 where partitions move.
    int operatorCount() const { return partitionsOf ? kOperatorCount + 1 : kOperatorCount; }
};

// Applies one operator at a random applicable place. An Error means it could not apply
// here (nothing applicable, an edit refused, the result outside the space); frozen
// (pinned) nodes are never chosen and the edit layer refuses any change to them.
Result<RATree> applyOperator(const RATree& t, Operator op, const OperatorContext& ctx, Rng& rng);

// Picks operators uniformly at random (among ctx.operatorCount()) until one applies (at
// most maxTries attempts);
// `used` receives the operator that produced the candidate.
std::optional<RATree> proposeCandidate(const RATree& t, const OperatorContext& ctx, Rng& rng,
                                       Operator* used = nullptr, int maxTries = 32);

// Every tree one application of op can make from t, each place and choice once (inside
// ctx.rule): the random operator draws one of these. The reachability test walks them.
std::vector<RATree> neighbours(const RATree& t, Operator op, const OperatorContext& ctx);

// Divisors of n in increasing order (sub-batch counts a cut of batch n may take).
std::vector<int> divisorsOf(int n);

} // namespace tilescope
