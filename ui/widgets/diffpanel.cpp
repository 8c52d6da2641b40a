#include "widgets/diffpanel.h"

#include "core/bytestext.h"
#include "core/document.h"
#include "core/treediff.h"

#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tilescope::ui {

QTableWidget* makeDiffTable(QWidget* parent) {
    auto* t = new QTableWidget(0, 5, parent);
    t->setObjectName(QStringLiteral("diffTable"));
    t->setHorizontalHeaderLabels({DiffPanel::tr("Change"), DiffPanel::tr("Node"),
                                  DiffPanel::tr("Detail"), DiffPanel::tr("Energy B-A"),
                                  DiffPanel::tr("Time B-A")});
    t->verticalHeader()->hide();
    t->horizontalHeader()->setStretchLastSection(true);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setWordWrap(false);
    return t;
}

void fillDiffTable(QTableWidget* table, const TreeDiff& d) {
    table->setRowCount(int(d.rows.size()));
    for (int i = 0; i < int(d.rows.size()); ++i) {
        const TreeDiffRow& r = d.rows[size_t(i)];
        auto* kind = new QTableWidgetItem(QString::fromLatin1(toString(r.kind)));
        const QColor c = r.kind == TreeDiffRow::Added     ? QColor(46, 125, 50)
                         : r.kind == TreeDiffRow::Removed ? QColor(198, 40, 40)
                                                          : QColor(21, 101, 192);
        kind->setForeground(c);
        table->setItem(i, 0, kind);
        table->setItem(i, 1, new QTableWidgetItem(r.what));
        table->setItem(i, 2, new QTableWidgetItem(r.detail));
        auto right = [](const QString& s) {
            auto* it = new QTableWidgetItem(s);
            it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            return it;
        };
        table->setItem(i, 3, right(r.hasFigures ? energyText(r.energyDelta, true) : QString()));
        table->setItem(i, 4, right(r.hasFigures ? cyclesText(r.timeDelta, true) : QString()));
    }
    table->resizeColumnsToContents();
}

DiffPanel::DiffPanel(Document* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
    setObjectName(QStringLiteral("diffPanel"));
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(4, 4, 4, 4);
    auto* top = new QHBoxLayout;
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("diffSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    top->addWidget(m_summary, 1);
    m_adopt = new QPushButton(tr("Adopt B"), this);
    m_adopt->setToolTip(tr("Make B the document's tree (undoable)"));
    connect(m_adopt, &QPushButton::clicked, this, [this] {
        if (m_haveOther) emit adoptRequested(m_other, tr("Adopt %1").arg(m_source));
    });
    top->addWidget(m_adopt, 0, Qt::AlignTop);
    lay->addLayout(top);
    m_table = makeDiffTable(this);
    lay->addWidget(m_table, 1);
    connect(doc, &Document::treeChanged, this, &DiffPanel::refresh);
    connect(doc, &Document::documentReset, this, &DiffPanel::clearOther);
    refresh();
}

void DiffPanel::setOther(const RATree& tree, const QString& source) {
    m_other = tree;
    m_source = source;
    m_haveOther = true;
    refresh();
}

void DiffPanel::clearOther() {
    m_haveOther = false;
    m_other = RATree{};
    refresh();
}

QString DiffPanel::summary() const {
    return m_summary->text();
}

int DiffPanel::rowCount() const {
    return m_table->rowCount();
}

void DiffPanel::refresh() {
    m_table->setRowCount(0);
    m_adopt->setEnabled(false);
    if (!m_doc->hasModel() || !m_haveOther) {
        m_summary->setText(tr("A is the document's tree; B is the search's best (preview "
                              "before adopting) or a tree file (File > Compare with tree "
                              "file...)."));
        return;
    }
    const auto ea = m_doc->evaluation();
    const Evaluation eb = m_doc->evaluateOther(m_other);
    const double ghz = m_doc->hardware()->clockGHz;
    const TreeDiff d = diffTrees(m_doc->tree(), ea.get(), m_other, &eb, *m_doc->network());
    auto figures = [&](const Evaluation& e) {
        return e.valid ? tr("E %1, D %2").arg(energyText(e.energy.total()), timeText(e.delay, ghz))
                       : tr("invalid: %1").arg(QString::fromStdString(e.reason));
    };
    m_summary->setText(tr("<b>A</b> document: %1<br><b>B</b> %2: %3<br>%4")
                           .arg(figures(*ea), m_source.toHtmlEscaped(), figures(eb), d.summary()));
    m_adopt->setEnabled(!d.identical());
    fillDiffTable(m_table, d);
}

} // namespace tilescope::ui
