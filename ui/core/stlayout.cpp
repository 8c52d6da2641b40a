#include "core/stlayout.h"

#include <algorithm>

namespace tilescope::ui {

std::vector<std::pair<int, int>> StLayout::tileRuns(const std::vector<int>& tileOrder, int begin,
                                                    int count) {
    std::vector<int> ids;
    ids.reserve(size_t(std::max(0, count)));
    for (int p = begin; p < begin + count; ++p)
        if (p >= 0 && p < int(tileOrder.size())) ids.push_back(tileOrder[size_t(p)]);
    std::sort(ids.begin(), ids.end());
    std::vector<std::pair<int, int>> runs;
    for (int id : ids) {
        if (!runs.empty() && runs.back().second + 1 == id) runs.back().second = id;
        else runs.emplace_back(id, id);
    }
    return runs;
}

std::shared_ptr<const StLayout> StLayout::build(std::shared_ptr<const Evaluation> eval, int tiles,
                                                QStringList shortNames) {
    auto l = std::make_shared<StLayout>();
    l->m_eval = std::move(eval);
    l->m_tiles = tiles;
    l->m_names = std::move(shortNames);
    const auto& ivs = l->m_eval->intervals;
    l->m_rects.reserve(ivs.size() * 2);
    for (size_t i = 0; i < ivs.size(); ++i) {
        const BusyInterval& iv = ivs[i];
        for (auto [a, b] : tileRuns(l->m_eval->tileOrder, iv.tileBegin, iv.tileCount)) {
            l->m_rects.push_back(StRect{iv.start, iv.end, a, b, iv.layer, iv.node, int(i)});
            l->m_end = std::max(l->m_end, iv.end);
            l->m_longest = std::max(l->m_longest, iv.end - iv.start);
        }
    }
    std::stable_sort(l->m_rects.begin(), l->m_rects.end(),
                     [](const StRect& a, const StRect& b) { return a.start < b.start; });
    return l;
}

size_t StLayout::firstVisible(double c) const {
    // Any rectangle starting before c - longest ends before c.
    const double from = c - m_longest;
    auto it = std::lower_bound(m_rects.begin(), m_rects.end(), from,
                               [](const StRect& r, double v) { return r.start < v; });
    return size_t(it - m_rects.begin());
}

int StLayout::hit(double cycle, int tile) const {
    int found = -1;
    for (size_t i = firstVisible(cycle); i < m_rects.size() && m_rects[i].start <= cycle; ++i) {
        const StRect& r = m_rects[i];
        if (cycle >= r.start && cycle <= r.end && tile >= r.tile0 && tile <= r.tile1) found = int(i);
    }
    return found;
}

} // namespace tilescope::ui
