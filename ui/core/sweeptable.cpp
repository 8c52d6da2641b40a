#include "core/sweeptable.h"

#include "model/model_loader.h"
#include "sweep/sweepstore.h"
#include "tree/tree_json.h"
#include "util/fileio.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

namespace tilescope::ui {

namespace {

QString number(double d) {
    return QString::number(d, 'g', 10);
}

QString shown(const nlohmann::json& v) {
    if (v.is_number()) return number(v.get<double>());
    if (v.is_string()) return QString::fromStdString(v.get<std::string>());
    return QString::fromStdString(v.dump());
}

const QStringList kFixed = {QStringLiteral("model"),    QStringLiteral("batch"),
                            QStringLiteral("hardware"), QStringLiteral("objective"),
                            QStringLiteral("seed"),     QStringLiteral("search")};

} // namespace

Result<SweepTable> SweepTable::load(const QString& path) {
    auto store = SweepStore::open(path.toStdString(), false);
    if (!store) return store.error();
    auto rows = (*store)->rows();
    if (!rows) return rows.error();
    return SweepTable(std::move(rows).value());
}

SweepTable::SweepTable(std::vector<SweepRow> rows) : m_rows(std::move(rows)) {
    QMap<QString, std::set<QString>> distinct;
    QStringList dimKeys, hwKeys;
    for (const SweepRow& r : m_rows) {
        QMap<QString, QString> v;
        v[QStringLiteral("model")] = QFileInfo(QString::fromStdString(r.model)).fileName();
        v[QStringLiteral("batch")] = QString::number(r.batch);
        v[QStringLiteral("hardware")] = QString::fromStdString(r.hwName);
        v[QStringLiteral("objective")] =
            QStringLiteral("E^%1 x D^%2").arg(number(r.objectiveN), number(r.objectiveM));
        v[QStringLiteral("seed")] = QString::number(qulonglong(r.seed));
        v[QStringLiteral("search")] = QString::fromStdString(r.searchJson);
        // Each free dimension the row bound, as "dims.NAME" (the spec's `dims` key).
        if (auto dims = sweepRowDims(r, r.point))
            for (const auto& [name, size] : *dims) {
                const QString k = QStringLiteral("dims.") + QString::fromStdString(name);
                if (!dimKeys.contains(k)) dimKeys << k;
                v[k] = number(double(size));
            }
        const auto hw = nlohmann::json::parse(r.hwJson, nullptr, false);
        if (hw.is_object())
            for (const auto& [key, value] : flattenJson(hw)) {
                if (key == "name") continue;
                const QString k = QString::fromStdString(key);
                if (!hwKeys.contains(k)) hwKeys << k;
                v[k] = shown(value);
            }
        for (auto it = v.cbegin(); it != v.cend(); ++it)
            distinct[it.key()].insert(it.value());
        m_values.push_back(std::move(v));
    }
    // A dimension every row binds alike is no parameter, but one some rows lack is: those
    // rows are another model.
    auto someLack = [&](const QString& p) {
        return std::any_of(m_values.begin(), m_values.end(),
                           [&](const QMap<QString, QString>& v) { return !v.contains(p); });
    };
    for (const QString& p : kFixed + dimKeys + hwKeys)
        if (distinct.value(p).size() > 1 || (dimKeys.contains(p) && someLack(p))) m_parameters << p;
}

QStringList SweepTable::hardwareParameters() const {
    QStringList out;
    for (const QString& p : m_parameters)
        if (!kFixed.contains(p) && !p.startsWith(QStringLiteral("dims."))) out << p;
    return out;
}

QString SweepTable::value(int i, const QString& parameter) const {
    return m_values[size_t(i)].value(parameter);
}

QStringList SweepTable::values(const QString& parameter) const {
    std::set<QString> s;
    for (const auto& v : m_values)
        s.insert(v.value(parameter));
    QStringList out(s.begin(), s.end());
    bool numeric = true;
    for (const QString& x : out) {
        bool ok = false;
        x.toDouble(&ok);
        numeric = numeric && ok;
    }
    if (numeric)
        std::sort(out.begin(), out.end(),
                  [](const QString& a, const QString& b) { return a.toDouble() < b.toDouble(); });
    return out;
}

void SweepTable::setFilter(const QString& parameter, const QString& value) {
    if (value.isEmpty())
        m_filters.remove(parameter);
    else
        m_filters[parameter] = value;
}

std::vector<int> SweepTable::filtered() const {
    std::vector<int> out;
    for (int i = 0; i < size(); ++i) {
        bool pass = true;
        for (auto it = m_filters.cbegin(); it != m_filters.cend() && pass; ++it)
            pass = m_values[size_t(i)].value(it.key()) == it.value();
        if (pass) out.push_back(i);
    }
    return out;
}

std::vector<int> SweepTable::paretoFront(const std::vector<int>& rows) const {
    std::vector<int> valid;
    for (int i : rows) {
        const SweepRow& r = m_rows[size_t(i)];
        if (r.valid && std::isfinite(r.energyPj) && std::isfinite(r.delayCycles))
            valid.push_back(i);
    }
    // By delay, then energy: a point is on the front when its energy is below every
    // energy seen at a smaller (or equal) delay.
    std::sort(valid.begin(), valid.end(), [&](int a, int b) {
        const SweepRow &x = m_rows[size_t(a)], &y = m_rows[size_t(b)];
        return x.delayCycles != y.delayCycles ? x.delayCycles < y.delayCycles
                                              : x.energyPj < y.energyPj;
    });
    std::vector<int> front;
    double best = INFINITY;
    for (int i : valid)
        if (m_rows[size_t(i)].energyPj < best) {
            best = m_rows[size_t(i)].energyPj;
            front.push_back(i);
        }
    return front;
}

Result<SweepPointInputs> resolveSweepPoint(const SweepRow& row, const QString& databasePath) {
    SweepPointInputs in;
    in.where = databasePath.toStdString() + ": point " + row.point.substr(0, 16);
    QString modelPath = QString::fromStdString(row.model);
    if (!QFileInfo::exists(modelPath)) {
        const QString beside =
            QFileInfo(databasePath).dir().filePath(QFileInfo(modelPath).fileName());
        if (QFileInfo::exists(beside)) modelPath = beside;
    }
    auto sha = sha256File(modelPath.toStdString());
    if (!sha) return Error{in.where + ": " + sha.error().message};
    if (*sha != row.modelSha256)
        return Error{in.where + ": " + modelPath.toStdString() +
                     ": the file changed since the sweep (sha256 differs)"};
    auto dims = sweepRowDims(row, in.where);
    if (!dims) return dims.error();
    ImportOptions options;
    options.dims = std::move(dims).value();
    auto net = loadModel(modelPath.toStdString(), options);
    if (!net) return net.error();
    auto hw = parseHardware(row.hwJson, in.where + ": hw_json");
    if (!hw) return hw.error();
    auto tree = parseTreeJson(row.treeJson, *net, in.where + ": tree_json");
    if (!tree) return tree.error();
    in.modelPath = QFileInfo(modelPath).absoluteFilePath();
    in.net = std::make_shared<const Network>(std::move(net).value());
    in.hw = std::move(hw).value();
    in.tree = std::move(tree).value();
    in.objective = Objective{row.objectiveN, row.objectiveM};
    return in;
}

} // namespace tilescope::ui
