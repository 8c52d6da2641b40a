// How loaded each link of the mesh was over an evaluated schedule, for the NoC heatmap and
// reports: the bytes the evaluation put on a link over what the link could carry while the
// schedule ran (Mesh::linkCapacity x delay).
#pragma once

#include "eval/evaluation.h"
#include "hw/mesh.h"

#include <vector>

namespace tilescope {

// linkBytes[link] / (mesh.linkCapacity(link) x delay), in [0, 1] for a schedule whose
// traffic fits its delay; 0 for a link the evaluation has no bytes for, a zero delay or a
// zero capacity.
double linkUtilisation(const Evaluation& e, const Mesh& mesh, int link);
// Every link of the evaluation, indexed like Evaluation::linkBytes.
std::vector<double> linkUtilisation(const Evaluation& e, const Hardware& hw);

} // namespace tilescope
