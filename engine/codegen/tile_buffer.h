// One tile's global buffer as the instruction generator lays it out: where each region
// goes, what the buffer holds, and which earlier readers a new writer must wait for.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope {

// A ring allocator for activations (so the next invocation's data lands beside, not on top
// of, the current one: double buffering when space allows), weights packed from the top,
// and the history of released regions whose last readers a new writer must wait for
// (write-after-read hazards become explicit dependencies).
class TileBuffer {
  public:
    explicit TileBuffer(std::uint64_t cap = 0) : m_cap(cap) {}

    using Extents = std::vector<std::pair<std::uint64_t, std::uint64_t>>; // (offset, bytes)

    // One contiguous extent when a gap fits; otherwise, when enough is free in total, the
    // lowest gaps gathered (the DMA engines scatter/gather, so a fragmented buffer still
    // holds what the evaluator's per-tile budget says fits). `what` must outlive the buffer.
    std::optional<Extents> alloc(std::uint64_t bytes, bool top, std::string_view what);
    void release(const Extents& ext, const std::vector<std::uint32_t>& readers,
                 std::string_view what);
    // What the buffer holds, the largest first: "weights of conv1 400000 B, ..." (at most
    // `count` of them).
    std::string held(size_t count) const;
    // Readers of released regions overlapping [off, off+bytes); those parts are forgotten
    // (the new writer now orders every later reuse).
    std::vector<std::uint32_t> hazards(std::uint64_t off, std::uint64_t bytes);
    // The newest reader (largest id) of the released regions overlapping [off, off+bytes);
    // 0 when none.
    std::uint32_t newestReader(std::uint64_t off, std::uint64_t bytes) const;
    std::uint64_t free() const { return m_cap - m_used; }
    std::uint64_t peak() const { return m_peak; }

  private:
    struct Freed {
        std::uint64_t off, bytes;
        std::vector<std::uint32_t> readers;
    };
    std::uint64_t m_cap;
    std::map<std::uint64_t, std::uint64_t> m_live;
    // Live bytes by what they hold (views of the generator's region labels, which outlive
    // the buffer).
    std::map<std::string_view, std::uint64_t> m_held;
    std::vector<Freed> m_freed;
    std::uint64_t m_cursor = 0, m_used = 0, m_peak = 0;
};

} // namespace tilescope
