// Link accounting for a leaf's transfers (internal to engine/eval): per-link bytes of a set of
// transfers (LinkTally) and the time the NoC pieces of a leaf take on a crowded mesh, each
// sending tile's pieces one after another, paced by the links they share (SendLog).
#pragma once

#include "hw/mesh.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tilescope {

// Internal linkage on purpose: each file that includes this gets its own copy. The engine's
// one user, leaf_traffic.cpp, keeps one SendLog per thread, and with the class local to it
// the compiler specialises SendLog::paced for that object, as it did when the class lived
// in that file (about 7% of paced()'s time on the cloud preset; the tests take their copy).
namespace {

// Scratch that only grows: resizing down and up again would clear the regrown part.
template <class T> void growTo(std::vector<T>& v, size_t n) {
    if (v.size() < n) v.resize(n);
}

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
    // Adds `bytes` to one link.
    void addLink(int l, double bytes) {
        if (!m_seen[size_t(l)]) m_seen[size_t(l)] = 1, m_touched.push_back(l);
        m_bytes[size_t(l)] += bytes;
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
    // A DRAM transfer's route (Mesh::routeFromDram, routeToDram, multicastFromDram): each
    // link once, or where memory is interleaved over the ports each appearance with its
    // share of the bytes (Mesh::dramShare).
    void addDram(const Mesh& mesh, const std::vector<int>& route, double bytes) {
        if (!mesh.interleaved()) return add(route, bytes);
        const double share = bytes * mesh.dramShare();
        for (int l : route)
            addLink(l, share);
    }
    // Adds another tally's bytes (it keeps them). Byte counts are whole numbers (exact in a
    // double), so a link's sum does not depend on the order they are added in.
    void addFrom(const LinkTally& o) {
        for (int l : o.m_touched) {
            if (!m_seen[size_t(l)]) m_seen[size_t(l)] = 1, m_touched.push_back(l);
            m_bytes[size_t(l)] += o.m_bytes[size_t(l)];
        }
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
        for (int c = 0; c < 2; ++c) {
            for (int l : m_used[c])
                m_onLink[c][size_t(l)] = 0, m_linkBytes[c][size_t(l)] = 0.0;
            m_used[c].clear();
        }
    }
    void add(int tile, double bytes, const std::vector<int>& route, size_t input) {
        std::vector<int>& links = open(tile, bytes, input);
        links.insert(links.end(), route.begin(), route.end());
        close(0);
    }
    // Starts a piece whose route the caller appends to the vector returned (no copy).
    std::vector<int>& open(int tile, double bytes, size_t input) {
        m_input.push_back(input);
        m_tile.push_back(tile);
        m_bytes.push_back(bytes);
        m_route.push_back(m_links.size());
        return m_links;
    }
    // The last piece's route.
    std::span<const int> lastRoute() const {
        return {m_links.data() + m_route.back(), m_links.size() - m_route.back()};
    }
    // Ends the piece open() started, once its route is in: its links' entry counts (for
    // paced) and bytes, in class `cls` (0 or 1) of the per-link bytes (takeLinkBytes). A
    // route without repeated links (a multicastRoute tree).
    void close(int cls) {
        const double bytes = m_bytes.back();
        std::vector<std::uint32_t>& onLink = m_onLink[cls];
        std::vector<double>& linkBytes = m_linkBytes[cls];
        for (int l : lastRoute()) {
            if (size_t(l) >= onLink.size()) growLinks(size_t(l) + 1);
            if (onLink[size_t(l)]++ == 0) m_used[cls].push_back(l);
            linkBytes[size_t(l)] += bytes;
        }
    }
    // Adds class cls's bytes per link to `into` (the links its pieces cross, as a tally of
    // their routes would: whole numbers, so the same sums).
    void takeLinkBytes(int cls, LinkTally& into) const {
        for (int l : m_used[cls])
            into.addLink(l, m_linkBytes[cls][size_t(l)]);
    }
    // The busiest sending tile's time, in bytes at a link's full bandwidth (0: no pieces).
    // Linear in the pieces' route links, whatever the mesh's size: bucket the (piece, link)
    // entries by link (counting sort over the links the pieces cross), merge each link's
    // entries per sender (stamped slots), then answer each link's entries together from its
    // senders' bytes, and each piece takes its slowest link.
    // Every byte count is a whole number (exact in a double), so the sums do not depend on
    // the order they are taken in; the pieces' times are added per tile in piece order.
    double paced(const Mesh& mesh);
    // After paced(): the busiest tile's time per piece, its pieces' mean.
    double pieceTime() const { return m_piece; }
    // The pieces logged and their routes' links in all.
    size_t pieceCount() const { return m_tile.size(); }
    size_t entryCount() const { return m_links.size(); }
    // The bytes of the largest piece (0: no pieces).
    double largestPiece() const {
        return m_bytes.empty() ? 0.0 : *std::max_element(m_bytes.begin(), m_bytes.end());
    }
    // After paced(): per input, the most time one tile's pieces of it take (their paced
    // times added up, scaled down as the tile's whole sum was).
    void pacedByInput(const Mesh& mesh, std::vector<double>& out);

  private:
    void growLinks(size_t n) {
        for (int c = 0; c < 2; ++c) {
            growTo(m_onLink[c], n);
            growTo(m_linkBytes[c], n);
        }
    }
    // m_onPiece[e]: the piece of entry e, entries grouped by link, the links in m_crossed
    // (m_fill[l] is one past link l's last entry; its first is that less its entries).
    void bucketByLink();
    // The entries on link l, in both classes.
    size_t entriesOn(int l) const {
        return size_t(m_onLink[0][size_t(l)]) + m_onLink[1][size_t(l)];
    }
    // The most time one sender's pieces take (m_paced; 0 with no senders).
    double slowestSender() const;
    // Per link, one slot per sender with the bytes it sends over the link (m_slotW, from
    // 0 for each link); m_slotOf[e - first]: the slot of entry e's sender. Each link is
    // answered (answerLink, n slots) as soon as its slots are in, while its pieces are in
    // cache.
    void mergeSenders(const Mesh& mesh);
    // A piece of b bytes on link l waits for min(W, b) of every other sender's W there:
    // b + sum over the link's senders of min(W, b) - min(own W, b); and no longer than
    // b / (1 - rho), rho the other senders' share of the link (rhoL less its own, below 1),
    // its entries [first, end). Also
    // notes, per sender, the most bytes the others put on one of its links (m_others), x
    // the slowness.
    void answerLink(const Mesh& mesh, int l, size_t n, double rhoL, size_t first, size_t end);
    // Per piece, its own time on its route's slowest link (m_own): its bytes x the route's
    // largest slowness (0 for an empty route).
    void ownTimes(const Mesh& mesh);

    // What the per-link passes read of a piece, side by side (one cache line per entry):
    // its bytes, its share of its sender's bytes, its time so far on its slowest link.
    struct PieceAt {
        double bytes, share, slowest;
        std::uint32_t tile;
    };

    double m_piece = 0;
    std::vector<int> m_tile, m_links, m_onPiece, m_pieces;
    std::vector<double> m_bytes, m_paced, m_sorted, m_prefix, m_slotW, m_total;
    std::vector<double> m_own, m_others, m_scale, m_slotShare;
    std::vector<PieceAt> m_at;
    std::vector<std::uint32_t> m_slotOf;
    // Per class (close), per link: the entries on it and their pieces' bytes.
    std::array<std::vector<std::uint32_t>, 2> m_onLink;
    std::array<std::vector<double>, 2> m_linkBytes;
    // Per class, the links with entries in it (clear() resets only those); m_crossed: the
    // links with entries in either.
    std::array<std::vector<int>, 2> m_used;
    std::vector<int> m_crossed;
    std::vector<int> m_senders; // the tiles with pieces, in the order first met (paced)
    // m_route: each piece's first entry in m_links.
    std::vector<size_t> m_input, m_route, m_stamp, m_slot, m_slotTile;
    std::vector<std::uint32_t> m_fill; // bucketByLink's next entry per link (half the cache)
};

double SendLog::paced(const Mesh& mesh) {
    m_piece = 0;
    // The per-tile arrays are zero but at the last call's senders.
    const size_t tiles = size_t(mesh.tiles());
    growTo(m_total, tiles), growTo(m_others, tiles), growTo(m_paced, tiles);
    growTo(m_scale, tiles), growTo(m_pieces, tiles), growTo(m_stamp, tiles);
    for (int s : m_senders) {
        const size_t t = size_t(s);
        m_total[t] = m_others[t] = m_paced[t] = m_scale[t] = 0.0;
        m_pieces[t] = 0, m_stamp[t] = 0;
    }
    m_senders.clear();
    if (m_tile.empty()) return 0;
    m_route.push_back(m_links.size());
    // Per tile, the bytes it sends in all and its pieces; the senders in the order first met.
    for (size_t i = 0; i < m_tile.size(); ++i) {
        const size_t t = size_t(m_tile[i]);
        if (m_pieces[t]++ == 0) m_senders.push_back(int(t));
        m_total[t] += m_bytes[i];
    }
    growTo(m_at, m_bytes.size());
    for (size_t i = 0; i < m_bytes.size(); ++i)
        m_at[i] = {m_bytes[i], m_bytes[i] / m_total[size_t(m_tile[i])], m_bytes[i],
                   std::uint32_t(m_tile[i])};
    bucketByLink();
    ownTimes(mesh);
    mergeSenders(mesh);
    // m_scale here: each tile's own pieces, unshared.
    for (size_t i = 0; i < m_tile.size(); ++i) {
        m_paced[size_t(m_tile[i])] += m_at[i].slowest;
        m_scale[size_t(m_tile[i])] += m_own[i];
    }
    // A tile's pieces are done no later than its own bytes plus what the other senders
    // put on the most loaded link of its routes: the links drain at once, so the
    // others' bytes hold it up once, not once per piece (docs/cost-model.md §5,
    // "Held up once").
    // The busiest is the lowest-numbered of the slowest senders (a tile that sends nothing
    // takes 0, and 0 pieces give a piece time of 0).
    size_t busiest = size_t(m_senders.front());
    for (int s : m_senders) {
        const size_t t = size_t(s);
        const double cap = m_scale[t] + m_others[t];
        m_scale[t] = m_paced[t] > cap ? cap / m_paced[t] : 1.0;
        m_paced[t] = std::min(m_paced[t], cap);
        if (m_paced[t] > m_paced[busiest] || (m_paced[t] == m_paced[busiest] && t < busiest))
            busiest = t;
    }
    m_piece = m_paced[busiest] / m_pieces[busiest];
    return m_paced[busiest];
}

double SendLog::slowestSender() const {
    double most = 0;
    for (int t : m_senders)
        most = std::max(most, m_paced[size_t(t)]);
    return most;
}

void SendLog::pacedByInput(const Mesh&, std::vector<double>& out) {
    if (out.size() == 1) { // every piece is of that input: paced() has the sums
        out[0] = slowestSender();
        return;
    }
    for (size_t k = 0; k < out.size(); ++k) {
        for (int t : m_senders)
            m_paced[size_t(t)] = 0.0;
        for (size_t i = 0; i < m_tile.size(); ++i)
            if (m_input[i] == k)
                m_paced[size_t(m_tile[i])] += m_at[i].slowest * m_scale[size_t(m_tile[i])];
        out[k] = slowestSender();
    }
}

void SendLog::bucketByLink() {
    // The links in the order first crossed, class 0's then class 1's others; each link's
    // entries after the last's (m_fill: where its next entry goes).
    m_crossed.assign(m_used[0].begin(), m_used[0].end());
    for (int l : m_used[1])
        if (m_onLink[0][size_t(l)] == 0) m_crossed.push_back(l);
    growTo(m_fill, m_onLink[0].size());
    std::uint32_t at = 0;
    for (int l : m_crossed) {
        m_fill[size_t(l)] = at;
        at += std::uint32_t(entriesOn(l));
    }
    growTo(m_onPiece, m_links.size());
    for (size_t i = 0; i < m_tile.size(); ++i)
        for (size_t r = m_route[i]; r < m_route[i + 1]; ++r)
            m_onPiece[m_fill[size_t(m_links[r])]++] = int(i);
}

void SendLog::mergeSenders(const Mesh& mesh) {
    size_t most = 0; // the most entries on one link: the slot arrays are per link
    for (int l : m_crossed)
        most = std::max(most, entriesOn(l));
    growTo(m_slotW, most);
    growTo(m_slotTile, most);
    growTo(m_slotOf, most);
    growTo(m_slotShare, most);
    m_slot.resize(m_stamp.size());
    // Each sender spreads its bytes on a link over all its sending: it keeps the link
    // busy for the share W / (its bytes in all) of the time; rho adds them up.
    // (Each piece's share of its sender's bytes is taken once per piece, in m_at.) A stamp
    // is the link's place in m_crossed plus one.
    for (size_t c = 0; c < m_crossed.size(); ++c) {
        const int l = m_crossed[c];
        const size_t end = m_fill[size_t(l)], first = end - entriesOn(l);
        const size_t stamp = c + 1;
        size_t w = 0;
        double rho = 0;
        for (size_t e = first; e < end; ++e) {
            const PieceAt& at = m_at[size_t(m_onPiece[e])];
            const size_t t = at.tile;
            rho += at.share;
            if (m_stamp[t] == stamp) {
                m_slotW[m_slot[t]] += at.bytes;
            } else {
                m_stamp[t] = stamp;
                m_slot[t] = w;
                m_slotTile[w] = t;
                m_slotW[w++] = at.bytes;
            }
            m_slotOf[e - first] = std::uint32_t(m_slot[t]);
        }
        // Each sender's share of the link, as answerLink takes it out of the link's sum;
        // not needed where the shares add up to 2 or more (answerLink).
        if (rho < 2)
            for (size_t k = 0; k < w; ++k)
                m_slotShare[k] = m_slotW[k] / m_total[m_slotTile[k]];
        if (w > 0) answerLink(mesh, l, w, rho, first, end);
    }
}

void SendLog::ownTimes(const Mesh& mesh) {
    growTo(m_own, m_bytes.size());
    for (size_t i = 0; i < m_bytes.size(); ++i) {
        // The largest of b x slowness over the links is b x the largest slowness (the
        // product rounds monotonically).
        double slowness = 0;
        if (m_route[i] < m_route[i + 1]) slowness = 1.0;
        if (mesh.hasChiplets()) {
            slowness = 0;
            for (size_t r = m_route[i]; r < m_route[i + 1]; ++r)
                slowness = std::max(slowness, mesh.linkSlowness(m_links[r]));
        }
        m_own[i] = m_bytes[i] * slowness;
    }
}

// The sum over k < n of min(w[k], b): whole numbers (exact in a double), so the four
// partial sums give the sum taken in order.
inline double sumOfMin(const double* w, size_t n, double b) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += std::min(w[k], b);
        s1 += std::min(w[k + 1], b);
        s2 += std::min(w[k + 2], b);
        s3 += std::min(w[k + 3], b);
    }
    for (; k < n; ++k)
        s0 += std::min(w[k], b);
    return (s0 + s1) + (s2 + s3);
}

// The sum of w[0, n): whole numbers, so four partial sums give the sum taken in order.
inline double sumOfWhole(const double* w, size_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t k = 0;
    for (; k + 4 <= n; k += 4)
        s0 += w[k], s1 += w[k + 1], s2 += w[k + 2], s3 += w[k + 3];
    for (; k < n; ++k)
        s0 += w[k];
    return (s0 + s1) + (s2 + s3);
}

void SendLog::answerLink(const Mesh& mesh, int l, size_t n, double rhoL, size_t first, size_t end) {
    const double* senderBytes = m_slotW.data();
    const double slowness = mesh.linkSlowness(l);
    const double load = sumOfWhole(senderBytes, n);
    const bool spread = rhoL < 2;
    for (size_t k = 0; k < n; ++k) {
        double& others = m_others[m_slotTile[k]];
        others = std::max(others, (load - m_slotW[k]) * slowness);
    }
    // Few senders, or few piece sizes on the link: sum directly, each size's sum kept;
    // else their bytes sorted once, with prefix sums (whole numbers: the same sum either
    // way).
    bool sorted = false;
    constexpr size_t kSizes = 8;
    std::array<double, kSizes> sizeB{}, sizeAll{}; // the sizes met so far and their sums
    size_t sizes = 0;
    double lastB = -1, lastAll = 0; // sum over all senders of min(W, b), for b = lastB
    // The last entry's time (its bytes and sender): a sender's pieces of equal size come
    // one after another and take the same time.
    double timeB = -1, lastTime = 0;
    std::uint32_t timeSlot = 0;
    // The arrays the loop reads, held locally (the stores to the pieces do not reload them).
    PieceAt* const pieces = m_at.data();
    const int* const onPiece = m_onPiece.data();
    const std::uint32_t* const slotOf = m_slotOf.data();
    const double* const slotShare = m_slotShare.data();
    for (size_t e = first; e < end; ++e) {
        PieceAt& at = pieces[size_t(onPiece[e])];
        const double b = at.bytes;
        const std::uint32_t slot = slotOf[e - first];
        if (b != timeB || slot != timeSlot) {
            if (b != lastB) {
                lastB = b;
                size_t c = 0;
                while (!sorted && c < sizes && sizeB[c] != b)
                    ++c;
                if (!sorted && c < sizes) {
                    lastAll = sizeAll[c];
                } else if (!sorted && (n <= 32 || sizes < 4)) {
                    lastAll = sumOfMin(senderBytes, n, b);
                    if (sizes < kSizes) sizeB[sizes] = b, sizeAll[sizes++] = lastAll;
                } else {
                    if (!sorted) {
                        sorted = true;
                        m_sorted.assign(senderBytes, senderBytes + n);
                        std::sort(m_sorted.begin(), m_sorted.end());
                        m_prefix.resize(n + 1);
                        m_prefix[0] = 0;
                        for (size_t k = 0; k < n; ++k)
                            m_prefix[k + 1] = m_prefix[k] + m_sorted[k];
                    }
                    const size_t k = size_t(std::upper_bound(m_sorted.begin(), m_sorted.end(), b) -
                                            m_sorted.begin());
                    lastAll = m_prefix[k] + b * double(n - k);
                }
            }
            double time = b + (lastAll - std::min(senderBytes[slot], b));
            // A sender's share is at most 1 (its bytes on the link are some of its bytes),
            // so with the shares adding up to 2 or more the others' is at least 1.
            if (spread) {
                const double rho = rhoL - slotShare[slot];
                if (rho < 1) time = std::min(time, b / (1 - rho));
            }
            timeB = b, timeSlot = slot, lastTime = time * slowness;
        }
        at.slowest = std::max(at.slowest, lastTime);
    }
}

} // namespace

} // namespace tilescope
