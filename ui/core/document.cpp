#include "core/document.h"

#include "core/editcommand.h"
#include "core/qstrings.h"
#include "model/model_loader.h"
#include "search/operators.h"
#include "search/search.h"
#include "util/fileio.h"

#include <QFileInfo>
#include <algorithm>

namespace tilescope::ui {

Document::Document(QObject* parent) : QObject(parent) {
    Hardware hw;
    presetHardware("edge", hw);
    m_hw = std::make_shared<const Hardware>(hw);
    m_hwSource = QStringLiteral("edge");
    m_objective = defaultObjective(hw);
}

Document::~Document() = default;

RATree Document::startTree(const Network& net, const Hardware& hw, int batch,
                           const Objective& objective) const {
    // The search's own start (layer-sequential, batch halved until valid); when nothing is
    // valid the plain layer-sequential tree is shown with the evaluator's reason in red.
    auto t = defaultInitialTree(net, hw, SearchMode::Set, batch, objective);
    if (t) return std::move(t).value();
    return RATree::layerSequential(net, batch);
}

void Document::reevaluate() {
    ++m_revision;
    if (!m_net || m_tree.empty()) {
        m_eval = std::make_shared<const Evaluation>();
        return;
    }
    m_eval =
        std::make_shared<const Evaluation>(evaluate(*m_ctx, m_tree, m_batch, evalOptions(true)));
    if (m_eval->valid) {
        m_lastValid = m_eval;
        m_lastValidTree = m_tree;
    }
}

EvalOptions Document::evalOptions(bool detail) const {
    EvalOptions opt;
    opt.objective = m_objective;
    opt.layouts = m_layouts;
    opt.detail = detail;
    return opt;
}

Evaluation Document::evaluateOther(const RATree& tree) const {
    Evaluation e;
    if (!m_net || !m_ctx || tree.empty()) {
        e.reason = "no model loaded";
        return e;
    }
    if (auto why = validateStructure(tree, *m_net, m_batch)) {
        e.reason = why->message;
        return e;
    }
    return evaluate(*m_ctx, tree, m_batch, evalOptions(true));
}

std::optional<Error> Document::openModel(const QString& path,
                                         const std::map<std::string, std::int64_t>& dims) {
    ImportOptions options;
    options.dims = dims;
    auto net = loadModel(path.toStdString(), options);
    if (!net) return net.error();
    return openModel(path, std::move(net).value());
}

std::optional<Error> Document::openModel(const QString& path, Network net) {
    auto sha = sha256File(path.toStdString());
    if (!sha) return sha.error();
    auto shared = std::make_shared<const Network>(std::move(net));
    const RATree tree = startTree(*shared, *m_hw, m_batch, m_objective);
    // Pins name the old model's tensors; the planned or fixed choice carries over.
    LayoutChoice layouts = m_layouts;
    layouts.pins.clear();
    return restore(shared, QFileInfo(path).absoluteFilePath(), qs(*sha), *m_hw, m_hwSource, m_batch,
                   m_objective, tree, layouts);
}

std::optional<Error> Document::setHardware(const Hardware& hw, const QString& source) {
    // Schedules of a platform are ranked by the objective it was evaluated with.
    const Objective objective = defaultObjective(hw);
    if (!m_net) {
        m_hw = std::make_shared<const Hardware>(hw);
        m_hwSource = source;
        m_objective = objective;
        m_ctx.reset();
        ++m_revision;
        emit documentReset();
        return std::nullopt;
    }
    return pushInputs(tr("Hardware %1").arg(source), std::make_shared<const Hardware>(hw), source,
                      m_batch, objective);
}

std::optional<Error> Document::openHardware(const QString& pathOrPreset) {
    auto hw = loadHardware(pathOrPreset.toStdString());
    if (!hw) return hw.error();
    return setHardware(*hw, pathOrPreset);
}

std::optional<Error> Document::setBatch(int batch) {
    if (batch < 1) return Error{"batch: must be at least 1"};
    if (batch == m_batch) return std::nullopt;
    if (!m_net) {
        m_batch = batch;
        emit documentReset();
        return std::nullopt;
    }
    return pushInputs(tr("Batch %1").arg(batch), m_hw, m_hwSource, batch, m_objective);
}

std::optional<Error> Document::pushInputs(const QString& label,
                                          const std::shared_ptr<const Hardware>& hw,
                                          const QString& source, int batch,
                                          const Objective& objective) {
    // The new inputs start from the search's default tree; the change is one undo step, so
    // the edits and the history before it stay one Undo away.
    DocumentInputs after{hw, source, batch, objective, startTree(*m_net, *hw, batch, objective)};
    if (auto why = validateStructure(after.tree, *m_net, batch)) return why;
    DocumentInputs before{m_hw, m_hwSource, m_batch, m_objective, m_tree};
    m_undo.push(new InputsCommand(this, label, std::move(before), std::move(after)));
    return std::nullopt;
}

void Document::restoreInputs(const DocumentInputs& in) {
    const bool newContext = !m_ctx || in.hw != m_hw;
    if (newContext) m_ctx.reset();
    m_hw = in.hw;
    m_hwSource = in.hwSource;
    m_batch = in.batch;
    const bool objectiveChange = in.objective.n != m_objective.n || in.objective.m != m_objective.m;
    m_objective = in.objective;
    m_tree = in.tree;
    if (newContext) m_ctx = std::make_unique<EvalContext>(*m_net, *m_hw);
    m_lastValid.reset();
    m_lastValidTree = RATree{};
    reevaluate();
    emit documentReset(true);
    if (objectiveChange) emit objectiveChanged();
    emit treeChanged();
}

void Document::setObjective(const Objective& o) {
    if (o.n == m_objective.n && o.m == m_objective.m) return;
    m_objective = o;
    reevaluate();
    emit objectiveChanged();
    emit treeChanged();
}

void Document::setLayouts(const LayoutChoice& c, const QString& label) {
    if (c == m_layouts) return;
    if (!m_net) {
        restoreLayouts(c);
        return;
    }
    m_undo.push(new LayoutsCommand(this, label, m_layouts, c));
}

void Document::pinLayout(const std::string& tensor, std::optional<DramLayout> layout) {
    LayoutChoice c = m_layouts;
    const QString name = qs(tensor);
    if (layout) {
        c.pins[tensor] = *layout;
        setLayouts(c, tr("Pin layout of %1 to %2").arg(name, qs(layoutName(*layout))));
    } else {
        c.pins.erase(tensor);
        setLayouts(c, tr("Unpin layout of %1").arg(name));
    }
}

void Document::restoreLayouts(const LayoutChoice& c) {
    m_layouts = c;
    reevaluate();
    emit layoutsChanged();
    emit treeChanged();
}

std::optional<Error> Document::restore(std::shared_ptr<const Network> net, const QString& modelPath,
                                       const QString& sha256, const Hardware& hw,
                                       const QString& hwSource, int batch, const Objective& o,
                                       const RATree& tree,
                                       const std::optional<LayoutChoice>& layouts) {
    if (!net) return Error{"no model"};
    if (auto why = validateStructure(tree, *net, batch)) return why;
    // Only now is anything replaced: a failed open above keeps the current document.
    m_ctx.reset();
    m_net = std::move(net);
    m_hw = std::make_shared<const Hardware>(hw);
    m_ctx = std::make_unique<EvalContext>(*m_net, *m_hw);
    m_modelPath = modelPath;
    m_modelSha = sha256;
    m_hwSource = hwSource;
    m_batch = batch;
    m_objective = o;
    if (layouts) m_layouts = *layouts;
    m_tree = tree;
    m_undo.clear();
    m_lastValid.reset();
    m_lastValidTree = RATree{};
    reevaluate();
    emit documentReset();
    emit treeChanged();
    return std::nullopt;
}

void Document::restoreTree(const RATree& tree) {
    m_tree = tree;
    reevaluate();
    emit treeChanged();
}

std::optional<Error> Document::applyEdit(const QString& label,
                                         const std::function<Result<RATree>(const RATree&)>& op) {
    Error reason{"no model loaded"};
    if (m_net && !m_tree.empty()) {
        auto r = op(m_tree);
        // A tree with tied blocks (a search with repeated blocks) keeps them tied: an edit
        // of the first block reaches every copy.
        if (r && hasTiedBlocks(m_tree)) {
            if (m_repeatedIn != m_net) m_repetition = findRepetition(*m_net), m_repeatedIn = m_net;
            r = tieBlocks(*r, *m_net, m_repetition);
        }
        if (r) {
            if (*r == m_tree) return std::nullopt; // nothing to record (pin a pinned node)
            m_undo.push(new EditCommand(this, label, m_tree, std::move(r).value()));
            return std::nullopt;
        }
        reason = r.error();
    }
    emit editRefused(QStringLiteral("%1 refused: %2").arg(label, qs(reason.message)));
    return reason;
}

std::optional<Error> Document::move(int node, int newParent, int position) {
    return applyEdit(tr("Move"), [&](const RATree& t) {
        return edit::move(t, *m_net, node, newParent, position);
    });
}

std::optional<Error> Document::wrap(int parent, int first, int count, NodeType type) {
    return applyEdit(
        type == NodeType::S ? tr("Wrap in S cut") : tr("Wrap in T cut"),
        [&](const RATree& t) { return edit::wrap(t, *m_net, parent, first, count, type, 1); });
}

std::optional<Error> Document::dissolve(int cut) {
    return applyEdit(tr("Dissolve cut"),
                     [&](const RATree& t) { return edit::dissolve(t, *m_net, cut); });
}

std::optional<Error> Document::flip(int cut) {
    return applyEdit(tr("Flip S/T"), [&](const RATree& t) { return edit::flip(t, *m_net, cut); });
}

std::optional<Error> Document::setSubBatch(int cut, int subBatch) {
    return applyEdit(tr("Set sub-batches"),
                     [&](const RATree& t) { return edit::setSubBatch(t, *m_net, cut, subBatch); });
}

std::optional<Error> Document::stepSubBatch(int cut, int direction) {
    return applyEdit(direction > 0 ? tr("More sub-batches") : tr("Fewer sub-batches"),
                     [&](const RATree& t) -> Result<RATree> {
                         if (cut < 0 || cut >= t.size() || !t.node(cut).isCut())
                             return Error{"not a cut: only S and T cuts have sub-batches"};
                         const RANode& n = t.node(cut);
                         const auto ds = divisorsOf(n.batch);
                         auto it = std::find(ds.begin(), ds.end(), n.subBatch);
                         if (it == ds.end())
                             return Error{"sub-batch count is not a divisor of the batch"};
                         if (direction > 0 && std::next(it) == ds.end())
                             return Error{"already " + std::to_string(n.subBatch) +
                                          " sub-batches of one sample each"};
                         if (direction < 0 && it == ds.begin())
                             return Error{"already a single sub-batch"};
                         const int next = direction > 0 ? *std::next(it) : *std::prev(it);
                         return edit::setSubBatch(t, *m_net, cut, next);
                     });
}

std::optional<Error> Document::setPinned(int node, bool pinned) {
    return applyEdit(pinned ? tr("Pin") : tr("Unpin"),
                     [&](const RATree& t) { return edit::setPinned(t, node, pinned); });
}

std::optional<Error> Document::setTiles(int node, int tiles) {
    return applyEdit(tiles > 0 ? tr("Fix tile count") : tr("Release tile count"),
                     [&](const RATree& t) { return edit::setTiles(t, node, tiles); });
}

std::optional<Error> Document::setPartition(int node, const PartitionFactors& p) {
    return applyEdit(p == PartitionFactors{} ? tr("Mapper's partition") : tr("Set partition"),
                     [&](const RATree& t) { return edit::setPartition(t, node, p); });
}

std::optional<Error> Document::swapWithNext(int node) {
    return applyEdit(tr("Swap with next"),
                     [&](const RATree& t) { return edit::swapWithNext(t, *m_net, node); });
}

std::optional<Error> Document::adoptTree(const RATree& tree, const QString& label) {
    return applyEdit(label, [&](const RATree&) -> Result<RATree> {
        if (auto why = validateStructure(tree, *m_net, m_batch)) return *why;
        return tree;
    });
}

} // namespace tilescope::ui
