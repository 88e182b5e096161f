// row_input.h: the input rows of featurize and predict, checked against the
// model before any row is sent.
//
// PrepareRows takes the metadata of context.model (already fetched), then the
// rows: with
// RowSourceFlags::random_rows > 0 that many seeded standard-normal rows of
// the model's input_dim (the same rows on every platform), else the rows of
// RowSourceFlags::input read by ReadRows (client/cli/rows.h; stdin must not be
// a terminal). An --input naming WAV files or a folder is refused with a
// message saying the model takes rows, not clips (an audio model's input is
// clip_input.h's). The rows fit the model when, with a header and training
// columns in the model, the header names those columns in that order, and
// each row has input_dim values.
//
// Errors are printed on stderr ("invariant-client: ..."); the result is the
// exit code: kExitOk, or kExitUsage for a bad row flag (with a pointer to --help), input that
// cannot be read (FILE:LINE: reason), or rows that do not fit (the message names the missing, extra
// or reordered columns, or the widths).
//
// Thread-safety: may read stdin; one call at a time.
#ifndef INVARIANT_CLIENT_CLI_COMMANDS_ROW_INPUT_H_
#define INVARIANT_CLIENT_CLI_COMMANDS_ROW_INPUT_H_

#include "client/cli/commands/commands.h"
#include "client/cli/rows.h"
#include "client/client.h"

namespace invariant::cli {

int PrepareRows(const CommandContext& context, const v1::GetModelMetadataResponse& metadata,
                RowTable* rows);

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_COMMANDS_ROW_INPUT_H_
