// The registrations collected by command.h's CommandRegistration, for the
// executables' main() (layersec: main.cc, layersec-node:
// apps/layersec_node/main.cc), which sort them by order and run them.
#pragma once

#include <utility>
#include <vector>

#include "command.h"

namespace layersec::app {

// Every registration linked into the executable, in static initialisation
// order (command.cc).
std::vector<std::pair<int, Registrar>>& command_registry();

// Runs the registrations on `app` in order, parses the arguments and runs
// the chosen command. Returns the exit status: CLI11's for a parse error or
// --help, 1 (after "layersec: WHAT" on stderr) for an exception a command
// threw, else exit_code().
int run_commands(CLI::App& app, int argc, const char* const* argv);

}  // namespace layersec::app
