#include "client/cli/flag_parser.h"

#include <map>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace invariant::cli {

std::string DescribeFlags(const std::vector<std::string>& files) {
  std::map<std::string, std::string> lines;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    bool ours = false;
    for (const std::string& file : files) ours = ours || absl::EndsWith(flag->Filename(), file);
    if (!ours) continue;
    const std::string value = flag->DefaultValue();
    lines[std::string(name)] = absl::StrCat("  --", name, "=", value.empty() ? "''" : value,
                                            "\n      ", flag->Help(), "\n");
  }
  std::string out;
  for (const auto& [name, line] : lines) out += line;
  return out;
}

ParsedCommandLine ParseFlags(int argc, char** argv) {
  ParsedCommandLine result;
  auto fail = [&result](std::string message) {
    result.outcome = ParsedCommandLine::Outcome::kError;
    result.error = std::move(message);
    return result;
  };
  bool flags_done = false;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (flags_done || arg.size() < 2 || arg[0] != '-') {
      result.positional.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    absl::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    if (body == "help" || body == "h" || body == "helpfull" || body == "helpshort") {
      result.outcome = ParsedCommandLine::Outcome::kHelp;
      return result;
    }
    absl::string_view name = body;
    absl::string_view value;
    bool has_value = false;
    if (const size_t eq = body.find('='); eq != absl::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && !has_value && absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) {
        std::string error;
        if (!negated->ParseFrom("false", &error)) return fail(error);
        continue;
      }
    }
    if (flag == nullptr || flag->IsRetired()) {
      return fail(absl::StrCat("unknown flag --", name));
    }
    std::string owned_value;
    if (!has_value) {
      if (flag->IsOfType<bool>()) {
        owned_value = "true";
      } else if (i + 1 < argc) {
        owned_value = argv[++i];
      } else {
        return fail(absl::StrCat("flag --", name, " needs a value (--", name, "=VALUE)"));
      }
    } else {
      owned_value = std::string(value);
    }
    std::string error;
    if (!flag->ParseFrom(owned_value, &error)) {
      return fail(absl::StrCat("--", name, ": ", error));
    }
  }
  return result;
}

}  // namespace invariant::cli
