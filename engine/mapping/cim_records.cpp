#include "mapping/cim_records.h"

#include <sstream>

namespace tilescope {

using nlohmann::json;

std::optional<CimChoice> CimRecordBook::find(const std::string& key) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto it = m_entries.find(key);
    if (it == m_entries.end()) return std::nullopt;
    ++m_reused;
    return it->second.choice;
}

void CimRecordBook::add(const std::string& key, const json& workload, const CimChoice& c) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_entries.emplace(key, Entry{workload, c}).second) ++m_added;
}

size_t CimRecordBook::size() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_entries.size();
}

size_t CimRecordBook::reused() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_reused;
}

size_t CimRecordBook::added() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_added;
}

json cimWorkloadJson(const CimNests& nests, Bytes psumBuffer) {
    const CimBlocks& k = nests.front().first;
    json cores = json::array();
    for (const auto& [b, n] : nests)
        cores.push_back({{"row_blocks", b.rowBlocks},
                         {"col_blocks", b.colBlocks},
                         {"crossbars", b.crossbars},
                         {"count", n}});
    json w = {{"nests", cores},
              {"weight_columns", k.weightColumns},
              {"positions", k.positions},
              {"row_positions", k.rowPositions},
              {"psum_buffer_bytes", psumBuffer}};
    if (k.boxed())
        w["space"] = {{"box", {k.space.samples, k.space.rows, k.space.cols}},
                      {"stride", {k.space.strideH, k.space.strideW}},
                      {"span", {k.space.spanH, k.space.spanW}},
                      {"pixel_bytes", k.space.pixelBytes}};
    return w;
}

std::optional<CimOrder> parseCimOrder(const std::string& text) {
    std::istringstream in(text);
    CimOrder o;
    std::string part;
    int n = 0;
    bool seen[3] = {false, false, false};
    while (in >> part) {
        if (n == 3 || part.empty()) return std::nullopt;
        const char c = part[0];
        const int loop = c == 's' ? 0 : c == 'c' ? 1 : c == 'r' ? 2 : -1;
        if (loop < 0 || seen[loop]) return std::nullopt;
        seen[loop] = true;
        o.loops[size_t(n++)] = CimLoop(c);
        if (loop != 0) {
            if (part.size() != 1) return std::nullopt;
            continue;
        }
        Count v[3] = {0, 0, 0};
        int dims = 0;
        size_t at = 1;
        while (dims < 3 && at < part.size()) {
            size_t used = 0;
            try {
                v[dims] = std::stoll(part.substr(at), &used);
            } catch (...) {
                return std::nullopt;
            }
            if (v[dims] < 1) return std::nullopt;
            at += used;
            ++dims;
            if (at < part.size() && part[at] == 'x') ++at;
        }
        if (at != part.size() || (dims != 1 && dims != 3)) return std::nullopt;
        if (dims == 3) {
            o.box = {v[0], v[1], v[2]};
            o.chunk = v[0] * v[1] * v[2];
        } else {
            o.chunk = v[0];
        }
    }
    if (n != 3) return std::nullopt;
    return o;
}

json CimRecordBook::toJson() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    json records = json::array();
    for (const auto& [key, e] : m_entries)
        records.push_back({{"workload", e.workload},
                           {"order", e.choice.order.text()},
                           {"programmings", e.choice.programmings},
                           {"psum_bytes", e.choice.psumBytes},
                           {"input_read_bytes", e.choice.inputReads}});
    return {{"format", "tilescope-cim-records"}, {"version", 1}, {"records", records}};
}

namespace {

// A record's workload back into loop nests.
std::optional<std::pair<CimNests, Bytes>> nestsOf(const json& w) {
    if (!w.is_object() || !w.contains("nests") || !w["nests"].is_array() || w["nests"].empty())
        return std::nullopt;
    CimBlocks k;
    k.weightColumns = w.at("weight_columns").get<int>();
    k.positions = w.at("positions").get<Count>();
    k.rowPositions = w.at("row_positions").get<Count>();
    if (w.contains("space")) {
        const json& s = w["space"];
        k.space.samples = s.at("box").at(0).get<Count>();
        k.space.rows = s.at("box").at(1).get<Count>();
        k.space.cols = s.at("box").at(2).get<Count>();
        k.space.strideH = s.at("stride").at(0).get<int>();
        k.space.strideW = s.at("stride").at(1).get<int>();
        k.space.spanH = s.at("span").at(0).get<int>();
        k.space.spanW = s.at("span").at(1).get<int>();
        k.space.pixelBytes = s.at("pixel_bytes").get<double>();
    }
    if (k.weightColumns < 1 || k.positions < 1 || k.rowPositions < 1) return std::nullopt;
    CimNests nests;
    for (const json& n : w["nests"]) {
        CimBlocks b = k;
        b.rowBlocks = n.at("row_blocks").get<Count>();
        b.colBlocks = n.at("col_blocks").get<Count>();
        b.crossbars = n.at("crossbars").get<int>();
        const Count count = n.at("count").get<Count>();
        if (b.rowBlocks < 1 || b.colBlocks < 1 || b.crossbars < 1 || count < 1) return std::nullopt;
        nests.push_back({b, count});
    }
    return std::pair{nests, w.at("psum_buffer_bytes").get<Bytes>()};
}

} // namespace

Result<std::shared_ptr<CimRecordBook>> CimRecordBook::fromJson(const json& j,
                                                               const std::string& file) {
    if (!j.is_object() || j.value("format", std::string()) != "tilescope-cim-records")
        return makeError(file, "format", "not a tilescope-cim-records file");
    if (j.value("version", 0) != 1)
        return makeError(file, "version", "unsupported version (this build reads 1)");
    if (!j.contains("records") || !j["records"].is_array())
        return makeError(file, "records", "expected an array");
    auto book = std::make_shared<CimRecordBook>();
    for (size_t i = 0; i < j["records"].size(); ++i) {
        const json& r = j["records"][i];
        const std::string place = "records[" + std::to_string(i) + "]";
        if (!r.is_object()) return makeError(file, place, "expected an object");
        std::optional<std::pair<CimNests, Bytes>> w;
        Count recorded = -1;
        try {
            w = nestsOf(r.at("workload"));
            recorded = r.at("programmings").get<Count>();
            if (!r.at("order").is_string()) w.reset();
        } catch (const json::exception&) {
            w.reset();
        }
        if (!w)
            return makeError(file, place,
                             "incomplete: needs a workload, an order and its programmings");
        const std::string text = r.value("order", std::string());
        const auto order = parseCimOrder(text);
        if (!order) return makeError(file, place + ".order", "not a loop order ('" + text + "')");
        const CimChoice c = cimOrderCost(w->first, *order, true);
        if (c.programmings != recorded)
            return makeError(file, place,
                             "the order " + text + " gives " + std::to_string(c.programmings) +
                                 " programmings on this workload, the record says " +
                                 std::to_string(recorded));
        if (c.psumBytes > w->second)
            return makeError(file, place,
                             "the order " + text +
                                 "'s partial sums overflow the workload's buffer");
        const json workload = cimWorkloadJson(w->first, w->second);
        book->m_entries.emplace(workload.dump(), Entry{workload, c});
    }
    return book;
}

} // namespace tilescope
