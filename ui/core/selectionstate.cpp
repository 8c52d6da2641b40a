#include "core/selectionstate.h"

#include <algorithm>
#include <utility>

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
    const RATree old = std::exchange(m_tree, tree);
    if (m_path.isEmpty()) return;
    int id = -1;
    // The same node is the one with the same layers under it (and the same kind); an edit
    // renumbers ids and paths but a moved leaf keeps its layer and a wrapped cut its leaves.
    if (m_node >= 0 && m_node < old.size() && old.attached(m_node) &&
        old.pathOf(m_node) == m_path.toStdString()) {
        const RANode& was = old.node(m_node);
        if (was.type == NodeType::Leaf) {
            id = tree.leafOf(was.layer);
        } else {
            auto layers = old.layersUnder(m_node);
            std::sort(layers.begin(), layers.end());
            for (int i = 0; i < tree.size() && id < 0; ++i) {
                if (!tree.attached(i) || tree.node(i).type != was.type) continue;
                auto l = tree.layersUnder(i);
                if (l.size() != layers.size()) continue;
                std::sort(l.begin(), l.end());
                if (l == layers) id = i;
            }
        }
    }
    if (id < 0) id = tree.nodeAtPath(m_path.toStdString());
    m_node = id;
    m_path = id < 0 ? QString() : QString::fromStdString(tree.pathOf(id));
    emit changed(m_node);
}

} // namespace tilescope::ui
