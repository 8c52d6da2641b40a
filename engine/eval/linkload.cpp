#include "eval/linkload.h"

namespace tilescope {

double linkUtilisation(const Evaluation& e, const Mesh& mesh, int link) {
    if (link < 0 || size_t(link) >= e.linkBytes.size()) return 0;
    const double capacity = mesh.linkCapacity(link);
    return e.delay > 0 && capacity > 0 ? e.linkBytes[size_t(link)] / (capacity * e.delay) : 0;
}

std::vector<double> linkUtilisation(const Evaluation& e, const Hardware& hw) {
    const Mesh mesh(hw);
    std::vector<double> u(e.linkBytes.size());
    for (size_t l = 0; l < u.size(); ++l)
        u[l] = linkUtilisation(e, mesh, int(l));
    return u;
}

TileLoad tileLoad(const Evaluation& e, int tiles) {
    return tileLoad(e, tiles, [](int) { return true; });
}

} // namespace tilescope
