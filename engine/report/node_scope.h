// A node's time and energy in the two scopes the views show: one invocation (b_i samples)
// and the whole run (B_tot samples, B_tot / b_i invocations). Evaluation::nodes holds the
// time of one invocation and the energy of the whole run; every view converts through these
// functions, so a figure of one scope is the same in the tree, the Layers table and the
// reports.
#pragma once

#include "eval/evaluation.h"
#include "tree/ratree.h"
#include "util/units.h"

namespace tilescope {

// B_tot / b_i: how often `node` runs over the whole batch (at least once).
int invocationsOf(const RATree& tree, int node);

// One invocation of `node`: its time, and its share of the run's energy.
Cycles invocationTimeOf(const Evaluation& e, int node);
PicoJoules invocationEnergyOf(const Evaluation& e, const RATree& tree, int node);

// The whole run: invocation time x invocations (busy time; pipelined invocations overlap,
// so this can exceed the delay), and the node's energy over all its invocations.
Cycles runTimeOf(const Evaluation& e, const RATree& tree, int node);
PicoJoules runEnergyOf(const Evaluation& e, int node);

} // namespace tilescope
