#include "codegen/tile_buffer.h"

#include <algorithm>

namespace tilescope {

std::optional<TileBuffer::Extents> TileBuffer::alloc(std::uint64_t bytes, bool top,
                                                     std::string_view what) {
    if (bytes == 0) return Extents{};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps; // [lo, hi)
    std::uint64_t at = 0;
    for (const auto& [off, len] : m_live) {
        if (off > at) gaps.push_back({at, off});
        at = std::max(at, off + len);
    }
    if (at < m_cap) gaps.push_back({at, m_cap});
    std::optional<std::uint64_t> pick;
    if (top) {
        // Of the places that fit (each gap's top and bottom end), the one whose newest
        // earlier reader is oldest, highest first on a tie: a weight load then waits for
        // no more of the recent work than the buffer forces (write-after-read).
        std::uint32_t best = 0;
        for (auto it = gaps.rbegin(); it != gaps.rend(); ++it) {
            if (it->second - it->first < bytes) continue;
            for (std::uint64_t place : {it->second - bytes, it->first}) {
                const std::uint32_t newest = newestReader(place, bytes);
                if (!pick || newest < best) pick = place, best = newest;
                if (best == 0) break;
            }
            if (pick && best == 0) break;
        }
    } else {
        for (int pass = 0; pass < 2 && !pick; ++pass)
            for (const auto& [lo, hi] : gaps) {
                const std::uint64_t start = pass == 0 ? std::max(lo, m_cursor) : lo;
                if (pass == 0 && hi <= m_cursor) continue;
                if (start < hi && hi - start >= bytes) {
                    pick = start;
                    break;
                }
            }
    }
    Extents ext;
    if (pick) {
        ext.push_back({*pick, bytes});
        if (!top) m_cursor = *pick + bytes;
    } else {
        if (m_cap - m_used < bytes) return std::nullopt;
        std::uint64_t left = bytes;
        for (const auto& [lo, hi] : gaps) {
            if (!left) break;
            const std::uint64_t take = std::min(left, hi - lo);
            ext.push_back({lo, take});
            left -= take;
        }
    }
    for (const auto& [off, len] : ext)
        m_live[off] = len;
    m_used += bytes;
    m_held[what] += bytes;
    m_peak = std::max(m_peak, m_used);
    return ext;
}

void TileBuffer::release(const Extents& ext, const std::vector<std::uint32_t>& readers,
                         std::string_view what) {
    for (const auto& [off, len] : ext) {
        m_live.erase(off);
        m_used -= len;
        m_freed.push_back({off, len, readers});
        const auto it = m_held.find(what);
        if (it != m_held.end() && (it->second -= len) == 0) m_held.erase(it);
    }
}

std::string TileBuffer::held(size_t count) const {
    std::vector<std::pair<std::uint64_t, std::string_view>> by;
    for (const auto& [what, bytes] : m_held)
        by.push_back({bytes, what});
    std::sort(by.begin(), by.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::string out;
    for (size_t i = 0; i < by.size() && i < count; ++i)
        out +=
            (i ? ", " : "") + std::string(by[i].second) + " " + std::to_string(by[i].first) + " B";
    if (by.size() > count) out += ", ...";
    return out;
}

std::vector<std::uint32_t> TileBuffer::hazards(std::uint64_t off, std::uint64_t bytes) {
    std::vector<std::uint32_t> out;
    if (bytes == 0) return out;
    std::vector<Freed> keep;
    for (auto& f : m_freed) {
        const std::uint64_t lo = std::max(f.off, off), hi = std::min(f.off + f.bytes, off + bytes);
        if (lo >= hi) {
            keep.push_back(std::move(f));
            continue;
        }
        out.insert(out.end(), f.readers.begin(), f.readers.end());
        if (f.off < lo) keep.push_back({f.off, lo - f.off, f.readers});
        if (hi < f.off + f.bytes) keep.push_back({hi, f.off + f.bytes - hi, f.readers});
    }
    m_freed = std::move(keep);
    return out;
}

std::uint32_t TileBuffer::newestReader(std::uint64_t off, std::uint64_t bytes) const {
    std::uint32_t newest = 0;
    for (const auto& f : m_freed)
        if (std::max(f.off, off) < std::min(f.off + f.bytes, off + bytes))
            for (std::uint32_t r : f.readers)
                newest = std::max(newest, r);
    return newest;
}

} // namespace tilescope
