#include "daemon/process/logger.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace tprobe::daemon {

Logger MakeLogger(spdlog::level::level_enum level) {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("tprobed", std::move(sink));
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e (%P) [%n] [%l] %v");
  logger->set_level(level);
  logger->flush_on(spdlog::level::trace);
  return logger;
}

}  // namespace tprobe::daemon
