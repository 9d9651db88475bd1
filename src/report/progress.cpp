#include "railsim/report/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace railsim::report {

ProgressBar::ProgressBar(std::FILE* out, std::string label, std::int64_t total, double delay_s)
    : out_(out),
      label_(std::move(label)),
      total_(std::max<std::int64_t>(total, 1)),
      delay_s_(delay_s),
      enabled_(out != nullptr && ::isatty(::fileno(out)) == 1),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressBar::~ProgressBar() {
  finish();
}

std::string ProgressBar::line(const std::string& label, std::int64_t done, std::int64_t total,
                              double elapsed_s) {
  constexpr int kWidth = 30;
  const double f = std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0);
  const int full = static_cast<int>(std::floor(f * kWidth));
  std::string bar(static_cast<std::size_t>(full), '#');
  bar.resize(kWidth, '.');
  std::string left = "";
  if (done > 0 && done < total) {
    const double s = elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
    left = s >= 60 ? fmt::format(", {:.0f} min left", std::ceil(s / 60))
                   : fmt::format(", {:.0f} s left", std::ceil(s));
  }
  return fmt::format("{} [{}] {}/{} {:.0f}%{}", label, bar, done, total, 100 * f, left);
}

void ProgressBar::step() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < delay_s_) return;
  if (drawn_ && done_ < total_ && std::chrono::duration<double>(now - last_).count() < 0.1) return;
  last_ = now;
  drawn_ = true;
  fmt::print(out_, "\r{}\x1b[K", line(label_, done_, total_, elapsed));
  std::fflush(out_);
}

void ProgressBar::update(std::int64_t done, std::int64_t total) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = done;
  total_ = std::max<std::int64_t>(total, 1);
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < delay_s_) return;
  if (drawn_ && std::chrono::duration<double>(now - last_).count() < 0.1) return;
  last_ = now;
  drawn_ = true;
  fmt::print(out_, "\r{}\x1b[K", line(label_, done_, total_, elapsed));
  std::fflush(out_);
}

void ProgressBar::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!drawn_) return;
  fmt::print(out_, "\r\x1b[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace railsim::report
