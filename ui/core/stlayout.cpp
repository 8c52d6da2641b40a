#include "core/stlayout.h"

#include "core/meshregions.h"
#include "core/programrun.h"
#include "hw/mesh.h"

#include <algorithm>
#include <unordered_map>

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
        if (!runs.empty() && runs.back().second + 1 == id)
            runs.back().second = id;
        else
            runs.emplace_back(id, id);
    }
    return runs;
}

StRowOrder StRowOrder::forHardware(const Hardware& hw) {
    StRowOrder o;
    o.period = hw.meshX;
    if (std::max(hw.meshX, hw.meshY) <= MeshRegions::kSmallMeshSide) return o;
    o.tileOfRow = Mesh(hw).snakeOrder();
    o.period = std::max(1, hw.stripe) * hw.meshY; // one stripe of the snake
    return o;
}

std::shared_ptr<const StLayout> StLayout::build(std::shared_ptr<const Evaluation> eval, int tiles,
                                                QStringList shortNames, StRowOrder rows) {
    auto l = std::make_shared<StLayout>();
    l->m_eval = std::move(eval);
    l->m_tiles = tiles;
    l->m_names = std::move(shortNames);
    l->m_order = std::move(rows);
    const auto& ivs = l->m_eval->intervals;
    l->m_rects.reserve(ivs.size() * 2);
    for (size_t i = 0; i < ivs.size(); ++i) {
        const BusyInterval& iv = ivs[i];
        if (l->m_order.snake()) { // the group's snake positions: one run of rows
            const int a = std::max(0, iv.tileBegin);
            const int b = std::min(tiles, iv.tileBegin + iv.tileCount) - 1;
            if (a <= b)
                l->m_rects.push_back(StRect{iv.start, iv.end, a, b, iv.layer, iv.node, int(i)});
            continue;
        }
        for (auto [a, b] : tileRuns(l->m_eval->tileOrder, iv.tileBegin, iv.tileCount)) {
            l->m_rects.push_back(StRect{iv.start, iv.end, a, b, iv.layer, iv.node, int(i)});
        }
    }
    l->finish();
    return l;
}

std::shared_ptr<const StLayout> StLayout::fromSimulation(std::shared_ptr<const ProgramRun> run,
                                                         int tiles, QStringList shortNames,
                                                         const RATree& tree, StRowOrder rows) {
    auto l = std::make_shared<StLayout>();
    l->m_run = std::move(run);
    l->m_tiles = tiles;
    l->m_names = std::move(shortNames);
    l->m_order = std::move(rows);
    std::vector<int> rowOf(size_t(std::max(0, tiles)));
    for (int r = 0; r < tiles; ++r)
        rowOf[size_t(l->tileOfRow(r))] = r;
    const auto& tl = l->m_run->fine.timeline;
    l->m_rects.reserve(tl.size());
    for (const SimInterval& iv : tl) {
        const int row = iv.tile >= 0 && iv.tile < tiles ? rowOf[size_t(iv.tile)] : iv.tile;
        StRect r{iv.start, iv.end, row, row, iv.layer, iv.layer >= 0 ? tree.leafOf(iv.layer) : -1,
                 -1};
        r.instruction = iv.id;
        // Transfers share the row with compute: thin bars keep compute readable.
        if (iv.engine == Engine::Load)
            r.y1 = 0.2f;
        else if (iv.engine == Engine::Store)
            r.y0 = 0.8f;
        l->m_rects.push_back(r);
    }
    l->finish();
    return l;
}

int StLayout::rowGroupSize(double pixelsPerTile, int tiles, int period) {
    if (pixelsPerTile >= kThinRowPx || tiles <= 1) return 1;
    const int w = std::clamp(period > 0 ? period : tiles, 1, tiles);
    for (int d = 2; d <= w; ++d)
        if (w % d == 0 && d * pixelsPerTile >= kGroupRowPx) return d;
    int g = w;
    while (g * pixelsPerTile < kGroupRowPx && g < tiles)
        g *= 2;
    return std::min(g, tiles);
}

std::shared_ptr<const StLayout> StLayout::grouped(int rowTiles) const {
    auto l = std::make_shared<StLayout>();
    l->m_eval = m_eval;
    l->m_run = m_run;
    l->m_names = m_names;
    l->m_tiles = m_tiles;
    l->m_order = m_order;
    const int g = l->m_rowTiles = std::max(1, rowTiles);
    const long long rows = (m_tiles + g - 1) / g;
    auto tilesIn = [&](int row) { return std::min(g, m_tiles - row * g); };
    // (interval, row) -> its piece: one interval's tile runs in one row become one piece.
    std::unordered_map<long long, size_t> pieceOf;
    l->m_rects.reserve(m_rects.size());
    for (const StRect& r : m_rects) {
        auto add = [&](int rowA, int rowB, int covered) {
            if (rowA > rowB) return;
            if (rowA == rowB && r.interval >= 0) {
                const auto [it, fresh] =
                    pieceOf.try_emplace(r.interval * rows + rowA, l->m_rects.size());
                if (!fresh) {
                    l->m_rects[it->second].covered += covered;
                    return;
                }
            }
            StRect p = r;
            p.tile0 = rowA * g;
            p.tile1 = std::min(m_tiles, (rowB + 1) * g) - 1;
            p.covered = covered;
            l->m_rects.push_back(p);
        };
        const int first = r.tile0 / g, last = r.tile1 / g;
        if (first == last) {
            add(first, first, r.tile1 - r.tile0 + 1);
            continue;
        }
        add(first, first, (first + 1) * g - r.tile0);
        add(first + 1, last - 1, std::min(m_tiles, last * g) - (first + 1) * g);
        add(last, last, r.tile1 - last * g + 1);
    }
    for (StRect& p : l->m_rects) {
        const int row = p.tile0 / g;
        if (p.interval >= 0 && p.tile1 / g == row && p.covered < tilesIn(row))
            p.y1 = std::max(0.25f, float(p.covered) / float(tilesIn(row)));
    }
    l->finish();
    return l;
}

void StLayout::finish() {
    for (const StRect& r : m_rects) {
        m_end = std::max(m_end, r.end);
        m_longest = std::max(m_longest, r.end - r.start);
    }
    std::stable_sort(m_rects.begin(), m_rects.end(),
                     [](const StRect& a, const StRect& b) { return a.start < b.start; });
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
        if (cycle >= r.start && cycle <= r.end && tile >= r.tile0 && tile <= r.tile1)
            found = int(i);
    }
    return found;
}

int StLayout::blocksOf(const StRect& r) const {
    if (!m_eval || r.node < 0 || size_t(r.node) >= m_eval->nodes.size()) return 1;
    return m_eval->nodes[size_t(r.node)].blocks;
}

} // namespace tilescope::ui
