#ifndef TPROBE_COMMON_CLI_COMMAND_LINE_H_
#define TPROBE_COMMON_CLI_COMMAND_LINE_H_

// A command line declared once, with CLI11: tprobed's flags and each `tprobe`
// subcommand's options. Every option is declared on app() with the name of
// its value and its help text; parsing and the --help text (Help()) both
// come from that declaration. A value an option refuses is refused in its
// declaration too (AddValue), with a message that names the option.

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tprobe {

class CommandLine {
 public:
  // `usage`: what --help prints before the options (the Usage: lines and
  // what the command does); `footer`: what it prints after them (the exit
  // statuses). Both end with a newline.
  CommandLine(std::string usage, std::string footer);

  CLI::App& app() { return app_; }

  // Declares an option NAMES ("--rank" or "-o,--output") that takes a
  // value, shown as `value_name` in the help. `set` gets the value and
  // returns an error (the parse error's message) for one it refuses.
  CLI::Option* AddValue(const std::string& names, const std::string& value_name,
                        const std::string& help,
                        std::function<Status(const std::string&)> set);
  // Declares an option NAMES whose value is kept in *into as given.
  CLI::Option* AddValue(const std::string& names, const std::string& value_name,
                        const std::string& help,
                        std::optional<std::string>* into);
  // Declares a flag NAMES that sets *into.
  CLI::Option* AddFlag(const std::string& names, const std::string& help,
                       bool* into);

  // Parses `args` (the program's or subcommand's name excluded). Returns
  // true when --help (-h) was given, else false once every option is set;
  // or an error that names the argument: an unknown option, an option
  // given twice, a missing value, a value given to a flag, or a value an
  // option refuses.
  Result<bool> Parse(std::span<const std::string_view> args);

  // The words that are not options, in order; "--" ends the options.
  const std::vector<std::string>& operands() const { return operands_; }

  // The --help text: the usage, "Options:" with each option's value name
  // and help, and the footer.
  std::string Help() const;

 private:
  CLI::App app_;
  std::string usage_;
  std::string footer_;
  std::vector<std::string> operands_;
};

}  // namespace tprobe

#endif  // TPROBE_COMMON_CLI_COMMAND_LINE_H_
