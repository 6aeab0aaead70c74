#ifndef TPROBE_TOOLS_CLI_ARGS_H_
#define TPROBE_TOOLS_CLI_ARGS_H_

// Command-line parsing shared by the subcommands: GNU-style long options.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tprobe::cli {

struct OptionSpec {
  std::string_view name;  // without "--"
  bool takes_value = false;
  // For a flag whose value is optional: "--name=value" always gives one,
  // and "--name WORD" takes WORD as its value when this returns true for
  // it (else WORD is left to be parsed, and the flag maps to "").
  bool (*takes_next)(std::string_view word) = nullptr;
};

struct ParsedArgs {
  // Options given, by name; a flag maps to "".
  std::map<std::string, std::string, std::less<>> options;
  std::vector<std::string> positionals;

  bool Has(std::string_view name) const { return options.contains(name); }
  // The option's value, or nullopt when it was not given.
  std::optional<std::string> Get(std::string_view name) const;
};

// Parses `args` against `specs`: "--name value" and "--name=value" for an
// option that takes a value, "--name" for a flag (with an optional value as
// its spec's takes_next says), "-h" as "--help" (which
// is always accepted), and everything else positional; "--" ends options.
//
// Returns an error naming the argument for an unknown option, an option
// given twice, a missing value, or a value given to a flag.
Result<ParsedArgs> ParseArgs(std::span<const std::string_view> args,
                             std::span<const OptionSpec> specs);

// Parses a non-negative decimal integer no greater than `max`; the error
// says "<what> must be …".
Result<int64_t> ParseCount(std::string_view text, std::string_view what,
                           int64_t max);

}  // namespace tprobe::cli

#endif  // TPROBE_TOOLS_CLI_ARGS_H_
