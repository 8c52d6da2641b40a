// The rows of a sweep database for the sweep viewer (docs/gui.md, "Sweep viewer"), read
// through engine/sweep, with the parameters that differ between them (model, batch,
// hardware name, each hardware key, objective, seed, search, each free dimension),
// filters and colour classes.
#pragma once

#include "sweep/sweep.h"
#include "util/result.h"

#include <QMap>
#include <QString>
#include <QStringList>
#include <memory>
#include <string>
#include <vector>

namespace tilescope::ui {

class SweepTable {
  public:
    // Reads every row of the database (engine/sweep/sweepstore.h); the error names the file.
    static Result<SweepTable> load(const QString& path);
    explicit SweepTable(std::vector<SweepRow> rows = {});

    int size() const { return int(m_rows.size()); }
    const SweepRow& row(int i) const { return m_rows[size_t(i)]; }

    // The parameters with more than one value over the rows: "model", "batch", "hardware",
    // "objective", "seed", "search", then the models' free dimensions ("dims.seq"), then
    // the hardware keys that vary ("tile.buffer_bytes").
    QStringList parameters() const { return m_parameters; }
    // The hardware keys among parameters().
    QStringList hardwareParameters() const;
    // Row i's value of a parameter as shown (a model by its file name, numbers as %g).
    QString value(int i, const QString& parameter) const;
    // The distinct values of a parameter, numerically sorted when all are numbers.
    QStringList values(const QString& parameter) const;

    // Rows must have `value` for `parameter`; an empty value removes that filter.
    void setFilter(const QString& parameter, const QString& value);
    void clearFilters() { m_filters.clear(); }
    QMap<QString, QString> filters() const { return m_filters; }
    // The rows passing every filter, valid or not.
    std::vector<int> filtered() const;
    // Of `rows`, the valid ones no other valid one beats in both energy and delay, by delay.
    std::vector<int> paretoFront(const std::vector<int>& rows) const;

  private:
    std::vector<SweepRow> m_rows;
    std::vector<QMap<QString, QString>> m_values; // per row: parameter -> shown value
    QStringList m_parameters;
    QMap<QString, QString> m_filters;
};

// What a sweep point schedules, ready for Document::restore. The model is the row's path,
// or a file of that name beside the database (a database copied from a cluster), and its
// sha256 must match the row's; it is imported with the row's free-dimension bindings.
// Errors name the database and the point (`where`).
struct SweepPointInputs {
    std::string where; // "<database>: point <id>", the prefix of every error about the point
    QString modelPath; // absolute
    std::shared_ptr<const Network> net;
    Hardware hw;
    RATree tree;
    Objective objective;
};
Result<SweepPointInputs> resolveSweepPoint(const SweepRow& row, const QString& databasePath);

} // namespace tilescope::ui
