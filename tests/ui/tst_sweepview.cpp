// The sweep viewer (docs/gui.md, "Sweep viewer") on a real sweep database: the table's
// parameters and filters, the plot's point count, colour classes and Pareto front, hover
// lookup, and double-click opening the point's model + hardware + tree in the document.
#include "core/document.h"
#include "core/sweeptable.h"
#include "sweep/sweep.h"
#include "sweep/sweepstore.h"
#include "tree/ratree.h"
#include "tree/tree_json.h"
#include "widgets/mainwindow.h"
#include "widgets/sessioncontroller.h"
#include "widgets/sweepview.h"

#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>
#include <nlohmann/json.hpp>
#include <qcustomplot.h>

using namespace tilescope;
using namespace tilescope::ui;
using nlohmann::json;

class TstSweepView : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void table();
    void view();
    void openPoint();
    void freeDimensions();
    void badDatabase();

  private:
    QTemporaryDir m_dir;
    QString m_db;
    std::vector<SweepRow> m_rows;
    std::unique_ptr<MainWindow> m_w;
};

void TstSweepView::initTestCase() {
    QVERIFY(m_dir.isValid());
    QStandardPaths::setTestModeEnabled(true);
    qputenv("TILESCOPE_RECOVERY_DIR", m_dir.path().toUtf8());
    // squeezenet (schedulable) and oversized_fc (600,000 -> 2,000,000: one output channel's
    // weights, or one input channel's for a tile's 125,000 outputs with their partial sums,
    // outgrow an edge tile's buffer, however blocked: the failing points) x 2 NoC bandwidths
    // x 2 batches = 8 points, 4 valid.
    const json spec = {
        {"models",
         {std::string(TILESCOPE_TESTDATA) + "/squeezenet1_0.onnx",
          std::string(TILESCOPE_TESTDATA) + "/oversized_fc.json"}},
        {"hardware", {{{"base", "edge"}, {"vary", {{"noc.link_bytes_per_cycle", {12, 24}}}}}}},
        {"batches", {1, 2}},
        {"search", {{"iterations", 30}, {"chains", 1}}}};
    auto s = parseSweepSpec(spec.dump(), "spec.json", "");
    QVERIFY2(s, s ? "" : s.error().message.c_str());
    m_db = m_dir.filePath("view.sqlite");
    auto store = SweepStore::open(m_db.toStdString());
    QVERIFY(store);
    for (const SweepPoint& p : expandSweep(*s)) {
        m_rows.push_back(runSweepPoint(*s, p));
        QVERIFY(*(*store)->insert(m_rows.back()));
    }
    QCOMPARE(int(m_rows.size()), 8);
    m_w = std::make_unique<MainWindow>();
    m_w->setInteractive(false);
}

void TstSweepView::table() {
    auto t = SweepTable::load(m_db);
    QVERIFY(t);
    QCOMPARE(t->size(), 8);
    // What varies: models, batches, the variants and their NoC key; not tile.macs.
    const QStringList p = t->parameters();
    QVERIFY(p.contains("model") && p.contains("batch") && p.contains("hardware"));
    QVERIFY(p.contains("noc.link_bytes_per_cycle"));
    QVERIFY(!p.contains("tile.macs") && !p.contains("seed"));
    QCOMPARE(t->hardwareParameters(), QStringList{"noc.link_bytes_per_cycle"});
    QCOMPARE(t->values("noc.link_bytes_per_cycle"), (QStringList{"12", "24"}));
    QCOMPARE(t->values("model"), (QStringList{"oversized_fc.json", "squeezenet1_0.onnx"}));
    t->setFilter("model", "squeezenet1_0.onnx");
    QCOMPARE(int(t->filtered().size()), 4);
    t->setFilter("batch", "2");
    QCOMPARE(int(t->filtered().size()), 2);
    t->setFilter("model", "");
    QCOMPARE(int(t->filtered().size()), 4);
    // Pareto front: no point on it is beaten in both energy and delay by any valid point.
    t->clearFilters();
    const auto all = t->filtered();
    const auto front = t->paretoFront(all);
    QVERIFY(!front.empty());
    for (int f : front)
        for (int i : all) {
            const SweepRow &a = t->row(f), &b = t->row(i);
            if (!b.valid) continue;
            QVERIFY(!(b.energyPj < a.energyPj && b.delayCycles < a.delayCycles));
        }
}

void TstSweepView::view() {
    QVERIFY(m_w->openSweepDatabase(m_db));
    SweepView* v = m_w->sweepView();
    QVERIFY(v);
    v->show();
    QVERIFY(QTest::qWaitForWindowExposed(v));
    QCOMPARE(v->table().size(), 8);
    QCOMPARE(v->shownCount(), 4); // the oversized_fc points have no schedule
    QCOMPARE(v->failedCount(), 4);
    QCOMPARE(v->colourBy(), QStringLiteral("noc.link_bytes_per_cycle"));
    QCOMPARE(v->colourClassCount(), 2);
    v->setColourBy("batch");
    QCOMPARE(v->colourClassCount(), 2);
    v->setFilter("batch", "1");
    QCOMPARE(v->shownCount(), 2);
    QCOMPARE(v->failedCount(), 2);
    v->setFilter("noc.link_bytes_per_cycle", "24");
    QCOMPARE(v->shownCount(), 1);
    QCOMPARE(v->paretoCount(), 1);
    v->setFilter("noc.link_bytes_per_cycle", "");
    v->setFilter("batch", "");
    QCOMPARE(v->shownCount(), 4);
    // Hover: the row under each plotted point's pixel is that row.
    v->plot()->replot();
    for (int i = 0; i < v->table().size(); ++i) {
        if (!v->table().row(i).valid) continue;
        const int at = v->rowAt(v->pixelOf(i), 0.5);
        QVERIFY(at >= 0);
        QCOMPARE(v->table().row(at).energyPj, v->table().row(i).energyPj);
        QVERIFY(v->describe(i).contains(QString::fromStdString(v->table().row(i).hwName)));
    }
    QCOMPARE(v->rowAt(QPointF(-100, -100)), -1);
}

void TstSweepView::openPoint() {
    SweepView* v = m_w->sweepView();
    QVERIFY(v);
    int pick = -1;
    for (int i = 0; i < v->table().size(); ++i)
        if (v->table().row(i).valid && v->table().row(i).batch == 2) pick = i;
    QVERIFY(pick >= 0);
    const SweepRow row = v->table().row(pick);
    // Double-click through the plot: the event filter finds the point and opens it.
    const QPoint px = v->pixelOf(pick).toPoint();
    QTest::mouseDClick(v->plot(), Qt::LeftButton, {}, px);
    Document* d = m_w->document();
    QVERIFY2(d->hasModel(), qPrintable(m_w->lastError()));
    QCOMPARE(d->batch(), 2);
    QCOMPARE(d->modelSha256(), QString::fromStdString(row.modelSha256));
    QCOMPARE(d->hardware()->nocBytesPerCycle,
             json::parse(row.hwJson)["noc"]["link_bytes_per_cycle"].get<double>());
    QCOMPARE(d->objective().n, row.objectiveN);
    QCOMPARE(treeToJsonValue(d->tree(), *d->network()).dump(), json::parse(row.treeJson).dump());
    QVERIFY(d->evaluation()->valid);
    QCOMPARE(d->evaluation()->cost, row.cost);
    QVERIFY(!m_w->sessions()->isModified());
    // A point without a schedule says why and leaves the document alone.
    int failed = -1;
    for (int i = 0; i < v->table().size(); ++i)
        if (!v->table().row(i).valid) failed = i;
    QVERIFY(!m_w->openSweepPoint(v->table().row(failed), m_db));
    QVERIFY(m_w->lastError().contains("no schedule"));
    QCOMPARE(d->batch(), 2);
}

// A sweep over a decoder's sequence length: the varied dimension is a parameter (colour,
// filter), the fixed one is not, the hover names both, and opening a point imports the
// model at its row's sizes.
void TstSweepView::freeDimensions() {
    const json spec = {{"models", {std::string(TILESCOPE_TESTDATA) + "/llama_decoder.onnx"}},
                       {"dims", {{"seq", {8, 16}}, {"past", 4}}},
                       {"hardware", {"testchip"}},
                       {"search", {{"iterations", 20}, {"chains", 1}}}};
    auto s = parseSweepSpec(spec.dump(), "dims.json", "");
    QVERIFY2(s, s ? "" : s.error().message.c_str());
    const QString db = m_dir.filePath("dims.sqlite");
    {
        auto store = SweepStore::open(db.toStdString());
        QVERIFY(store);
        for (const SweepPoint& p : expandSweep(*s))
            QVERIFY(*(*store)->insert(runSweepPoint(*s, p)));
    }
    auto t = SweepTable::load(db);
    QVERIFY(t);
    QCOMPARE(t->size(), 2);
    QVERIFY(t->parameters().contains("dims.seq"));
    QVERIFY(!t->parameters().contains("dims.past"));
    QVERIFY(t->hardwareParameters().isEmpty());
    QCOMPARE(t->values("dims.seq"), (QStringList{"8", "16"}));
    t->setFilter("dims.seq", "16");
    QCOMPARE(int(t->filtered().size()), 1);

    QVERIFY(m_w->openSweepDatabase(db));
    SweepView* v = m_w->sweepView();
    QVERIFY(v);
    QCOMPARE(v->colourBy(), QStringLiteral("dims.seq")); // the one parameter that varies
    QCOMPARE(v->colourClassCount(), 2);
    v->setFilter("dims.seq", "8");
    QCOMPARE(v->shownCount(), 1);
    v->setFilter("dims.seq", "");
    int pick = -1;
    for (int i = 0; i < v->table().size(); ++i)
        if (v->table().value(i, "dims.seq") == "16") pick = i;
    QVERIFY(pick >= 0);
    QVERIFY2(v->describe(pick).contains("dimensions: past 4, seq 16"),
             qPrintable(v->describe(pick)));
    QVERIFY2(m_w->openSweepPoint(v->table().row(pick), db), qPrintable(m_w->lastError()));
    const Document* d = m_w->document();
    QCOMPARE(d->network()->dims, (std::map<std::string, std::int64_t>{{"past", 4}, {"seq", 16}}));
    QVERIFY(d->evaluation()->valid);
    QCOMPARE(d->evaluation()->cost, v->table().row(pick).cost);
}

void TstSweepView::badDatabase() {
    const QString text = m_dir.filePath("text.sqlite");
    QFile f(text);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(300, 'x'));
    f.close();
    QVERIFY(!m_w->openSweepDatabase(text));
    QVERIFY2(m_w->lastError().startsWith(text), qPrintable(m_w->lastError()));
    QVERIFY(!m_w->openSweepDatabase(m_dir.filePath("none.sqlite")));
    QVERIFY(m_w->lastError().contains("no such file"));
}

QTEST_MAIN(TstSweepView)
#include "tst_sweepview.moc"
