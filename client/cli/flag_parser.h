// flag_parser.h: command-line parsing for the invariant-client and
// invariant-loadgen tools, on top of Abseil flags (declared with ABSL_FLAG).
//
// absl::ParseCommandLine exits with status 1 on a bad flag; these tools
// promise exit code 2 for every usage error, so they parse through the flags
// reflection API instead and report errors to the caller. Accepted forms:
//   --name=value   -name=value   --name value (non-boolean flags)
//   --name / --noname (boolean flags)      --  (ends the flags)
// Anything not starting with '-' (and "-" alone, meaning stdin) is a
// positional argument, kept in order. Flags may come before, between or after
// positional arguments.
#ifndef INVARIANT_CLIENT_CLI_FLAG_PARSER_H_
#define INVARIANT_CLIENT_CLI_FLAG_PARSER_H_

#include <string>
#include <vector>

namespace invariant::cli {

struct ParsedCommandLine {
  enum class Outcome { kOk, kHelp, kError };
  Outcome outcome = Outcome::kOk;
  std::vector<std::string> positional;  // argv[0] excluded
  std::string error;                    // kError: names the flag and the reason
};

// Parses argv[1..argc) into the registered Abseil flags. "--help", "-h" and
// "--helpfull" give kHelp; an unknown flag, a missing value or a value the
// flag's type rejects gives kError with a message such as
// "unknown flag --bogus" or "--timeout: illegal value 'abc' ...".
ParsedCommandLine ParseFlags(int argc, char** argv);

// "--name=DEFAULT  help" lines of every registered flag defined in a file
// whose path ends with one of `files` (e.g. "client/cli/main.cc"), sorted by
// name: what --help prints after the tool's usage summary.
std::string DescribeFlags(const std::vector<std::string>& files);

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_FLAG_PARSER_H_
