// One undoable tree edit. It keeps the whole tree before and after: trees are small arena
// values and the engine's edits renumber nodes, so a snapshot is simpler and exact.
#pragma once

#include "core/document.h"
#include "tree/ratree.h"

#include <QUndoCommand>

namespace tilescope::ui {

class Document;

class EditCommand : public QUndoCommand {
  public:
    EditCommand(Document* doc, const QString& text, RATree before, RATree after);
    void redo() override;
    void undo() override;

  private:
    Document* m_doc;
    RATree m_before, m_after;
};

// A change of the inputs (hardware, batch): the document's inputs and tree before and after,
// so switching a preset or the batch is one undo step instead of discarding the edits and
// the history before it.
class InputsCommand : public QUndoCommand {
  public:
    using State = DocumentInputs;
    InputsCommand(Document* doc, const QString& text, State before, State after);
    void redo() override;
    void undo() override;

  private:
    Document* m_doc;
    State m_before, m_after;
};

// A change of the DRAM layout choice (the global choice or a pinned tensor).
class LayoutsCommand : public QUndoCommand {
  public:
    LayoutsCommand(Document* doc, const QString& text, LayoutChoice before, LayoutChoice after);
    void redo() override;
    void undo() override;

  private:
    Document* m_doc;
    LayoutChoice m_before, m_after;
};

} // namespace tilescope::ui
