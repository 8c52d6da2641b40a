#include "core/programrunner.h"

#include "core/document.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tilescope::ui {

namespace {
// A replaced program (hundreds of MB for a large schedule) goes back to the system, not
// only to the allocator's free lists: glibc keeps freed heap pages otherwise, and the
// window's resident memory would stay at its largest program's.
void returnFreedMemory() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
} // namespace

ProgramRunner::ProgramRunner(Document* doc, QObject* parent) : QObject(parent), m_doc(doc) {
    // Edits come in bursts (undo held down, a search adopting): generate once they settle.
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(300);
    connect(&m_debounce, &QTimer::timeout, this, &ProgramRunner::start);
    // Only the tree and the inputs matter: a running search that leaves the document's
    // tree alone triggers nothing.
    connect(m_doc, &Document::treeChanged, this, &ProgramRunner::schedule);
    connect(m_doc, &Document::documentReset, this, &ProgramRunner::schedule);
    connect(m_doc, &Document::objectiveChanged, this, &ProgramRunner::schedule);
    if (m_doc->hasModel()) schedule();
}

std::shared_ptr<const ProgramRun> ProgramRunner::current() const {
    return m_last && m_last->revision == m_doc->revision() ? m_last : nullptr;
}

void ProgramRunner::schedule() {
    if (!m_doc->hasModel()) return;
    m_debounce.start();
    emit runStarted();
}

void ProgramRunner::start() {
    if (!m_doc->hasModel()) return;
    m_ctx.follow(m_doc->network(), m_doc->hardware());
    auto ctx = m_ctx.ctx;
    auto net = m_ctx.net;
    auto hw = m_ctx.hw;
    const RATree tree = m_doc->tree();
    const int batch = m_doc->batch();
    const EvalOptions eo = m_doc->evalOptions(false);
    const quint64 rev = m_doc->revision();
    m_job.run(
        rev,
        [ctx, net, hw, tree, batch, eo, rev] {
            return ProgramRun::build(*ctx, tree, batch, eo, rev);
        },
        [this](std::shared_ptr<const ProgramRun> run, quint64 stamp) {
            if (stamp != m_doc->revision()) {
                // Overtaken by an edit: regenerate for the tree shown now (unless that
                // edit's debounce is still to fire).
                if (!m_debounce.isActive()) start();
                return;
            }
            m_last = std::move(run);
            emit runReady(m_last);
            // The views have let go of the previous run by the next turn of the event loop.
            QTimer::singleShot(0, this, [] { returnFreedMemory(); });
        });
}

} // namespace tilescope::ui
