#include "core/selectionstate.h"

namespace tilescope::ui {

SelectionState::SelectionState(QObject* parent) : QObject(parent) {}

void SelectionState::select(int node, const QString& path) {
    if (node == m_node && path == m_path) return;
    m_node = node;
    m_path = node < 0 ? QString() : path;
    emit changed(m_node);
}

void SelectionState::clear() {
    select(-1, QString());
}

void SelectionState::remap(const RATree& tree) {
    if (m_path.isEmpty()) return;
    const int id = tree.nodeAtPath(m_path.toStdString());
    m_node = id;
    if (id < 0) m_path.clear();
    emit changed(m_node);
}

} // namespace tilescope::ui
