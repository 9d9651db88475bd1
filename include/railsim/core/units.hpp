#pragma once
// Units: the library works in SI (bytes, seconds, bytes/s, FLOP/s, watts, US dollars) as double.
// Conversions happen once, at the spec boundary, with these helpers.
#include <cstdint>

namespace railsim::units {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;
inline constexpr double kTera = 1e12;

// Link rates are quoted in Gb/s (decimal, bits): 400 Gb/s = 50e9 bytes/s.
constexpr double gbps_to_Bps(double gbps) {
  return gbps * 1e9 / 8.0;
}
constexpr double Bps_to_gbps(double Bps) {
  return Bps * 8.0 / 1e9;
}
constexpr double GBps_to_Bps(double GBps) {
  return GBps * 1e9;
}
constexpr double tflops_to_flops(double tflops) {
  return tflops * 1e12;
}

}  // namespace railsim::units
