#include "widgets/userguidedialog.h"

#include <QAbstractTextDocumentLayout>
#include <QFile>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QScrollBar>
#include <QShortcut>
#include <QSplitter>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QVBoxLayout>

namespace tilescope::ui {

UserGuideDialog::UserGuideDialog(QWidget* parent)
    : QDialog(parent), m_contents(new QListWidget(this)), m_text(new QTextBrowser(this)),
      m_search(new QLineEdit(this)) {
    setObjectName(QStringLiteral("userGuide"));
    setWindowTitle(tr("Tilescope user guide"));
    QFile f(QStringLiteral(":/docs/user-guide.md"));
    const QString markdown = f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll())
                                                         : tr("The user guide is missing.");
    m_text->setMarkdown(markdown);
    m_text->setOpenExternalLinks(true);
    m_text->setObjectName(QStringLiteral("guideText"));
    // The contents: every "## " heading of the guide.
    for (const QString& line : markdown.split(QLatin1Char('\n')))
        if (line.startsWith(QLatin1String("## "))) m_contents->addItem(line.mid(3).trimmed());
    m_contents->setObjectName(QStringLiteral("guideContents"));
    m_contents->setMaximumWidth(220);
    connect(m_contents, &QListWidget::currentRowChanged, this, &UserGuideDialog::showSection);

    m_search->setObjectName(QStringLiteral("guideSearch"));
    m_search->setPlaceholderText(tr("Search the guide (Enter: next match)"));
    m_search->setClearButtonEnabled(true);
    auto* status = new QLabel(this);
    connect(m_search, &QLineEdit::returnPressed, this, [this, status] {
        status->setText(m_search->text().isEmpty() || find(m_search->text()) ? QString()
                                                                             : tr("Not found"));
    });

    auto* splitter = new QSplitter(this);
    splitter->addWidget(m_contents);
    splitter->addWidget(m_text);
    splitter->setStretchFactor(1, 1);
    auto* lay = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    top->addWidget(m_search, 1);
    top->addWidget(status);
    lay->addLayout(top);
    lay->addWidget(splitter, 1);
    // Esc closes a dialog only while no child takes the key; Ctrl+W is the window's.
    for (const QKeySequence& key :
         {QKeySequence(Qt::Key_Escape), QKeySequence(Qt::CTRL | Qt::Key_W)}) {
        auto* s = new QShortcut(key, this);
        s->setContext(Qt::WindowShortcut);
        connect(s, &QShortcut::activated, this, &QDialog::close);
    }
}

bool UserGuideDialog::find(const QString& word) {
    if (m_text->find(word)) return true;
    m_text->moveCursor(QTextCursor::Start); // wrap around
    return m_text->find(word);
}

void UserGuideDialog::showSection(int row) {
    if (row < 0 || row >= m_contents->count()) return;
    const QString heading = m_contents->item(row)->text();
    QTextDocument* doc = m_text->document();
    for (QTextBlock b = doc->begin(); b.isValid(); b = b.next())
        if (b.blockFormat().headingLevel() == 2 && b.text().trimmed() == heading) {
            QTextCursor c(b);
            m_text->setTextCursor(c);
            // Scroll so the heading is at the top rather than just visible.
            m_text->verticalScrollBar()->setValue(
                int(m_text->document()->documentLayout()->blockBoundingRect(b).top()));
            return;
        }
}

} // namespace tilescope::ui
