// The units policy (engine/util/units.h): engineering prefixes both ways, one formatter for
// energy, time in cycles and wall time at the clock, bytes.
#include "util/units.h"

#include <QTest>
#include <cmath>
#include <limits>

using namespace tilescope;

class TstUnits : public QObject {
    Q_OBJECT
  private slots:
    void engineering_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("unit");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << 0.0 << "J"
                              << "0 J";
        QTest::newRow("unit") << 1.0 << "J"
                              << "1.000 J";
        QTest::newRow("milli") << 2.2913e-3 << "J"
                               << "2.291 mJ";
        QTest::newRow("micro") << 1.2e-4 << "J" << QString::fromUtf8("120.0 \xC2\xB5J");
        QTest::newRow("pico") << 8.45e-10 << "J"
                              << "845.0 pJ";
        QTest::newRow("nano 3 digits") << 12.5e-9 << "J"
                                       << "12.50 nJ";
        QTest::newRow("kilo") << 23050.0 << ""
                              << "23.05 k";
        QTest::newRow("mega") << 1.792e6 << ""
                              << "1.792 M";
        QTest::newRow("rounds up a prefix") << 999.96 << "s"
                                            << "1.000 ks";
        QTest::newRow("rounds up a digit") << 9.9996 << "s"
                                           << "10.00 s";
        QTest::newRow("negative") << -3.5e-3 << "J"
                                  << "-3.500 mJ";
        QTest::newRow("femto") << 1e-15 << "J"
                               << "1.000 fJ";
        QTest::newRow("below atto") << 1e-21 << "J"
                                    << "0.001000 aJ";
        // Objectives such as E x D^2 on a large mesh reach 10^18 and more.
        QTest::newRow("exa") << 2.5e18 << ""
                             << "2.500 E";
        QTest::newRow("beyond yotta") << 3e27 << ""
                                      << "3000 Y";
        QTest::newRow("nan") << std::numeric_limits<double>::quiet_NaN() << "J"
                             << "-";
    }
    void engineering() {
        QFETCH(double, value);
        QFETCH(QString, unit);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatEngineering(value, unit.toStdString())), text);
    }

    // A node's Energy column must not read "0.00 J": a node's
    // energy is a few mJ, i.e. some 1e9 pJ, and must keep its prefix.
    void energyScalesDown() {
        QCOMPARE(QString::fromStdString(formatEnergy(2.2913e9)), QStringLiteral("2.291 mJ"));
        QCOMPARE(QString::fromStdString(formatEnergy(845)), QStringLiteral("845.0 pJ"));
        QCOMPARE(QString::fromStdString(formatEnergy(1.5e6, true)),
                 QString::fromUtf8("+1.500 \xC2\xB5J"));
    }

    // Time: cycles and wall time at the template clock; 1.792e6 cycles at 1 GHz = 1.792 ms.
    void timeAtClock() {
        QCOMPARE(QString::fromStdString(formatTime(1.792e6, 1.0)),
                 QStringLiteral("1.792 M cycles (1.792 ms)"));
        QCOMPARE(QString::fromStdString(formatDuration(2.0e4, 2.0)),
                 QString::fromUtf8("10.00 \xC2\xB5s"));
        QCOMPARE(QString::fromStdString(formatCycles(512)), QStringLiteral("512.0 cycles"));
    }

    // Chart axes: one prefix from the largest value.
    void scales() {
        const UnitScale e = energyScale(2.2913e9); // 2.29 mJ in pJ
        QCOMPARE(QString::fromStdString(e.unit), QStringLiteral("mJ"));
        QVERIFY(std::abs(2.2913e9 * e.factor - 2.2913) < 1e-12);
        QCOMPARE(QString::fromStdString(engineeringScale(0.5, "s").unit), QStringLiteral("ms"));
        QCOMPARE(QString::fromStdString(engineeringScale(0, "J").unit), QStringLiteral("J"));
    }

    void bytes() {
        QCOMPARE(QString::fromStdString(formatBytes(1234)), QStringLiteral("1.234 KB"));
        QCOMPARE(QString::fromStdString(formatBytes(5.5e9)), QStringLiteral("5.500 GB"));
        QCOMPARE(QString::fromStdString(formatBytes(12)), QStringLiteral("12.00 B"));
    }
};

QTEST_APPLESS_MAIN(TstUnits)
#include "tst_units.moc"
