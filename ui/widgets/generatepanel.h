// The figures of an LLM generate run (engine/pipeline/llm_generate.h) for the metrics dock:
// a phase selector (the prefill and each decode point) and TTFT, TPOT, tokens/s, energy per
// token and the KV cache size, with the selected phase's own delay and energy, and once the
// phases' programs are exported, the selected phase's program against its estimate.
#pragma once

#include "pipeline/llm_generate.h"

#include <QMap>
#include <QWidget>
#include <memory>

class QComboBox;
class QFormLayout;
class QLabel;
class QPushButton;

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
    QPushButton* exportButton() const { return m_export; }
    // The phases' programs as exported (engine exportPhases); none clears them.
    void setPrograms(std::vector<PhaseProgram> programs);

  signals:
    // The user picked a phase: its schedule (run->phases[index]) is the one to show.
    void phaseSelected(int index);
    // The user asked for every phase's program (Export programs...).
    void exportRequested();

  private:
    void refreshPhase();
    QLabel* figure(const QString& key) const;

    std::shared_ptr<const GenerateRun> m_run;
    double m_clockGHz = 1;
    QComboBox* m_phases;
    QPushButton* m_export;
    std::vector<PhaseProgram> m_programs;
    QFormLayout* m_form;
    QMap<QString, QLabel*> m_figures;
};

} // namespace tilescope::ui
