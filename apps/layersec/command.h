// Subcommand registry for the layersec CLI. Each cmd_*.cc file registers its
// subcommands with a static CommandRegistration, so modules add commands
// without touching main.cc. The `bench` group exists before any registrar
// runs; add benchmark subcommands to it with bench_group(root).
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace layersec::app {

using Registrar = std::function<void(CLI::App& root)>;

struct CommandRegistration {
  // Lower order registers (and lists) first.
  CommandRegistration(int order, Registrar registrar);
};

// The `layersec bench` group.
CLI::App& bench_group(CLI::App& root);

// Exit status a command's callback wants the process to end with.
void set_exit_code(int code);
int exit_code();

// Default folder of the shared vectors: LAYERSEC_VECTORS_DIR from the
// environment, else PREFIX/share/layersec/vectors for an installed binary,
// else the folder compiled in.
std::string default_vectors_dir();
// Folder holding testdata/: PREFIX/share/layersec for an installed binary,
// else the source tree the binary was built from (LAYERSEC_SOURCE_DIR in the
// environment still overrides it where a command reads it).
std::string default_source_dir();

}  // namespace layersec::app
