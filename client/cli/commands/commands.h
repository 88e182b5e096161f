// commands.h: the subcommands of invariant-client and the table main.cc
// dispatches on.
//
// A command makes its server calls through `client`, prints its result to
// stdout (CSV with a header line, or JSON lines with CommandContext::jsonl)
// and returns the process exit code of client/cli/format.h: kExitOk;
// kExitUsage for input rows that cannot be read or do not fit the model;
// kExitServerError when a call fails (gRPC code name and message on stderr);
// kExitFailure when stdout cannot be written. Error messages go to stderr,
// prefixed "invariant-client: ".
//
// main.cc has already checked the command-line (the subcommand, its argument
// count, --format, --batch_size, --version) before a command runs; the row
// flags (RowSourceFlags) are checked only when featurize or predict reads
// rows, after the model's metadata arrived.
//
// Thread-safety: a command writes to the process's stdout and stderr and may
// read stdin; run one at a time.
#ifndef INVARIANT_CLIENT_CLI_COMMANDS_COMMANDS_H_
#define INVARIANT_CLIENT_CLI_COMMANDS_COMMANDS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "client/client.h"

namespace invariant::cli {

// The row flags as given on the command line (main.cc's --input, ...);
// PrepareRows (row_input.h) checks them when it reads the rows.
struct RowSourceFlags {
  std::string input = "-";                  // FILE, or "-" for stdin
  std::string input_format = "auto";        // auto | text | idx
  std::string delimiter;                    // one character, "tab", or "" (by extension)
  std::string header = "auto";              // auto | yes | no
  std::vector<std::string> ignore_columns;  // header names or 1-based numbers
  std::string id_column;                    // header name or 1-based number; "" = none
  int64_t random_rows = 0;                  // > 0: that many generated rows instead of --input
  uint64_t seed = 1;                        // of the generated rows
};

// What a command needs besides the client: its argument and the flags.
struct CommandContext {
  v1::ModelSpec model;        // the MODEL argument (name "" when none), --version, --version_label
  bool jsonl = false;         // --format=jsonl; CSV otherwise
  int64_t batch_size = 1024;  // featurize, predict: rows per request
  std::string service;        // health: the service checked ("" = the server)
  RowSourceFlags rows;        // featurize, predict
  std::string action;         // repository: index | load | unload
};

int RunHealth(Client& client, const CommandContext& context);
int RunModels(Client& client, const CommandContext& context);
int RunMetadata(Client& client, const CommandContext& context);
int RunFeaturize(Client& client, const CommandContext& context);
int RunPredict(Client& client, const CommandContext& context);
int RunReload(Client& client, const CommandContext& context);
int RunStatus(Client& client, const CommandContext& context);
int RunRepository(Client& client, const CommandContext& context);
int RunStats(Client& client, const CommandContext& context);

// kAction: an ACTION argument first, then MODEL when the action takes one
// (the command checks which).
enum class ModelArgument { kNone, kOptional, kRequired, kAction };

struct Command {
  const char* name;
  ModelArgument model_argument;
  bool model_admin;  // a ModelAdmin call: --admin_token_file replaces the bearer token
  int (*run)(Client& client, const CommandContext& context);
};

// In the order usage messages list them.
inline constexpr std::array<Command, 9> kCommands = {{
    {"health", ModelArgument::kNone, false, RunHealth},
    {"models", ModelArgument::kNone, false, RunModels},
    {"metadata", ModelArgument::kRequired, false, RunMetadata},
    {"featurize", ModelArgument::kRequired, false, RunFeaturize},
    {"predict", ModelArgument::kRequired, false, RunPredict},
    {"reload", ModelArgument::kNone, true, RunReload},
    {"status", ModelArgument::kOptional, true, RunStatus},
    {"repository", ModelArgument::kAction, true, RunRepository},
    {"stats", ModelArgument::kOptional, false, RunStats},
}};

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_COMMANDS_COMMANDS_H_
