#include "common/control/socket_path.h"

#include <unistd.h>

#include <cstdlib>

namespace tprobe::control {

std::string DefaultSocketPath() {
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) {
    return std::string(xdg) + "/tprobe/tprobed.sock";
  }
  return "/tmp/tprobe-" + std::to_string(::getuid()) + "/tprobed.sock";
}

std::string ResolveSocketPath(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("TPROBE_SOCKET"); env && *env) return env;
  return DefaultSocketPath();
}

}  // namespace tprobe::control
