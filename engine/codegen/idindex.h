// Instruction id -> position, for the simulator and the views. Generated programs number
// their instructions 1..N, so a vector indexed by id does it without hashing; a program
// with sparse ids (hand-written, fuzzed) falls back to a hash map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilescope {

class IdIndex {
  public:
    static constexpr std::size_t npos = std::size_t(-1);

    // Sizes the index for `count` ids of at most `maxId` (and empties it).
    void prepare(std::size_t count, std::uint32_t maxId) {
        m_pos.clear();
        m_map.clear();
        m_dense = std::size_t(maxId) <= 4 * count + 64;
        if (m_dense)
            m_pos.assign(std::size_t(maxId) + 1, npos);
        else
            m_map.reserve(count);
    }
    // False when the id is there already (the first position stays).
    bool emplace(std::uint32_t id, std::size_t pos) {
        if (!m_dense) return m_map.emplace(id, pos).second;
        if (id >= m_pos.size()) m_pos.resize(std::size_t(id) + 1, npos);
        if (m_pos[id] != npos) return false;
        m_pos[id] = pos;
        return true;
    }
    std::size_t find(std::uint32_t id) const { // npos when absent
        if (!m_dense) {
            auto it = m_map.find(id);
            return it == m_map.end() ? npos : it->second;
        }
        return id < m_pos.size() ? m_pos[id] : npos;
    }
    std::size_t at(std::uint32_t id) const { // throws, as std::unordered_map::at, when absent
        const std::size_t pos = find(id);
        if (pos == npos) throw std::out_of_range("instruction id " + std::to_string(id));
        return pos;
    }

  private:
    bool m_dense = true;
    std::vector<std::size_t> m_pos;
    std::unordered_map<std::uint32_t, std::size_t> m_map;
};

} // namespace tilescope
