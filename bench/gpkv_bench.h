// `gpkv bench`: the benchmark subcommand of the gpkv tool (built into it).
#pragma once

namespace CLI {
class App;
}

namespace gpkv::bench {

// Adds the `bench` subcommand to the tool's CLI11 app. Its callback runs the
// benchmark and sets `*exit_code` (0 ok, 1 usage, 3 error).
void RegisterBenchCommand(CLI::App& app, int* exit_code);

}  // namespace gpkv::bench
