// How far the instruction-level replay of a program is from the evaluator's estimate of
// the same schedule: one rule, used by every place that shows both figures (CLI simulate,
// the metrics and Instructions panels), so they never disagree about a warning.
#pragma once

#include <cmath>

namespace tilescope {

// The models are held to agree within 15% (docs/isa.md, "Evaluator agreement").
inline constexpr double kModelTolerance = 0.15;

struct ModelAgreement {
    double ratio = 1.0; // simulated / estimated delay
    bool agrees = true; // |ratio - 1| <= kModelTolerance (or nothing to compare)
};

inline ModelAgreement modelAgreement(double simulatedDelay, double estimatedDelay) {
    ModelAgreement a;
    if (!(estimatedDelay > 0) || !(simulatedDelay >= 0)) return a;
    a.ratio = simulatedDelay / estimatedDelay;
    a.agrees = std::abs(a.ratio - 1.0) <= kModelTolerance;
    return a;
}

} // namespace tilescope
