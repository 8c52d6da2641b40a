// The DRAM's bandwidth in use over time as demands are booked into it in need order, each
// from time 0 and at most at its own rate: a fluid model of the replay's DRAM serving the
// transfer needed first while it has bandwidth left (docs/isa.md, "Replay"), used by the
// DRAM-ordered pipeline of an S cut whose weights come over few links (analyse_pipeline.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace tilescope {

class DramProfile {
  public:
    void reset(double bandwidth) {
        m_bw = bandwidth;
        m_from.assign({0.0, std::numeric_limits<double>::infinity()});
        m_used.assign(1, 0.0);
        m_full = 0;
    }
    // Books `bytes` at most `rate` bytes/cycle into what the earlier bookings left; returns
    // when the last byte has moved, and in `*partAt` when the first `part` bytes had (with
    // no bytes: the first time the DRAM has room), in `*startAt` when the DRAM first had
    // room for them.
    double book(double bytes, double rate, double part = 0, double* partAt = nullptr,
                double* startAt = nullptr) {
        const double tiny = m_bw * 1e-12;
        double moved = 0;
        bool partDone = partAt == nullptr;
        // The entries before m_full are full: no booking finds room there (a booking at a
        // rate of `tiny` or less finds none anywhere). Thousands of weight LOADs booked one by
        // one on a wafer-scale mesh would otherwise look at them all each time.
        const std::size_t n = m_used.size();
        double* const used = m_used.data();
        const double* const from = m_from.data(); // from[n]: infinity, the last entry's end
        while (m_full < n && m_bw - used[m_full] <= tiny)
            ++m_full;
        for (std::size_t i = m_full; i < n; ++i) {
            const double avail = std::min(rate, m_bw - used[i]);
            if (avail <= tiny) continue;
            if (startAt) *startAt = from[i], startAt = nullptr;
            const double until = from[i + 1];
            if (!partDone && moved + avail * (until - from[i]) >= part) {
                *partAt = from[i] + (part - moved) / avail;
                partDone = true;
            }
            const double left = bytes - moved;
            if (left <= 0) return from[i];
            const double done = from[i] + left / avail;
            if (done <= until) {
                if (done < until) split(i, done); // moves the entries: not `used` below
                m_used[i] += avail;
                return done;
            }
            moved += avail * (until - from[i]);
            used[i] += avail;
        }
        return from[n]; // not reached: the last entry lasts forever
    }

  private:
    // Entry i ends at t: a new entry from t on with i's use.
    void split(std::size_t i, double t) {
        m_from.insert(m_from.begin() + std::ptrdiff_t(i + 1), t);
        m_used.insert(m_used.begin() + std::ptrdiff_t(i + 1), m_used[i]);
    }

    double m_bw = 1;
    // From m_from[i] to m_from[i + 1], m_used[i] bytes/cycle in use (m_from has one more:
    // the last entry lasts forever).
    std::vector<double> m_from, m_used;
    std::size_t m_full = 0; // the entries before it are full
};

} // namespace tilescope
