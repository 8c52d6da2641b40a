// The record file of compute-in-memory schedules (docs/cost-model.md §8, "Records"): the best
// loop order found for each distinct crossbar workload (a tile's blocks, positions, input
// window and partial-sum buffer), kept in a JSON file so that a later run meeting the same
// workload takes the order from the file instead of searching the schedule space again.
#pragma once

#include "mapping/cim.h"
#include "util/result.h"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

class CimRecordBook {
  public:
    // The workload's record (its key: cimWorkloadJson(...).dump()); counts a reuse.
    std::optional<CimChoice> find(const std::string& key) const;
    void add(const std::string& key, const nlohmann::json& workload, const CimChoice& c);
    size_t size() const;
    size_t reused() const;
    size_t added() const;

    nlohmann::json toJson() const;
    // Every record is checked: its workload complete, its order readable and, costed again
    // on that workload, giving the programmings and partial sums it records within the
    // buffer. Errors name the file and the record.
    static Result<std::shared_ptr<CimRecordBook>> fromJson(const nlohmann::json& j,
                                                           const std::string& file);

  private:
    struct Entry {
        nlohmann::json workload;
        CimChoice choice;
    };
    mutable std::mutex m_mutex;
    std::map<std::string, Entry> m_entries;
    mutable size_t m_reused = 0;
    size_t m_added = 0;
};

// What a schedule search depends on, as the record's workload and its key.
nlohmann::json cimWorkloadJson(const CimNests& nests, Bytes psumBuffer);
// "c s1x14x7 r" / "s784 c r" back into an order; nullopt when it is not one.
std::optional<CimOrder> parseCimOrder(const std::string& text);

} // namespace tilescope
