// SendLog's pacing: the busiest sending tile's time for a leaf's NoC pieces on a crowded
// mesh (link_accounting.h).
#include "eval/link_accounting.h"

#include <algorithm>
#include <numeric>

namespace tilescope {

double SendLog::paced(const Mesh& mesh) {
    m_piece = 0;
    if (m_tile.empty()) return 0;
    const size_t links = size_t(mesh.linkCount());
    m_route.push_back(m_links.size());
    m_total.assign(size_t(mesh.tiles()), 0.0); // per tile, the bytes it sends in all
    for (size_t i = 0; i < m_tile.size(); ++i)
        m_total[size_t(m_tile[i])] += m_bytes[i];
    bucketByLink(links);
    mergeSenders(mesh, links);
    m_slowest.assign(m_bytes.begin(), m_bytes.end());
    m_own.assign(m_bytes.size(), 0.0);
    m_others.assign(size_t(mesh.tiles()), 0.0);
    for (size_t l = 0; l < links; ++l)
        if (m_firstOn[l] < m_firstOn[l + 1]) answerLink(mesh, l);
    m_paced.assign(size_t(mesh.tiles()), 0.0);
    m_pieces.assign(size_t(mesh.tiles()), 0);
    m_scale.assign(size_t(mesh.tiles()), 0.0); // here: each tile's own pieces, unshared
    for (size_t i = 0; i < m_tile.size(); ++i) {
        m_paced[size_t(m_tile[i])] += m_slowest[i];
        m_scale[size_t(m_tile[i])] += m_own[i];
        ++m_pieces[size_t(m_tile[i])];
    }
    // A tile's pieces are done no later than its own bytes plus what the other senders
    // put on the most loaded link of its routes: the links drain at once, so the
    // others' bytes hold it up once, not once per piece (docs/cost-model.md §5,
    // "Held up once").
    for (size_t t = 0; t < m_paced.size(); ++t) {
        const double cap = m_scale[t] + m_others[t];
        m_scale[t] = m_paced[t] > cap ? cap / m_paced[t] : 1.0;
        m_paced[t] = std::min(m_paced[t], cap);
    }
    const size_t busiest =
        size_t(std::max_element(m_paced.begin(), m_paced.end()) - m_paced.begin());
    m_piece = m_pieces[busiest] > 0 ? m_paced[busiest] / m_pieces[busiest] : 0.0;
    return m_paced[busiest];
}

void SendLog::pacedByInput(const Mesh& mesh, std::vector<double>& out) {
    if (out.size() == 1) { // every piece is of that input: paced() has the sums
        out[0] = *std::max_element(m_paced.begin(), m_paced.end());
        return;
    }
    for (size_t k = 0; k < out.size(); ++k) {
        m_paced.assign(size_t(mesh.tiles()), 0.0);
        for (size_t i = 0; i < m_tile.size(); ++i)
            if (m_input[i] == k)
                m_paced[size_t(m_tile[i])] += m_slowest[i] * m_scale[size_t(m_tile[i])];
        out[k] = *std::max_element(m_paced.begin(), m_paced.end());
    }
}

void SendLog::bucketByLink(size_t links) {
    m_firstOn.assign(links + 1, 0);
    for (int l : m_links)
        ++m_firstOn[size_t(l) + 1];
    for (size_t l = 1; l <= links; ++l)
        m_firstOn[l] += m_firstOn[l - 1];
    m_onPiece.resize(m_links.size());
    m_fill.assign(m_firstOn.begin(), m_firstOn.end() - 1);
    for (size_t i = 0; i < m_tile.size(); ++i)
        for (size_t r = m_route[i]; r < m_route[i + 1]; ++r)
            m_onPiece[m_fill[size_t(m_links[r])]++] = int(i);
}

void SendLog::mergeSenders(const Mesh& mesh, size_t links) {
    m_slotW.resize(m_onPiece.size());
    m_slotOf.resize(m_onPiece.size());
    m_firstSlot.resize(links + 1);
    m_stamp.assign(size_t(mesh.tiles()), 0);
    m_slot.resize(size_t(mesh.tiles()));
    // Each sender spreads its bytes on a link over all its sending: it keeps the link
    // busy for the share W / (its bytes in all) of the time; m_rho[l] adds them up.
    m_rho.assign(links, 0.0);
    size_t w = 0;
    for (size_t l = 0; l < links; ++l) {
        m_firstSlot[l] = w;
        for (size_t e = m_firstOn[l]; e < m_firstOn[l + 1]; ++e) {
            const size_t i = size_t(m_onPiece[e]);
            const size_t t = size_t(m_tile[i]);
            m_rho[l] += m_bytes[i] / m_total[t];
            if (m_stamp[t] == l + 1) {
                m_slotW[m_slot[t]] += m_bytes[i];
            } else {
                m_stamp[t] = l + 1;
                m_slot[t] = w;
                m_slotW[w++] = m_bytes[i];
            }
            m_slotOf[e] = m_slot[t];
        }
    }
    m_firstSlot[links] = w;
}

void SendLog::answerLink(const Mesh& mesh, size_t l) {
    const size_t lo = m_firstSlot[l], n = m_firstSlot[l + 1] - lo;
    const double* senderBytes = m_slotW.data() + lo;
    const double slowness = mesh.linkSlowness(int(l));
    const double load = std::accumulate(senderBytes, senderBytes + n, 0.0);
    // Few senders: sum directly; many: their bytes sorted, with prefix sums.
    const bool sorted = n > 32;
    if (sorted) {
        m_sorted.assign(senderBytes, senderBytes + n);
        std::sort(m_sorted.begin(), m_sorted.end());
        m_prefix.resize(n + 1);
        m_prefix[0] = 0;
        for (size_t k = 0; k < n; ++k)
            m_prefix[k + 1] = m_prefix[k] + m_sorted[k];
    }
    double lastB = -1, lastAll = 0; // sum over all senders of min(W, b), for b = lastB
    for (size_t e = m_firstOn[l]; e < m_firstOn[l + 1]; ++e) {
        const size_t i = size_t(m_onPiece[e]);
        const double b = m_bytes[i];
        if (b != lastB) {
            lastB = b;
            if (sorted) {
                const size_t k = size_t(std::upper_bound(m_sorted.begin(), m_sorted.end(), b) -
                                        m_sorted.begin());
                lastAll = m_prefix[k] + b * double(n - k);
            } else {
                lastAll = 0;
                for (size_t k = 0; k < n; ++k)
                    lastAll += std::min(senderBytes[k], b);
            }
        }
        double time = b + (lastAll - std::min(m_slotW[m_slotOf[e]], b));
        const double rho = m_rho[l] - m_slotW[m_slotOf[e]] / m_total[size_t(m_tile[i])];
        if (rho < 1) time = std::min(time, b / (1 - rho));
        m_slowest[i] = std::max(m_slowest[i], time * slowness);
        m_own[i] = std::max(m_own[i], b * slowness);
        double& others = m_others[size_t(m_tile[i])];
        others = std::max(others, (load - m_slotW[m_slotOf[e]]) * slowness);
    }
}

} // namespace tilescope
