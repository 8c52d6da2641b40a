// The old name of program_flow.h (the generate, validate and replay flow), kept only for
// ui/widgets/mainwindow.cpp until its include names program_flow.h; then delete this file.
#pragma once

#include "pipeline/program_flow.h"
