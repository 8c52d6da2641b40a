// The figures of an LLM generate run (engine/pipeline/llm_generate.h) for the metrics dock:
// a phase selector (the prefill and each decode point) and TTFT, TPOT, tokens/s, energy per
// token and the KV cache size, with the selected phase's own delay and energy.
#pragma once

#include "pipeline/llm_generate.h"

#include <QMap>
#include <QWidget>
#include <memory>

class QComboBox;
class QFormLayout;
class QLabel;

namespace tilescope::ui {

class GeneratePanel : public QWidget {
    Q_OBJECT
  public:
    explicit GeneratePanel(QWidget* parent = nullptr);

    // Shows a run; null clears the panel. `clockGHz` is the template's clock (times).
    void setRun(std::shared_ptr<const GenerateRun> run, double clockGHz);
    int currentPhase() const; // -1 without a run
    void selectPhase(int index);
    QString figureText(const QString& key) const; // a label's text (tests)
    QComboBox* phaseSelector() const { return m_phases; }

  signals:
    // The user picked a phase: its schedule (run->phases[index]) is the one to show.
    void phaseSelected(int index);

  private:
    void refreshPhase();
    QLabel* figure(const QString& key) const;

    std::shared_ptr<const GenerateRun> m_run;
    double m_clockGHz = 1;
    QComboBox* m_phases;
    QFormLayout* m_form;
    QMap<QString, QLabel*> m_figures;
};

} // namespace tilescope::ui
