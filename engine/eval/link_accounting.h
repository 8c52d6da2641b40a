// Link accounting for a leaf's transfers (internal to engine/eval): per-link bytes of a set of
// transfers (LinkTally) and the time the NoC pieces of a leaf take on a crowded mesh, each
// sending tile's pieces one after another, paced by the links they share (SendLog).
#pragma once

#include "hw/mesh.h"

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

namespace tilescope {

// Per-link bytes of a set of transfers; a multicast loads each link of the union of its
// routes once.
class LinkTally {
  public:
    // Sized for `links` (grows only; everything is zero between uses).
    void ensure(int links) {
        if (m_bytes.size() >= size_t(links)) return;
        m_bytes.resize(size_t(links), 0.0);
        m_mark.resize(size_t(links), 0);
        m_seen.resize(size_t(links), 0);
    }
    // A route without repeated links (a multicastRoute tree): no marking needed.
    void addUnique(std::span<const int> route, double bytes) {
        for (int l : route) {
            if (!m_seen[size_t(l)]) m_seen[size_t(l)] = 1, m_touched.push_back(l);
            m_bytes[size_t(l)] += bytes;
        }
    }
    void add(const std::vector<int>& route, double bytes) {
        for (int l : route) {
            if (m_mark[size_t(l)]) continue;
            m_mark[size_t(l)] = 1;
            if (!m_seen[size_t(l)]) m_seen[size_t(l)] = 1, m_touched.push_back(l);
            m_bytes[size_t(l)] += bytes;
        }
        for (int l : route)
            m_mark[size_t(l)] = 0;
    }
    // Moves the tally out as sparse (link, bytes) pairs sorted by link; returns the busiest
    // link's bytes at NoC bandwidth (bytes x Mesh::linkSlowness).
    double take(const Mesh& mesh, std::vector<std::pair<int, double>>& out) {
        if (m_touched.size() * 8 > m_seen.size()) { // many: a scan of the marks is cheaper
            m_touched.clear();
            for (size_t l = 0; l < m_seen.size(); ++l)
                if (m_seen[l]) m_touched.push_back(int(l));
        } else {
            std::sort(m_touched.begin(), m_touched.end());
        }
        double mx = 0;
        for (int l : m_touched) {
            out.emplace_back(l, m_bytes[size_t(l)]);
            mx = std::max(mx, m_bytes[size_t(l)] * mesh.linkSlowness(l));
            m_bytes[size_t(l)] = 0.0;
            m_seen[size_t(l)] = 0;
        }
        m_touched.clear();
        return mx;
    }
    // Clears the tally; returns its busiest link's bytes at NoC bandwidth.
    double takeMax(const Mesh& mesh) {
        double mx = 0;
        for (int l : m_touched) {
            mx = std::max(mx, m_bytes[size_t(l)] * mesh.linkSlowness(l));
            m_bytes[size_t(l)] = 0.0;
            m_seen[size_t(l)] = 0;
        }
        m_touched.clear();
        return mx;
    }

  private:
    std::vector<double> m_bytes;
    std::vector<char> m_mark, m_seen;
    std::vector<int> m_touched;
};

// The NoC input pieces of a leaf (sender tile, bytes, route) and how long they take on a
// crowded mesh (docs/cost-model.md §5): a tile's SEND engine sends its pieces one after
// another, and a piece on a link shared with other tiles' SENDs moves at an equal share
// while they have bytes left there: b + sum over the other senders s of min(W_s, b), for
// its own bytes b and W_s the bytes s sends over the link (fluid round-robin, as the
// replay's links). But a sender's SENDs follow one another, so its bytes on one link are
// spread over all its sending (T_s bytes in all): it keeps the link busy for the share
// rho_s = W_s / T_s of the time, and a piece that shares the link with senders whose
// shares add up to rho < 1 takes at most b / (1 - rho) (all at once, a 6x6 mobilenet_v2
// exchange was 5,899 cycles where the replay's busiest tile's SENDs spanned 2,392). A piece
// takes the longest of its route's links (an inter-chiplet link's time scaled by
// Mesh::linkSlowness); per tile, its pieces add up, but to no more than its own bytes plus
// the most bytes the other senders put on one link of its routes (the links drain at once:
// "Held up once").
class SendLog {
  public:
    void clear() {
        m_tile.clear();
        m_bytes.clear();
        m_route.clear();
        m_links.clear();
        m_input.clear();
    }
    void add(int tile, double bytes, const std::vector<int>& route, size_t input) {
        m_input.push_back(input);
        m_tile.push_back(tile);
        m_bytes.push_back(bytes);
        m_route.push_back(m_links.size());
        m_links.insert(m_links.end(), route.begin(), route.end());
    }
    // The busiest sending tile's time, in bytes at a link's full bandwidth (0: no pieces).
    // Linear in the pieces' route links: bucket the (piece, link) entries by link (counting
    // sort), merge each link's entries per sender (stamped slots), then answer each link's
    // entries together from its senders' bytes, and each piece takes its slowest link.
    // Every byte count is a whole number (exact in a double), so the sums do not depend on
    // the order they are taken in; the pieces' times are added per tile in piece order.
    double paced(const Mesh& mesh);
    // After paced(): the busiest tile's time per piece, its pieces' mean.
    double pieceTime() const { return m_piece; }
    // After paced(): per input, the most time one tile's pieces of it take (their paced
    // times added up, scaled down as the tile's whole sum was).
    void pacedByInput(const Mesh& mesh, std::vector<double>& out);

  private:
    // m_onPiece[e]: the piece of entry e, entries grouped by link (m_firstOn[l] is link l's
    // first entry).
    void bucketByLink(size_t links);
    // Per link, one slot per sender with the bytes it sends over the link (m_firstSlot[l]
    // is link l's first slot); m_slotOf[e]: the slot of entry e's sender.
    void mergeSenders(const Mesh& mesh, size_t links);
    // A piece of b bytes on link l waits for min(W, b) of every other sender's W there:
    // b + sum over the link's senders of min(W, b) - min(own W, b); and no longer than
    // b / (1 - rho), rho the other senders' share of the link (m_rho, below 1). Also
    // notes, per piece, its own time on its slowest link (m_own) and, per sender, the
    // most bytes the others put on one of its links (m_others), both x the slowness.
    void answerLink(const Mesh& mesh, size_t l);

    double m_piece = 0;
    std::vector<int> m_tile, m_links, m_onPiece, m_pieces;
    std::vector<double> m_bytes, m_paced, m_sorted, m_prefix, m_slotW, m_slowest, m_total, m_rho;
    std::vector<double> m_own, m_others, m_scale;
    // m_route: each piece's first entry in m_links.
    std::vector<size_t> m_input, m_route, m_firstOn, m_fill, m_firstSlot, m_slotOf, m_stamp, m_slot;
};

} // namespace tilescope
