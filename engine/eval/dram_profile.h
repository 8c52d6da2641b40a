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
        m_from.assign(1, 0.0);
        m_used.assign(1, 0.0);
        m_full = 0;
    }
    // Books `bytes` at most `rate` bytes/cycle into what the earlier bookings left; returns
    // when the last byte has moved, and in `*partAt` when the first `part` bytes had (with
    // no bytes: the first time the DRAM has room), in `*startAt` when the DRAM first had
    // room for them.
    double book(double bytes, double rate, double part = 0, double* partAt = nullptr,
                double* startAt = nullptr) {
        const double inf = std::numeric_limits<double>::infinity();
        const double tiny = m_bw * 1e-12;
        double moved = 0;
        bool partDone = partAt == nullptr;
        // The entries before m_full are full: no booking finds room there (a booking at a
        // rate of `tiny` or less finds none anywhere). Thousands of weight LOADs booked one by
        // one on a wafer-scale mesh would otherwise look at them all each time.
        while (m_full < m_from.size() && m_bw - m_used[m_full] <= tiny)
            ++m_full;
        for (std::size_t i = m_full; i < m_from.size(); ++i) {
            const double avail = std::min(rate, m_bw - m_used[i]);
            if (avail <= tiny) continue;
            if (startAt) *startAt = m_from[i], startAt = nullptr;
            const double until = i + 1 < m_from.size() ? m_from[i + 1] : inf;
            if (!partDone && moved + avail * (until - m_from[i]) >= part) {
                *partAt = m_from[i] + (part - moved) / avail;
                partDone = true;
            }
            const double left = bytes - moved;
            if (left <= 0) return m_from[i];
            const double done = m_from[i] + left / avail;
            if (done <= until) {
                if (done < until) split(i, done);
                m_used[i] += avail;
                return done;
            }
            moved += avail * (until - m_from[i]);
            m_used[i] += avail;
        }
        return inf; // not reached: the last entry lasts forever
    }

  private:
    // Entry i ends at t: a new entry from t on with i's use.
    void split(std::size_t i, double t) {
        m_from.insert(m_from.begin() + std::ptrdiff_t(i + 1), t);
        m_used.insert(m_used.begin() + std::ptrdiff_t(i + 1), m_used[i]);
    }

    double m_bw = 1;
    std::vector<double> m_from, m_used; // from m_from[i] on, m_used[i] bytes/cycle in use
    std::size_t m_full = 0;             // the entries before it are full
};

} // namespace tilescope
