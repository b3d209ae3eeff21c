// Units: parsing and printing of sizes, times, per-byte times and bandwidths (see units.hpp).
// Units are case-sensitive: K/M/G prefixes are powers of 1000, Ki/Mi/Gi powers of 1024.
#include "collplan/common/units.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

#include "collplan/common/error.hpp"

namespace collplan {
namespace {

constexpr const char* kSizeAllowed = "a non-negative integer with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
constexpr const char* kTimeAllowed = "a non-negative number with a unit s, ms, us, ns, ps";
constexpr const char* kPerByteAllowed =
    "a time per byte such as 1ns/B, or a bandwidth such as 4GB/s, 3.2GiB/s, 40Gbit/s (units B, KB, MB, GB, TB, "
    "KiB, MiB, GiB, TiB, bit, Kbit, Mbit, Gbit, Tbit per s)";
constexpr const char* kListAllowed =
    "a size, a comma list such as 8,1KiB,64KiB, a doubling range such as 16B..1MiB, or a linear range such as "
    "0..400B:50B; ranges need lo <= hi, a doubling range lo > 0, a linear range a step > 0";
constexpr size_t kMaxListLength = 1000000;

struct UnitScale {
    std::string_view name;
    double scale;
};

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The value is echoed up to 40 bytes (as the CLI's option errors, commands/_common.py): a 300-digit size is not
// repeated whole. The cut never splits a UTF-8 character (a message that is not UTF-8 cannot reach Python).
[[noreturn]] void fail(const char* what, std::string_view text, const char* allowed) {
    std::string shown(text);
    if (text.size() > 40) {
        size_t cut = 37;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
        shown = std::string(text.substr(0, cut)) + "...";
    }
    throw Error(std::string(what) + " '" + shown + "' is invalid (allowed: " + allowed + ")");
}

// Length of the leading decimal number (digits, optional fraction, optional exponent); 0 when there is none.
size_t number_length(std::string_view s, bool allow_fraction) {
    size_t i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    size_t digits = i;
    if (allow_fraction && i < s.size() && s[i] == '.') {
        size_t j = i + 1;
        while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
        digits += j - i - 1;
        i = j;
    }
    if (digits == 0) return 0;
    if (allow_fraction && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
        size_t k = j;
        while (k < s.size() && s[k] >= '0' && s[k] <= '9') ++k;
        if (k > j) i = k;  // an 'e' without digits belongs to the unit (and then fails as an unknown unit)
    }
    return i;
}

// Splits "1.5us" into a non-negative finite number and the unit text after it (spaces between are allowed).
bool split_number(std::string_view s, bool allow_fraction, double& value, std::string_view& unit) {
    s = trim(s);
    size_t len = number_length(s, allow_fraction);
    if (len == 0) return false;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + len, value);
    if (ec != std::errc() || ptr != s.data() + len || !std::isfinite(value)) return false;
    unit = trim(s.substr(len));
    return true;
}

const UnitScale* find_unit(std::string_view unit, const UnitScale* table, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (table[i].name == unit) return &table[i];
    return nullptr;
}

constexpr UnitScale kTimeUnits[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ns", 1e-9},
                                    {"ps", 1e-12}};
constexpr UnitScale kBandwidthUnits[] = {
    {"B", 1},          {"KB", 1e3},          {"MB", 1e6},           {"GB", 1e9},            {"TB", 1e12},
    {"KiB", 1024.0},   {"MiB", 1048576.0},   {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"bit", 0.125},    {"Kbit", 125.0},      {"Mbit", 125e3},       {"Gbit", 125e6},        {"Tbit", 125e9}};

uint64_t size_multiplier(std::string_view unit) {
    if (unit.empty() || unit == "B") return 1;
    if (unit == "KB") return 1000ULL;
    if (unit == "MB") return 1000000ULL;
    if (unit == "GB") return 1000000000ULL;
    if (unit == "TB") return 1000000000000ULL;
    if (unit == "KiB") return 1ULL << 10;
    if (unit == "MiB") return 1ULL << 20;
    if (unit == "GiB") return 1ULL << 30;
    if (unit == "TiB") return 1ULL << 40;
    return 0;
}

uint64_t parse_size_view(std::string_view text) {
    std::string_view s = trim(text);
    size_t len = number_length(s, false);
    if (len == 0) fail("size", text, kSizeAllowed);
    uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + len, value);
    if (ec != std::errc() || ptr != s.data() + len) fail("size", text, kSizeAllowed);
    uint64_t mult = size_multiplier(trim(s.substr(len)));
    if (mult == 0 || value > std::numeric_limits<uint64_t>::max() / mult) fail("size", text, kSizeAllowed);
    return value * mult;
}

void append_doubling(std::vector<uint64_t>& out, uint64_t lo, uint64_t hi, std::string_view text) {
    if (lo == 0) fail("size list", text, kListAllowed);
    for (uint64_t v = lo;; v *= 2) {
        out.push_back(v);
        if (v > hi / 2) break;
    }
}

void append_linear(std::vector<uint64_t>& out, uint64_t lo, uint64_t hi, uint64_t step, std::string_view text) {
    if (step == 0) fail("size list", text, kListAllowed);
    if ((hi - lo) / step >= kMaxListLength) {
        throw Error("size list '" + std::string(text) + "' has more than " + std::to_string(kMaxListLength) +
                    " sizes (allowed: at most that many; use a larger step)");
    }
    for (uint64_t v = lo;; v += step) {
        out.push_back(v);
        if (hi - v < step) break;
    }
}

// One comma-separated item: a size, "lo..hi" (doubling) or "lo..hi:step" (linear).
void append_item(std::vector<uint64_t>& out, std::string_view item, std::string_view text) {
    item = trim(item);
    if (item.empty()) fail("size list", text, kListAllowed);
    size_t dots = item.find("..");
    if (dots == std::string_view::npos) {
        out.push_back(parse_size_view(item));
        return;
    }
    std::string_view rest = item.substr(dots + 2);
    size_t colon = rest.find(':');
    uint64_t lo = parse_size_view(item.substr(0, dots));
    uint64_t hi = parse_size_view(rest.substr(0, colon));
    if (lo > hi) fail("size list", text, kListAllowed);
    if (colon == std::string_view::npos) {
        append_doubling(out, lo, hi, text);
    } else {
        append_linear(out, lo, hi, parse_size_view(rest.substr(colon + 1)), text);
    }
}

// Sized to fit: %f of a large double has up to 309 digits (a fixed buffer once cut off the digits and the unit).
std::string fixed_string(double v, int decimals, const char* unit) {
    const int n = std::snprintf(nullptr, 0, "%.*f%s", decimals, v, unit);
    std::string out(static_cast<size_t>(n), '\0');
    std::snprintf(out.data(), out.size() + 1, "%.*f%s", decimals, v, unit);
    return out;
}

// Digits after the point so that |v| (in the chosen unit) shows 3 significant digits.
int decimals_for(double v) {
    double mag = std::fabs(v);
    if (mag >= 100) return 0;
    if (mag >= 10) return 1;
    if (mag >= 1) return 2;
    int lead = static_cast<int>(std::floor(std::log10(mag)));  // negative for |v| < 1
    return std::min(2 - lead, 15);
}

double round_significant(double mag, int digits) {
    double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(mag))));
    if (!std::isfinite(scale)) return mag;  // a subnormal mag: 10^(digits+~310) overflows (inf/inf was NaN)
    return std::round(mag * scale) / scale;
}

}  // namespace

uint64_t parse_size_bytes(const std::string& text) { return parse_size_view(text); }

double parse_time_s(const std::string& text) {
    double value = 0;
    std::string_view unit;
    if (!split_number(text, true, value, unit)) fail("time", text, kTimeAllowed);
    const UnitScale* u = find_unit(unit, kTimeUnits, std::size(kTimeUnits));
    if (u == nullptr) fail("time", text, kTimeAllowed);
    return value * u->scale;
}

double parse_per_byte_s(const std::string& text) {
    std::string_view s = trim(text);
    if (s.size() > 2 && s.substr(s.size() - 2) == "/B") {
        double value = 0;
        std::string_view unit;
        if (!split_number(s.substr(0, s.size() - 2), true, value, unit)) fail("per-byte time", text, kPerByteAllowed);
        const UnitScale* u = find_unit(unit, kTimeUnits, std::size(kTimeUnits));
        if (u == nullptr) fail("per-byte time", text, kPerByteAllowed);
        return value * u->scale;
    }
    if (s.size() > 2 && s.substr(s.size() - 2) == "/s") {
        double value = 0;
        std::string_view unit;
        if (!split_number(s.substr(0, s.size() - 2), true, value, unit)) fail("bandwidth", text, kPerByteAllowed);
        const UnitScale* u = find_unit(unit, kBandwidthUnits, std::size(kBandwidthUnits));
        double bytes_per_s = u == nullptr ? 0 : value * u->scale;
        // A subnormal bandwidth (".21e-308B/s") is > 0, but its inverse is infinite.
        if (!(bytes_per_s > 0) || !std::isfinite(bytes_per_s) || !std::isfinite(1.0 / bytes_per_s))
            fail("bandwidth", text, kPerByteAllowed);
        return 1.0 / bytes_per_s;
    }
    fail("per-byte time", text, kPerByteAllowed);
}

std::vector<uint64_t> parse_size_list(const std::string& text) {
    std::vector<uint64_t> out;
    std::string_view rest = text;
    if (trim(rest).empty()) fail("size list", text, kListAllowed);
    while (true) {
        size_t comma = rest.find(',');
        append_item(out, rest.substr(0, comma), text);
        if (out.size() > kMaxListLength) {
            throw Error("size list '" + text + "' has more than " + std::to_string(kMaxListLength) +
                        " sizes (allowed: at most that many)");
        }
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    return out;
}

std::string format_bytes(double bytes) {
    if (!std::isfinite(bytes)) return std::to_string(bytes) + "B";
    static constexpr struct {
        double scale;
        const char* name;
    } kUnits[] = {{1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}};
    if (bytes != 0 && std::fabs(bytes) < 9.0e15 && bytes == std::floor(bytes)) {
        for (const auto& u : kUnits) {
            double q = bytes / u.scale;
            if (q == std::floor(q)) return fixed_string(q, 0, u.name);
        }
    }
    if (bytes == std::floor(bytes)) return fixed_string(bytes, 0, "B");
    return fixed_string(bytes, decimals_for(round_significant(std::fabs(bytes), 3)), "B");
}

std::string approx_bytes(double b) {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (b >= 1024 && u < 6) b /= 1024, ++u;
    return fixed_string(b, b >= 100 || u == 0 ? 0 : b >= 10 ? 1 : 2, kUnits[u]);
}

std::string format_time(double seconds) {
    if (!std::isfinite(seconds)) return std::to_string(seconds) + "s";
    if (seconds == 0) return "0s";
    static constexpr struct {
        double scale;
        const char* name;
    } kUnits[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
    // Round to 3 significant digits first, so that 999.96us prints as "1.00ms" and not "1000us".
    double mag = round_significant(std::fabs(seconds), 3);
    const auto* unit = &kUnits[std::size(kUnits) - 1];
    for (const auto& u : kUnits) {
        if (mag >= u.scale * (1 - 1e-12)) {
            unit = &u;
            break;
        }
    }
    double v = round_significant(std::fabs(seconds) / unit->scale, 3);
    return fixed_string(std::copysign(v, seconds), decimals_for(v), unit->name);
}

}  // namespace collplan
