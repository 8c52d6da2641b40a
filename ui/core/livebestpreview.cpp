#include "core/livebestpreview.h"

#include "core/document.h"
#include "core/layernames.h"
#include "eval/evaluator.h"

namespace tilescope::ui {

LiveBestPreview::LiveBestPreview(Document* doc, QObject* parent) : QObject(parent), m_doc(doc) {
    // A best improves many times a second early in a run: redraw it a few times a second.
    m_throttle.setSingleShot(true);
    m_throttle.setInterval(400);
    connect(&m_throttle, &QTimer::timeout, this, &LiveBestPreview::start);
    // New inputs make the old best meaningless (its tree refers to the old network).
    connect(m_doc, &Document::documentReset, this, &LiveBestPreview::clear);
}

LiveBestPreview::~LiveBestPreview() = default;

void LiveBestPreview::offer(std::shared_ptr<const RATree> best) {
    if (!best || best == m_started || best == m_offered) return;
    if (*best == m_doc->tree()) {
        // Nothing to preview: the best is what the views show already (just adopted, or
        // the search has not improved on its start yet).
        m_throttle.stop();
        m_job.drop();
        m_offered.reset();
        m_started = std::move(best);
        if (m_current) {
            m_current.reset();
            emit changed(nullptr);
        }
        return;
    }
    m_offered = std::move(best);
    if (!m_throttle.isActive()) {
        // The first best of a preview shows at once; later ones wait for the interval.
        if (!m_current && !m_started)
            start();
        else
            m_throttle.start();
    }
}

void LiveBestPreview::clear() {
    m_throttle.stop();
    m_job.drop();
    ++m_generation;
    m_offered.reset();
    m_started.reset();
    if (m_current) {
        m_current.reset();
        emit changed(nullptr);
    }
}

void LiveBestPreview::start() {
    if (!m_offered || !m_doc->hasModel()) return;
    // One job at a time, never dropped for a newer best: with bests arriving faster than a
    // job takes (a large model), dropping would never show any. The job's end starts the
    // newest offered one; a job dropped by clear() ends silently, hence the retry.
    if (m_job.busy()) {
        m_throttle.start();
        return;
    }
    m_ctx.follow(m_doc->network(), m_doc->hardware());
    m_started = std::exchange(m_offered, nullptr);
    m_throttle.start(); // the next best waits at least an interval
    auto ctx = m_ctx.ctx;
    auto net = m_ctx.net;
    auto hw = m_ctx.hw;
    auto tree = m_started;
    const int batch = m_doc->batch();
    // The intervals the layout and the tile load are made of: detail.
    const EvalOptions opt = m_doc->evalOptions(true);
    const QStringList names = displayLayerNames(*net);
    m_job.run(
        m_generation,
        [ctx, net, hw, tree, batch, opt, names] {
            auto best = std::make_shared<LiveBest>();
            best->tree = tree;
            best->eval = std::make_shared<const Evaluation>(evaluate(*ctx, *tree, batch, opt));
            if (!best->eval->valid) return std::shared_ptr<const LiveBest>();
            best->layout =
                StLayout::build(best->eval, hw->tiles(), names, StRowOrder::forHardware(*hw));
            best->load = tileLoad(*best->eval, hw->tiles());
            return std::shared_ptr<const LiveBest>(std::move(best));
        },
        [this](std::shared_ptr<const LiveBest> best, quint64 generation) {
            if (generation != m_generation) return;
            if (best) { // else not valid (a best always is; the inputs changed meanwhile)
                ++m_built;
                m_current = std::move(best);
                emit changed(m_current);
            }
            if (m_offered && !m_throttle.isActive()) start();
        });
}

} // namespace tilescope::ui
