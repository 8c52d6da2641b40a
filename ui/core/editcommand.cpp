#include "core/editcommand.h"

#include "core/document.h"

namespace tilescope::ui {

EditCommand::EditCommand(Document* doc, const QString& text, RATree before, RATree after)
    : QUndoCommand(text), m_doc(doc), m_before(std::move(before)), m_after(std::move(after)) {}

void EditCommand::redo() {
    m_doc->restoreTree(m_after);
}
void EditCommand::undo() {
    m_doc->restoreTree(m_before);
}

InputsCommand::InputsCommand(Document* doc, const QString& text, State before, State after)
    : QUndoCommand(text), m_doc(doc), m_before(std::move(before)), m_after(std::move(after)) {}

void InputsCommand::redo() {
    m_doc->restoreInputs(m_after);
}
void InputsCommand::undo() {
    m_doc->restoreInputs(m_before);
}

LayoutsCommand::LayoutsCommand(Document* doc, const QString& text, LayoutChoice before,
                               LayoutChoice after)
    : QUndoCommand(text), m_doc(doc), m_before(std::move(before)), m_after(std::move(after)) {}

void LayoutsCommand::redo() {
    m_doc->restoreLayouts(m_after);
}
void LayoutsCommand::undo() {
    m_doc->restoreLayouts(m_before);
}

} // namespace tilescope::ui
