// The document: the loaded network and hardware, the batch and objective, the current RA
// tree with its (detailed) evaluation, and the QUndoStack of tree edits. Every edit goes
// through here: refused edits change nothing and report the engine's reason; accepted ones
// become an undo command, re-evaluate at once and announce treeChanged() to all views.
#pragma once

#include "eval/evaluator.h"
#include "hw/hardware.h"
#include "model/network.h"
#include "tree/ratree.h"
#include "tree/repetition.h"
#include "util/result.h"

#include <QObject>
#include <QString>
#include <QUndoStack>
#include <functional>
#include <memory>
#include <optional>

namespace tilescope::ui {

// Document operations return the engine's error convention (util/result.h): nullopt when
// done, else the Error naming the place and the reason. What a view shows of one:
inline QString errorText(const std::optional<Error>& e) {
    return e ? QString::fromStdString(e->message) : QString();
}

class Session;

// What an InputsCommand swaps: everything a hardware or batch change replaces.
struct DocumentInputs {
    std::shared_ptr<const Hardware> hw;
    QString hwSource;
    int batch = 1;
    Objective objective;
    RATree tree;
};

class Document : public QObject {
    Q_OBJECT
  public:
    explicit Document(QObject* parent = nullptr);
    ~Document() override;

    bool hasModel() const { return bool(m_net); }
    std::shared_ptr<const Network> network() const { return m_net; }
    std::shared_ptr<const Hardware> hardware() const { return m_hw; }
    QString modelPath() const { return m_modelPath; }
    QString modelSha256() const { return m_modelSha; }
    QString hardwareSource() const { return m_hwSource; }
    int batch() const { return m_batch; }
    Objective objective() const { return m_objective; }
    // How the evaluation lays out DRAM feature maps (templates with a run model only;
    // docs/cost-model.md §4b): planned or one layout for all, with tensors pinned by name.
    // Every evaluation, search, export and program the GUI makes of this document uses it.
    const LayoutChoice& layouts() const { return m_layouts; }
    // The evaluation options of this document (objective, layouts; detail as asked).
    EvalOptions evalOptions(bool detail) const;
    const RATree& tree() const { return m_tree; }
    std::shared_ptr<const Evaluation> evaluation() const { return m_eval; }
    QUndoStack* undoStack() { return &m_undo; }
    // Increments on every tree or input change: off-thread jobs drop stale results with it.
    quint64 revision() const { return m_revision; }

    // Loading: each returns an empty string on success, else the one-line error
    // (file + place + reason); on error the document is left exactly as it was.
    // `dims`: the sizes of the model's free dimensions (docs/import.md), if it has any.
    [[nodiscard]] std::optional<Error>
    openModel(const QString& path, const std::map<std::string, std::int64_t>& dims = {});
    // The same with the network already read from `path` (checked before asking to save).
    [[nodiscard]] std::optional<Error> openModel(const QString& path, Network net);
    [[nodiscard]] std::optional<Error> setHardware(const Hardware& hw, const QString& source);
    [[nodiscard]] std::optional<Error> openHardware(const QString& pathOrPreset);
    [[nodiscard]] std::optional<Error> setBatch(int batch);
    void setObjective(const Objective& o);
    // One undoable step, like a tree edit (a pinned layout is a decision about the schedule);
    // re-evaluates, the planner re-planning the unpinned tensors. Nothing when unchanged.
    void setLayouts(const LayoutChoice& c, const QString& label);
    // Pins the DRAM layout of `tensor` (a layer's name for its output, a network input's
    // name), or unpins it (nullopt).
    void pinLayout(const std::string& tensor, std::optional<DramLayout> layout);
    // Replaces everything at once (session load): network, hardware, batch, objective, tree
    // and, when given, the layout choice (else the current one stays).
    [[nodiscard]] std::optional<Error>
    restore(std::shared_ptr<const Network> net, const QString& modelPath, const QString& sha256,
            const Hardware& hw, const QString& hwSource, int batch, const Objective& o,
            const RATree& tree, const std::optional<LayoutChoice>& layouts = std::nullopt);

    // Tree edits (docs/method.md §6); node ids refer to tree(). Empty string = accepted.
    [[nodiscard]] std::optional<Error> move(int node, int newParent, int position);
    [[nodiscard]] std::optional<Error> wrap(int parent, int first, int count, NodeType type);
    [[nodiscard]] std::optional<Error> dissolve(int cut);
    [[nodiscard]] std::optional<Error> flip(int cut);
    [[nodiscard]] std::optional<Error>
    stepSubBatch(int cut, int direction); // next (+1) / previous (-1) divisor
    [[nodiscard]] std::optional<Error> setSubBatch(int cut, int subBatch);
    [[nodiscard]] std::optional<Error> setPinned(int node, bool pinned);
    // An S cut's child's fixed tile count (0: the allocation decides; edit::setTiles).
    [[nodiscard]] std::optional<Error> setTiles(int node, int tiles);
    // A leaf's named partition (all 0: the mapper's choice; edit::setPartition).
    [[nodiscard]] std::optional<Error> setPartition(int node, const PartitionFactors& p);
    [[nodiscard]] std::optional<Error> swapWithNext(int node);
    // The detailed evaluation of another tree of this document's inputs (a search's best,
    // a tree file), with the document's memo caches; invalid with the reason when `tree`
    // does not fit the inputs.
    Evaluation evaluateOther(const RATree& tree) const;
    // Adopts a tree found elsewhere (search best, a tree file) as one undoable step.
    [[nodiscard]] std::optional<Error> adoptTree(const RATree& tree, const QString& label);

    // Called by EditCommand::redo/undo only.
    void restoreTree(const RATree& tree);
    // Called by InputsCommand::redo/undo only: hardware, batch, objective and tree at once.
    void restoreInputs(const DocumentInputs& state);
    // Called by LayoutsCommand::redo/undo only.
    void restoreLayouts(const LayoutChoice& c);
    // The last valid evaluation of this document's inputs and its tree: views keep showing
    // it (faded, with the reason) while the current tree is invalid. Null when there was
    // none since the inputs last changed.
    std::shared_ptr<const Evaluation> lastValidEvaluation() const { return m_lastValid; }
    const RATree& lastValidTree() const { return m_lastValidTree; }

  signals:
    // Network / hardware / batch changed: new everything. `undoable`: by an InputsCommand
    // (the undo stack records it), not a new model or session.
    void documentReset(bool undoable = false);
    void treeChanged(); // tree and evaluation changed (edit, undo, redo, adopt)
    void editRefused(const QString& reason);
    void objectiveChanged();
    void layoutsChanged(); // the layout choice changed (treeChanged follows)

  private:
    [[nodiscard]] std::optional<Error>
    applyEdit(const QString& label, const std::function<Result<RATree>(const RATree&)>& op);
    RATree startTree(const Network& net, const Hardware& hw, int batch,
                     const Objective& objective) const;
    [[nodiscard]] std::optional<Error> pushInputs(const QString& label,
                                                  const std::shared_ptr<const Hardware>& hw,
                                                  const QString& source, int batch,
                                                  const Objective& objective);
    void reevaluate();

    std::shared_ptr<const Network> m_net;
    // findRepetition(*m_net), found at the first edit of a tree with tied blocks and kept
    // while the network stays the same one.
    std::shared_ptr<const Network> m_repeatedIn;
    BlockRepetition m_repetition;
    std::shared_ptr<const Hardware> m_hw;
    std::unique_ptr<EvalContext> m_ctx; // memo caches survive edits (refers to m_net, m_hw)
    QString m_modelPath, m_modelSha, m_hwSource;
    int m_batch = 8;
    Objective m_objective;
    LayoutChoice m_layouts;
    RATree m_tree;
    std::shared_ptr<const Evaluation> m_eval;
    std::shared_ptr<const Evaluation> m_lastValid;
    RATree m_lastValidTree;
    QUndoStack m_undo;
    quint64 m_revision = 0;
};

} // namespace tilescope::ui
