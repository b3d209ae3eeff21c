// NetParams: a table of keys, each with its unit, its range and its field; parse and spec() walk the table.
#include "collplan/sim/common/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string_view>
#include <vector>

#include "collplan/common/units.hpp"

namespace collplan::sim {
namespace {

enum class Unit : uint8_t { time, per_byte, size, count, flag, real, fraction, choice };  // real > 0, fraction >= 0

struct Key {
    const char* name;
    Unit unit;
    std::function<double&(NetParams&)> real_field;     // time, per_byte, real
    std::function<int64_t(const NetParams&)> get_int;  // size, count, flag, choice
    std::function<void(NetParams&, int64_t)> set_int;
    int64_t lo = 0, hi = 0;                            // count/size range; choice: number of names
    std::vector<const char*> names = {};               // choice
};

template <class T>
Key int_key(const char* name, Unit unit, T NetParams::*f, int64_t lo, int64_t hi, std::vector<const char*> names = {}) {
    return Key{name, unit, nullptr, [f](const NetParams& p) { return static_cast<int64_t>(p.*f); },
               [f](NetParams& p, int64_t v) { p.*f = static_cast<T>(v); }, lo, hi, std::move(names)};
}
Key real_key(const char* name, Unit unit, double NetParams::*f) {
    return Key{name, unit, [f](NetParams& p) -> double& { return p.*f; }, nullptr, nullptr};
}

const std::vector<Key>& keys() {
    static const std::vector<Key> k = {
        int_key("ports", Unit::count, &NetParams::ports, 1, 127),
        real_key("L", Unit::time, &NetParams::L_s),
        real_key("o", Unit::time, &NetParams::o_s),
        real_key("g", Unit::time, &NetParams::g_s),
        real_key("G", Unit::per_byte, &NetParams::G_s_per_byte),
        real_key("O", Unit::per_byte, &NetParams::O_s_per_byte),
        int_key("eager", Unit::size, &NetParams::eager_bytes, 0, int64_t(1) << 50),
        int_key("cpus", Unit::count, &NetParams::cpus, 1, 127),
        real_key("link_bw", Unit::per_byte, &NetParams::link_s_per_byte),
        int_key("node_contention", Unit::flag, &NetParams::node_contention, 0, 1),
        int_key("sharing", Unit::choice, &NetParams::sharing, 0, 2, {"maxmin", "rtt"}),
        real_key("crosstraffic", Unit::fraction, &NetParams::crosstraffic),
        int_key("mtu", Unit::size, &NetParams::mtu, 1, int64_t(1) << 30),
        int_key("header", Unit::size, &NetParams::header, 0, int64_t(1) << 20),
        int_key("flit", Unit::size, &NetParams::flit, 1, int64_t(1) << 20),
        real_key("link_latency", Unit::time, &NetParams::link_latency_s),
        real_key("router_latency", Unit::time, &NetParams::router_latency_s),
        int_key("buffer", Unit::size, &NetParams::buffer, 1, int64_t(1) << 30),
        int_key("vcs", Unit::count, &NetParams::vcs, 1, 16),
        int_key("dateline", Unit::flag, &NetParams::dateline, 0, 1),
        int_key("switching", Unit::choice, &NetParams::switching, 0, 2, {"vct", "wormhole"}),
        int_key("voq", Unit::flag, &NetParams::voq, 0, 1),
        real_key("inject_bw", Unit::per_byte, &NetParams::inject_s_per_byte),
        real_key("eject_bw", Unit::per_byte, &NetParams::eject_s_per_byte),
        real_key("overhead", Unit::time, &NetParams::overhead_s),
        int_key("pacing", Unit::choice, &NetParams::pacing, 0, 4, {"none", "gap", "hops", "load"}),
        real_key("pacing_gap", Unit::time, &NetParams::pacing_gap_s),
        real_key("pacing_factor", Unit::real, &NetParams::pacing_factor),
        int_key("arbitration", Unit::choice, &NetParams::arbitration, 0, 3, {"round_robin", "random", "fcfs"}),
    };
    return k;
}

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.12g", v);
    return buf;
}

std::string seconds_text(double v) {
    static constexpr struct {
        double scale;
        const char* name;
    } kUnits[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}};
    if (v == 0) return "0s";
    for (const auto& u : kUnits)
        if (v / u.scale >= 1 || u.scale == 1e-12) return number(v / u.scale) + u.name;
    return number(v) + "s";
}

std::string value_text(const Key& k, const NetParams& p) {
    NetParams& q = const_cast<NetParams&>(p);  // real_field returns a reference; it is only read here
    switch (k.unit) {
        case Unit::time: return seconds_text(k.real_field(q));
        case Unit::per_byte: {
            // As a bandwidth, unless that would overflow or underflow when read back (a subnormal time per byte
            // once became "3.3e+300GB/s", which parses as an infinite bandwidth and was refused): then as a time.
            const double gb_per_s = 1e-9 / k.real_field(q);
            if (gb_per_s > 1e-290 && gb_per_s < 1e290) return number(gb_per_s) + "GB/s";
            return seconds_text(k.real_field(q)) + "/B";
        }
        case Unit::real:
        case Unit::fraction: return number(k.real_field(q));
        case Unit::size: return std::to_string(k.get_int(p)) + "B";
        case Unit::choice: return k.names[static_cast<size_t>(k.get_int(p))];
        default: return std::to_string(k.get_int(p));
    }
}

std::string allowed_keys() {
    std::string out;
    for (const Key& k : keys()) out += (out.empty() ? "" : ", ") + std::string(k.name);
    return out;
}

int64_t parse_int(const Key& k, const std::string& v) {
    if (k.unit == Unit::choice) {
        for (size_t i = 0; i < k.names.size(); ++i)
            if (v == k.names[i]) return static_cast<int64_t>(i);
        std::string allowed;
        for (const char* n : k.names) allowed += (allowed.empty() ? "" : ", ") + std::string(n);
        throw Error("'" + v + "' is invalid (allowed: " + allowed + ")");
    }
    int64_t x = -1;
    if (k.unit == Unit::size) {
        x = static_cast<int64_t>(parse_size_bytes(v));
    } else {
        const bool digits = !v.empty() && v.size() <= 9 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
        x = digits ? std::stoll(v) : -1;
    }
    if (x < k.lo || x > k.hi)
        throw Error("'" + v + "' is invalid (allowed: " + (k.unit == Unit::size ? "a size " : "an integer ") +
                    std::to_string(k.lo) + ".." + std::to_string(k.hi) + ")");
    return x;
}

double parse_real(const Key& k, const std::string& v) {
    double x = 0;
    if (k.unit == Unit::time) x = parse_time_s(v);
    else if (k.unit == Unit::per_byte) x = parse_per_byte_s(v);
    else {
        char* end = nullptr;
        x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !std::isfinite(x)) x = -1;
    }
    const bool positive = k.unit == Unit::per_byte || k.unit == Unit::real;
    if (!(x >= 0) || (positive && !(x > 0)))
        throw Error("'" + v + "' is invalid (allowed: " + (positive ? "> 0" : ">= 0") + ")");
    return x;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

void assign(NetParams& p, const std::string& key, const std::string& value) {
    for (const Key& k : keys()) {
        if (key != k.name) continue;
        try {
            if (k.real_field) k.real_field(p) = parse_real(k, value);
            else k.set_int(p, parse_int(k, value));
        } catch (const Error& e) {
            throw Error("network parameter " + key + ": " + e.what());
        }
        return;
    }
    throw Error("unknown network parameter '" + key + "' (allowed: " + allowed_keys() + ")");
}

}  // namespace

NetParams parse_net_params(const std::string& spec) {
    NetParams p;
    std::vector<std::string> seen;
    std::string_view rest = spec;
    while (!trim(rest).empty()) {
        const size_t comma = rest.find(',');
        const std::string_view item = trim(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos) throw Error("network spec: expected key=value, got '" + std::string(item) + "'");
        const std::string key(trim(item.substr(0, eq))), value(trim(item.substr(eq + 1)));
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
            throw Error("network parameter '" + key + "' given twice (allowed: once)");
        seen.push_back(key);
        assign(p, key, value);
    }
    if (p.switching == Switching::wormhole && p.buffer < p.flit)
        throw Error("network parameter buffer: " + std::to_string(p.buffer) + "B is below one flit (allowed: >= flit)");
    return p;
}

std::string NetParams::spec() const {
    const NetParams defaults;
    std::string out;
    for (const Key& k : keys()) {
        const std::string v = value_text(k, *this);
        if (v == value_text(k, defaults)) continue;
        out += (out.empty() ? "" : ",") + std::string(k.name) + "=" + v;
    }
    return out;
}

}  // namespace collplan::sim
