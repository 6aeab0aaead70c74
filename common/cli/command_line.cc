// CommandLine: CLI11 with tprobe's conventions (command_line.h): errors in
// tprobe's words, and a --help text laid out as the hand-written ones were.

#include "common/cli/command_line.h"

#include <algorithm>
#include <utility>

namespace tprobe {
namespace {

// Option labels wider than this put their help on the next line.
constexpr size_t kMaxLabel = 19;

// "-o, --output DIR", "--json", "--api-mapping [FILE]".
std::string Label(const CLI::Option& option) {
  std::string label;
  for (const std::string& name : option.get_snames()) {
    label += (label.empty() ? "-" : ", -") + name;
  }
  for (const std::string& name : option.get_lnames()) {
    label += (label.empty() ? "--" : ", --") + name;
  }
  if (option.get_items_expected_max() > 0) {
    label += " " + option.get_type_name();
  }
  return label;
}

// CLI11's message for a command line it refuses, in tprobe's words where
// it is one tprobe names otherwise ("--wait: 1 required N missing" is
// "--wait needs a value").
std::string Reworded(const CLI::ArgumentMismatch& error) {
  const std::string what = error.what();
  std::string name = what.substr(0, what.find_first_of(": "));
  // A flag given a value is named without its dashes.
  if (!name.starts_with('-')) name = "--" + name;
  if (what.ends_with(" missing")) return name + " needs a value";
  if (what.find("At Most") != std::string::npos) return name + " given twice";
  if (what.ends_with("flag override")) return name + " takes no value";
  return what;
}

}  // namespace

CommandLine::CommandLine(std::string usage, std::string footer)
    : usage_(std::move(usage)), footer_(std::move(footer)) {
  app_.set_help_flag("-h,--help", "show this help");
  app_.allow_extras();
  app_.add_option("operands", operands_);
}

CLI::Option* CommandLine::AddValue(
    const std::string& names, const std::string& value_name,
    const std::string& help, std::function<Status(const std::string&)> set) {
  return app_
      .add_option_function<std::string>(
          names,
          [set = std::move(set)](const std::string& value) {
            if (Status s = set(value); !s.ok()) {
              throw CLI::ValidationError(s.message());
            }
          },
          help)
      ->type_name(value_name);
}

CLI::Option* CommandLine::AddValue(const std::string& names,
                                   const std::string& value_name,
                                   const std::string& help,
                                   std::optional<std::string>* into) {
  return AddValue(names, value_name, help, [into](const std::string& value) {
    *into = value;
    return Status::Ok();
  });
}

CLI::Option* CommandLine::AddFlag(const std::string& names,
                                  const std::string& help, bool* into) {
  return app_.add_flag(names, *into, help)->disable_flag_override();
}

Result<bool> CommandLine::Parse(std::span<const std::string_view> args) {
  // CLI11 takes the words last first.
  std::vector<std::string> words(args.rbegin(), args.rend());
  try {
    app_.parse(words);
  } catch (const CLI::CallForHelp&) {
    return true;
  } catch (const CLI::ArgumentMismatch& e) {
    return Status::Error(Reworded(e));
  } catch (const CLI::ParseError& e) {
    return Status::Error(e.what());
  }
  const std::vector<std::string> extras = app_.remaining();
  if (!extras.empty()) {
    const std::string& word = extras.front();
    return Status::Error("unknown option '" + word.substr(0, word.find('=')) +
                         "'");
  }
  return false;
}

std::string CommandLine::Help() const {
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const CLI::Option* option : app_.get_options()) {
    if (option->get_positional()) continue;
    rows.emplace_back(Label(*option), option->get_description());
    if (rows.back().first.size() <= kMaxLabel) {
      width = std::max(width, rows.back().first.size());
    }
  }
  // The help flag is declared first; it is listed last.
  std::rotate(rows.begin(), rows.begin() + 1, rows.end());
  const std::string indent(width + 4, ' ');
  std::string text = usage_ + "\nOptions:\n";
  for (const auto& [label, help] : rows) {
    text += "  " + label;
    if (label.size() > width) {
      text += "\n" + indent;
    } else {
      text.append(width - label.size() + 2, ' ');
    }
    for (char c : help) {
      text += c;
      if (c == '\n') text += indent;
    }
    text += '\n';
  }
  return text + "\n" + footer_;
}

}  // namespace tprobe
