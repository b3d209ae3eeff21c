// Units: sizes ("4KiB", "16B", "1MB"), times ("1.5us", "20ns"), per-byte times ("1ns/B") and
// bandwidths ("4GB/s", "40Gbit/s"). Everything parses to SI base units (bytes, seconds, seconds per byte).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace collplan {

// "4KiB" -> 4096, "1MB" -> 1000000, "16" or "16B" -> 16. Refuses negatives, fractions of a byte, junk.
uint64_t parse_size_bytes(const std::string& text);
// "1.5us" -> 1.5e-6; units s, ms, us, ns, ps. A bare number is refused (the unit is not obvious).
double parse_time_s(const std::string& text);
// Seconds per byte from "1ns/B" (time per byte) or "4GB/s", "3.2GiB/s", "40Gbit/s" (bandwidth).
double parse_per_byte_s(const std::string& text);
// "16B..1MiB" -> powers of two from 16 B to 1 MiB; "8,1KiB,64KiB" -> that list; "1B..400B:50B" -> linear step.
std::vector<uint64_t> parse_size_list(const std::string& text);

std::string format_bytes(double bytes);   // 4096 -> "4KiB", 1000 -> "1000B"
std::string format_time(double seconds);  // 1.5e-6 -> "1.50us"
// 3 significant digits in the largest binary unit that fits, for estimates: 3159562752 -> "2.94GiB",
// 67108864 -> "64.0MiB", 512 -> "512B".
std::string approx_bytes(double bytes);

}  // namespace collplan
