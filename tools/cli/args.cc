#include "tools/cli/args.h"

#include <charconv>

namespace tprobe::cli {

std::optional<std::string> ParsedArgs::Get(std::string_view name) const {
  auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

Result<ParsedArgs> ParseArgs(std::span<const std::string_view> args,
                             std::span<const OptionSpec> specs) {
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      for (++i; i < args.size(); ++i) parsed.positionals.emplace_back(args[i]);
      break;
    }
    if (arg == "-h") arg = "--help";
    if (!arg.starts_with("--")) {
      if (arg.size() > 1 && arg[0] == '-') {
        return Status::Error("unknown option '" + std::string(arg) + "'");
      }
      parsed.positionals.emplace_back(arg);
      continue;
    }
    std::string_view name = arg.substr(2);
    std::optional<std::string_view> value;
    if (const size_t eq = name.find('='); eq != std::string_view::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const OptionSpec* spec = nullptr;
    static constexpr OptionSpec kHelp{"help", false};
    if (name == kHelp.name) spec = &kHelp;
    for (const OptionSpec& s : specs) {
      if (s.name == name) spec = &s;
    }
    const std::string dashed = "--" + std::string(name);
    if (spec == nullptr)
      return Status::Error("unknown option '" + dashed + "'");
    if (parsed.Has(name)) return Status::Error(dashed + " given twice");
    if (spec->takes_value && !value) {
      if (i + 1 >= args.size()) return Status::Error(dashed + " needs a value");
      value = args[++i];
    }
    if (!spec->takes_value && !value && spec->takes_next != nullptr &&
        i + 1 < args.size() && spec->takes_next(args[i + 1])) {
      value = args[++i];
    }
    if (!spec->takes_value && value && spec->takes_next == nullptr) {
      return Status::Error(dashed + " takes no value");
    }
    parsed.options.emplace(std::string(name), std::string(value.value_or("")));
  }
  return parsed;
}

Result<int64_t> ParseCount(std::string_view text, std::string_view what,
                           int64_t max) {
  int64_t v = -1;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() ||
      v < 0 || v > max) {
    return Status::Error(
        std::string(what) + " must be a whole number from 0 to " +
        std::to_string(max) + ", not '" + std::string(text) + "'");
  }
  return v;
}

}  // namespace tprobe::cli
