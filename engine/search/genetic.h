// The genetic search (docs/search.md "Genetic search"; docs/method.md §4 names it beside
// annealing and random search as a way to drive the same operators): a steady-state
// population per chain, crossover that exchanges subtrees over the same layers, mutation by
// the six operators.
#pragma once

#include "search/strategy.h"

#include <memory>
#include <optional>
#include <vector>

namespace tilescope {

// Crossover of two RA trees: a subtree of `a` is replaced by the subtree of `b` over exactly
// the same layers (a different one: another order, nesting, types or sub-batch counts),
// the place drawn among all such pairs. The graft takes a's batch at that place; a cut whose
// sub-batch count no longer divides its batch gets the largest count that does and divides
// the old one (gcd), so the child is structurally valid. Frozen nodes of `a` are never
// replaced and a subtree holding a pinned node is never grafted. nullopt: no such pair.
std::optional<RATree> crossover(const RATree& a, const RATree& b, const Network& net, Rng& rng);

// The population behind one genetic chain. Each iteration breeds one child: two parents by
// binary tournament, their crossover (or a copy of the first), then one operator; a valid
// child joins while the population is filling and afterwards replaces the worst member when
// it is better and not already a member. So an iteration is one evaluation, as in annealing.
class GeneticPopulation final : public Population {
  public:
    static constexpr int kSize = 16;          // members
    static constexpr double kCrossover = 0.7; // share of children bred by crossover
    GeneticPopulation(const Network& net, RATree start, Evaluation startEval);
    std::optional<RATree> breed(const OperatorContext& ops, Rng& rng) override;
    bool offer(const RATree& tree, const Evaluation& eval) override;
    int size() const { return int(m_members.size()); }

  private:
    const RATree& tournament(Rng& rng) const;
    struct Member {
        RATree tree;
        double cost;
    };
    const Network& m_net;
    std::vector<Member> m_members;
};

std::unique_ptr<Strategy> makeGeneticStrategy();

} // namespace tilescope
