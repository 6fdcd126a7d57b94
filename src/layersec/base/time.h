// Strong time types with nanosecond resolution. Protocol cores take a
// TimePoint `now` from their caller and never read a clock themselves; only
// adapters (net, bench, apps) use a Clock.
#pragma once

#include <compare>
#include <cstdint>

namespace layersec {

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration nanoseconds(std::int64_t v) { return Duration(v); }
  static constexpr Duration microseconds(std::int64_t v) { return Duration(v * 1000); }
  static constexpr Duration milliseconds(std::int64_t v) { return Duration(v * 1000000); }
  static constexpr Duration seconds(std::int64_t v) { return Duration(v * 1000000000); }
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration infinite() { return Duration(INT64_MAX); }

  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }
  [[nodiscard]] constexpr double us() const { return static_cast<double>(ns_) / 1e3; }
  [[nodiscard]] constexpr double ms() const { return static_cast<double>(ns_) / 1e6; }
  [[nodiscard]] constexpr double s() const { return static_cast<double>(ns_) / 1e9; }

  constexpr Duration operator+(Duration o) const { return Duration(ns_ + o.ns_); }
  constexpr Duration operator-(Duration o) const { return Duration(ns_ - o.ns_); }
  constexpr Duration operator*(std::int64_t k) const { return Duration(ns_ * k); }
  constexpr Duration operator/(std::int64_t k) const { return Duration(ns_ / k); }
  constexpr Duration& operator+=(Duration o) { ns_ += o.ns_; return *this; }
  constexpr Duration& operator-=(Duration o) { ns_ -= o.ns_; return *this; }
  constexpr auto operator<=>(const Duration&) const = default;

 private:
  constexpr explicit Duration(std::int64_t ns) : ns_(ns) {}
  std::int64_t ns_ = 0;
};

// A point on some monotonic time line (nanoseconds since that line's origin).
class TimePoint {
 public:
  constexpr TimePoint() = default;
  static constexpr TimePoint from_ns(std::int64_t ns) { return TimePoint(ns); }
  static constexpr TimePoint max() { return TimePoint(INT64_MAX); }
  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }

  constexpr TimePoint operator+(Duration d) const { return TimePoint(ns_ + d.ns()); }
  constexpr TimePoint operator-(Duration d) const { return TimePoint(ns_ - d.ns()); }
  constexpr Duration operator-(TimePoint o) const { return Duration::nanoseconds(ns_ - o.ns_); }
  constexpr TimePoint& operator+=(Duration d) { ns_ += d.ns(); return *this; }
  constexpr auto operator<=>(const TimePoint&) const = default;

 private:
  constexpr explicit TimePoint(std::int64_t ns) : ns_(ns) {}
  std::int64_t ns_ = 0;
};

// Source of time for adapters. Protocol cores never hold one.
class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual TimePoint now() const = 0;
};

// CLOCK_MONOTONIC now, in nanoseconds (for timing code paths).
[[nodiscard]] std::int64_t monotonic_now_ns();

// CLOCK_MONOTONIC.
class MonotonicClock final : public Clock {
 public:
  [[nodiscard]] TimePoint now() const override;
};

// CLOCK_REALTIME (the host's synchronised time: NTP/PTP-disciplined, shared
// by every network namespace of a machine). The SecOC freshness clock of real
// nodes until a gPTP-disciplined clock replaces it; may step, so never use it
// for timers.
class RealtimeClock final : public Clock {
 public:
  [[nodiscard]] TimePoint now() const override;
};

// A clock that only moves when told to; for simulations and tests.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = {}) : now_(start) {}
  [[nodiscard]] TimePoint now() const override { return now_; }
  void advance(Duration d) { now_ += d; }
  void set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_;
};

}  // namespace layersec
