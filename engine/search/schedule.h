// The annealing math of docs/method.md §4: the temperature schedule and the Metropolis acceptance
// rule. Small, pure and unit-tested (tests/engine/tst_search.cpp) so the loop stays plain.
#pragma once

#include <cmath>

namespace tilescope::sa {

// T_n = T0 (1 - x) / (1 + alpha x), x = n / N: starts at T0, falls fast, ends at 0.
inline double temperature(double t0, double alpha, double n, double total) {
    if (total <= 0) return 0.0;
    double x = n / total;
    if (x < 0) x = 0;
    if (x > 1) x = 1;
    return t0 * (1.0 - x) / (1.0 + alpha * x);
}

// P = exp(-((c' - c) / c) / T) for a worse candidate c' > c, else 1. The relative step
// makes T independent of the objective's scale (E^2 D and E D^2 differ by many decades).
// At T = 0 (the end of the schedule) a worse candidate is never taken.
inline double acceptanceProbability(double current, double candidate, double temp) {
    if (!(candidate > current)) return 1.0;
    if (temp <= 0 || !(current > 0)) return 0.0;
    return std::exp(-((candidate - current) / current) / temp);
}

// The Metropolis test given a uniform draw u in [0, 1): accept iff u < P. Separate from
// the RNG so the decision is testable with hand-chosen draws.
inline bool metropolisAccept(double current, double candidate, double temp, double u) {
    if (!(candidate > current)) return true;
    return u < acceptanceProbability(current, candidate, temp);
}

} // namespace tilescope::sa
