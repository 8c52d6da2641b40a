// Planning the DRAM layout of every feature map a schedule stores or reads there
// (docs/cost-model.md §4b, "Planning layouts"): each tensor takes one layout, its producer's
// STOREs and its consumers' LOADs make that layout's runs, and the plan minimises the DRAM's
// time by backtracking with early termination (a plan is dropped once a lower bound of it,
// the tensors still open at their cheapest, cannot beat the best found).
#pragma once

#include "eval/dram_layout.h"
#include "model/network.h"
#include "util/result.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

// How evaluate() lays out DRAM tensors: planned (auto) or every tensor in one layout, with
// tensors pinned by name (a layer's name for its output, a network input's name) in any case.
struct LayoutChoice {
    bool planned = true;
    DramLayout fixed = DramLayout::Nchw;
    std::map<std::string, DramLayout> pins;
    bool operator==(const LayoutChoice&) const = default;
};
// The first pin naming neither a layer nor a network input of `net`, as a message; nullopt
// when every pin names one.
std::optional<std::string> unknownLayoutPin(const LayoutChoice& c, const Network& net);
// "auto" or a layout's name; nullopt when unknown.
std::optional<LayoutChoice> layoutChoiceFromName(const std::string& name);
std::string layoutChoiceName(const LayoutChoice& c);
// A choice as results and sessions hold it: its name under choiceKey and its pins as an
// object {tensor: layout} under pinsKey, both members of `j` (at `where`, "" for the top
// level). Reading leaves what is absent as it is in `out`; an unknown name, or pins that
// are not such an object, is an error naming the file and the member.
std::optional<Error> readLayoutChoice(const nlohmann::json& j, const std::string& file,
                                      const std::string& where, const char* choiceKey,
                                      const char* pinsKey, LayoutChoice& out);
nlohmann::json layoutPinsJson(const LayoutChoice& c);

// The planner's problem. The DRAM's time is a sum over groups (segments) of the slowest of
// a group's entries (its total bytes at the DRAM's bandwidth, each side's at its port's),
// each entry's bytes times its rate (cycles per byte; 0: not a bound). Every tensor adds
// bytes to entries according to its layout.
struct LayoutProblem {
    int entriesPerGroup = 1;
    std::vector<double> base; // per entry (group-major): bytes whatever the layouts
    std::vector<double> rate; // per entry within a group
    double scale = 1;         // the groups' time is repeated this often
    struct Tensor {
        std::vector<DramLayout> options;
        std::vector<std::vector<std::pair<int, double>>> adds; // per option: (entry, bytes)
    };
    std::vector<Tensor> tensors;
};

struct LayoutPlan {
    std::vector<int> option; // per tensor, an index into its options
    double cycles = 0;       // the DRAM's time under the plan
    long long nodes = 0;     // plans the backtracking visited
    bool exhaustive = true;  // false when it stopped at its node limit with the best so far
};

double planCycles(const LayoutProblem& p, const std::vector<int>& option);
// Backtracking with early termination, starting from each tensor's cheapest option alone;
// stops after maxNodes visited plans with the best found.
LayoutPlan planLayouts(const LayoutProblem& p, long long maxNodes = 200000);
// Every combination (tests: small problems only).
LayoutPlan planLayoutsBruteForce(const LayoutProblem& p);

} // namespace tilescope
