#include "tools/common/reporter.h"

#include <utility>

namespace tprobe::tools {
namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

}  // namespace

Reporter::Reporter(std::FILE* out, bool show_progress, std::string prefix)
    : out_(out),
      show_progress_(out != nullptr && show_progress),
      prefix_(std::move(prefix)) {}

void Reporter::Log(std::string_view line) {
  if (out_ == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  ClearLocked();
  std::fprintf(out_, "%s%.*s\n", prefix_.c_str(), static_cast<int>(line.size()),
               line.data());
  if (!phase_.empty()) DrawLocked(true);
  std::fflush(out_);
}

void Reporter::StartPhase(std::string_view what, size_t total) {
  std::lock_guard<std::mutex> lock(mu_);
  phase_ = std::string(what);
  total_ = total;
  done_ = 0;
  DrawLocked(true);
}

void Reporter::Advance(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  done_ += n;
  DrawLocked(false);
}

void Reporter::FinishPhase() {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = total_;
  DrawLocked(true);
  if (drawn_) std::fputc('\n', out_);
  drawn_ = false;
  phase_.clear();
  if (out_ != nullptr) std::fflush(out_);
}

void Reporter::DrawLocked(bool force) {
  if (!show_progress_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  const int percent =
      total_ == 0 ? 100 : static_cast<int>(done_ * 100 / total_);
  std::fprintf(out_, "\r\033[K%s%s: %zu/%zu (%d%%)", prefix_.c_str(),
               phase_.c_str(), done_, total_, percent);
  std::fflush(out_);
  drawn_ = true;
}

void Reporter::ClearLocked() {
  if (!drawn_) return;
  std::fputs("\r\033[K", out_);
  drawn_ = false;
}

}  // namespace tprobe::tools
