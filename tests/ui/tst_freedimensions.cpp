// A model whose export left dimensions free (the Llama-style decoder of tests/data, seq and
// past): the dialog that asks their sizes, the window refusing the model without them and
// opening it with them, and a session that keeps them.
#include "core/document.h"
#include "testwindow.h"
#include "widgets/dimensionsdialog.h"
#include "widgets/sessioncontroller.h"

#include <QSpinBox>
#include <QtTest>

using namespace tilescope;
using namespace tilescope::ui;

namespace {
const QString kDecoder = QStringLiteral(TILESCOPE_TESTDATA "/llama_decoder.onnx");
} // namespace

class TestFreeDimensions : public QObject {
    Q_OBJECT
  private slots:
    void dialogAsksEachDimension();
    void windowOpensWithSizesAndSessionKeepsThem();
};

void TestFreeDimensions::dialogAsksEachDimension() {
    QStandardPaths::setTestModeEnabled(true);
    auto free = freeDimensions(kDecoder.toStdString());
    QVERIFY(free.ok());
    DimensionsDialog dialog(kDecoder, *free);
    QSpinBox* seq = dialog.spinBox(QStringLiteral("seq"));
    QSpinBox* past = dialog.spinBox(QStringLiteral("past"));
    QVERIFY(seq && past);
    QVERIFY(past->toolTip().contains(QStringLiteral("input 'past_k0', axis 2")));
    seq->setValue(1);
    past->setValue(255);
    const auto b = dialog.bindings();
    QCOMPARE(b.at("seq"), std::int64_t(1));
    QCOMPARE(b.at("past"), std::int64_t(255));
    // Accepted sizes come back next time.
    dialog.accept();
    DimensionsDialog again(kDecoder, *free);
    QCOMPARE(again.spinBox(QStringLiteral("past"))->value(), 255);
}

void TestFreeDimensions::windowOpensWithSizesAndSessionKeepsThem() {
    QTemporaryDir dir;
    auto w = openTestWindow(dir);
    QVERIFY(w);
    // Without sizes the model is refused, the error listing what to give; nothing opens.
    QVERIFY(!w->openModel(kDecoder));
    QVERIFY2(w->lastError().contains(QStringLiteral("free dimensions seq")) &&
                 w->lastError().contains(QStringLiteral("past")),
             qPrintable(w->lastError()));
    QVERIFY(!w->document()->network());
    QVERIFY(w->openModel(kDecoder, std::map<std::string, std::int64_t>{{"seq", 1}, {"past", 255}}));
    QVERIFY(waitForLayout(*w));
    QCOMPARE(w->document()->network()->totalMacsPerSample(), Count(493568));
    const QString session = dir.filePath(QStringLiteral("decode.tilescope.json"));
    QVERIFY(w->sessions()->saveSession(session));

    auto w2 = openTestWindow(dir);
    QVERIFY(w2);
    QVERIFY2(w2->sessions()->openSession(session), qPrintable(w2->lastError()));
    QVERIFY(waitForLayout(*w2));
    QCOMPARE(w2->document()->network()->dims,
             (std::map<std::string, std::int64_t>{{"past", 255}, {"seq", 1}}));
    QCOMPARE(w2->document()->network()->totalMacsPerSample(), Count(493568));
}

QTEST_MAIN(TestFreeDimensions)
#include "tst_freedimensions.moc"
