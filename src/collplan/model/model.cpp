// Analytic communication models and their spec parser (see model.hpp and docs/models.md).
//
// A spec is "kind:key=value,...". Each kind declares its own keys (in canonical order); the common keys gamma,
// rho, ports, duplex, barrier and barrier_per_dim (named q for the circuit model) follow. spec() prints the
// required keys always and the optional ones when they differ from their defaults, so that
// parse_model(m.spec())->spec() == m.spec().
#include "collplan/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string_view>
#include <vector>

#include "collplan/common/units.hpp"

namespace collplan {
namespace {

enum class Unit : uint8_t { time, per_byte, size, count, flag, ranks };

// A model-specific key; its value lives in AnalyticModel::values at the key's position.
struct KeyDef {
    const char* name;
    Unit unit;
    bool required;
};

// A common key: a field of Model.
enum class Field : uint8_t {
    gamma, rho, ports, duplex, barrier, barrier_per_dim, host_beta, host_ranks, eager, rndv, reduce_call, copy_call
};
struct CommonKey {
    const char* name;
    Unit unit;
    Field field;
    double default_value;
};

constexpr int kMaxPorts = 128;  // Op::port is an int8_t

double get_field(const Model& m, Field f) {
    switch (f) {
        case Field::gamma: return m.gamma;
        case Field::rho: return m.rho;
        case Field::ports: return m.ports;
        case Field::duplex: return m.duplex ? 1 : 0;
        case Field::barrier: return m.barrier_fixed_s;
        case Field::barrier_per_dim: return m.barrier_per_dim_s;
        case Field::host_beta: return m.host_beta;
        case Field::host_ranks: return m.host_ranks;
        case Field::eager: return m.eager_bytes;
        case Field::rndv: return m.rndv_s;
        case Field::reduce_call: return m.reduce_call_s;
        case Field::copy_call: return m.copy_call_s;
    }
    return 0;
}

void set_field(Model& m, Field f, double v) {
    switch (f) {
        case Field::gamma: m.gamma = v; break;
        case Field::rho: m.rho = v; break;
        case Field::ports: m.ports = static_cast<int>(v); break;
        case Field::duplex: m.duplex = v != 0; break;
        case Field::barrier: m.barrier_fixed_s = v; break;
        case Field::barrier_per_dim: m.barrier_per_dim_s = v; break;
        case Field::host_beta: m.host_beta = v; break;
        case Field::host_ranks: m.host_ranks = static_cast<int>(v); break;
        case Field::eager: m.eager_bytes = v; break;
        case Field::rndv: m.rndv_s = v; break;
        case Field::reduce_call: m.reduce_call_s = v; break;
        case Field::copy_call: m.copy_call_s = v; break;
    }
}

std::vector<CommonKey> common_keys(const std::string& kind) {
    return {{"gamma", Unit::per_byte, Field::gamma, 0},
            {"rho", Unit::per_byte, Field::rho, 0},
            {"ports", Unit::count, Field::ports, 1},
            {"duplex", Unit::flag, Field::duplex, 1},
            {"barrier", Unit::time, Field::barrier, -1},
            {kind == "circuit" ? "q" : "barrier_per_dim", Unit::time, Field::barrier_per_dim, -1},
            {"host_beta", Unit::per_byte, Field::host_beta, 0},
            {"host_ranks", Unit::ranks, Field::host_ranks, 0},
            {"eager", Unit::size, Field::eager, 0},
            {"rndv", Unit::time, Field::rndv, 0},
            {"reduce_call", Unit::time, Field::reduce_call, 0},
            {"copy_call", Unit::time, Field::copy_call, 0}};
}

// Shared part of the four models: the kind, its own keys and their values, and spec().
class AnalyticModel : public Model {
public:
    AnalyticModel(std::string kind, std::vector<KeyDef> keys)
        : kind_(std::move(kind)), keys_(std::move(keys)), values(keys_.size(), 0.0) {}
    std::string kind() const override { return kind_; }
    std::string spec() const override;
    const std::vector<KeyDef>& keys() const { return keys_; }

private:
    const std::string kind_;
    const std::vector<KeyDef> keys_;

public:
    std::vector<double> values;  // in keys() order (declared after keys_, which sizes it)
};

class Hockney final : public AnalyticModel {
public:
    Hockney() : AnalyticModel("hockney", {{"alpha", Unit::time, true}, {"beta", Unit::per_byte, true}}) {}
    MessageTime message(double bytes, int) const override {
        const double t = values[0] + bytes * values[1];
        return {t, t, t, t};
    }
    double startup_s() const override { return values[0]; }
    double per_byte_s() const override { return values[1]; }
};

class Wormhole final : public AnalyticModel {
public:
    Wormhole()
        : AnalyticModel("wormhole", {{"startup", Unit::time, true},
                                     {"flit", Unit::size, true},
                                     {"flit_time", Unit::time, true},
                                     {"hop_time", Unit::time, true}}) {}
    MessageTime message(double bytes, int hops) const override {
        const double t = values[0] + std::ceil(bytes / values[1]) * values[2] + hops * values[3];
        return {t, t, t, t};
    }
    double startup_s() const override { return values[0]; }
    double per_byte_s() const override { return values[2] / values[1]; }
    bool uses_hops() const override { return true; }
};

class Circuit final : public AnalyticModel {
public:
    Circuit()
        : AnalyticModel("circuit", {{"lambda", Unit::time, true},
                                    {"tau", Unit::per_byte, true},
                                    {"delta", Unit::time, true}}) {}
    MessageTime message(double bytes, int) const override {
        const double t = values[0] + bytes * values[1] + values[2];  // delta is distance independent
        return {t, t, t, t};
    }
    double startup_s() const override { return values[0]; }
    double per_byte_s() const override { return values[1]; }
};

class LogGP final : public AnalyticModel {
public:
    LogGP()
        : AnalyticModel("loggp", {{"L", Unit::time, true},
                                  {"o", Unit::time, true},
                                  {"g", Unit::time, true},
                                  {"G", Unit::per_byte, true},
                                  {"O", Unit::per_byte, false},
                                  {"cpu", Unit::flag, false}}) {}
    MessageTime message(double bytes, int) const override {
        const double L = values[0], o = values[1], g = values[2], G = values[3], O = values[4];
        const double body = std::max(0.0, bytes - 1) * G;  // (m-1) G; a 0-byte message has no body
        const double overhead = o + bytes * O;              // o at each end, plus O per byte (LogGOPS)
        const double gap = std::max(g, body);
        // cpu=1: the CPU is busy for o (+ m O) per message at each end (Culler et al. 1993; LogGOPSim's nexto)
        const double cpu = values[5] != 0 ? overhead : 0;
        return {overhead + body, overhead + body + L + overhead, gap, gap, cpu, cpu};
    }
    double startup_s() const override { return values[0] + 2 * values[1]; }
    double per_byte_s() const override { return values[3]; }
};

// ---- formatting -------------------------------------------------------------------------------------------

std::string format_number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.12g", v);
    return buf;
}

// Seconds in the largest of s, ms, us, ns, ps that keeps the number >= 1 (ps for anything smaller).
std::string format_seconds(double v) {
    if (v == 0) return "0s";
    static constexpr struct {
        double scale;
        const char* name;
    } kUnits[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}};
    for (const auto& u : kUnits)
        if (v / u.scale >= 1 || u.scale == 1e-12) return format_number(v / u.scale) + u.name;
    return format_number(v) + "s";
}

std::string format_value(double v, Unit unit) {
    switch (unit) {
        case Unit::time: return format_seconds(v);
        case Unit::per_byte: return format_seconds(v) + "/B";
        // a size in whole bytes, never in exponent form: %.12g wrote 8888888888881 B as 8.88888888888e+12B,
        // which the size parser refuses (found by fuzz/model_spec.cpp)
        case Unit::size:
            if (v == std::floor(v) && std::fabs(v) < 9.2e18) return std::to_string(static_cast<long long>(v)) + "B";
            return format_number(v) + "B";
        case Unit::count:
        case Unit::flag:
        case Unit::ranks: return format_number(v);
    }
    return format_number(v);
}

std::string AnalyticModel::spec() const {
    std::string out = kind_ + ":";
    bool first = true;
    auto add = [&](const char* name, double v, Unit unit) {
        out += (first ? "" : ",") + std::string(name) + "=" + format_value(v, unit);
        first = false;
    };
    for (size_t i = 0; i < keys_.size(); ++i)
        if (keys_[i].required || values[i] != 0) add(keys_[i].name, values[i], keys_[i].unit);
    for (const CommonKey& c : common_keys(kind_)) {
        const double v = get_field(*this, c.field);
        if (v != c.default_value) add(c.name, v, c.unit);
    }
    return out;
}

// ---- parsing ----------------------------------------------------------------------------------------------

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::unique_ptr<AnalyticModel> make_kind(const std::string& kind) {
    if (kind == "hockney") return std::make_unique<Hockney>();
    if (kind == "wormhole") return std::make_unique<Wormhole>();
    if (kind == "circuit") return std::make_unique<Circuit>();
    if (kind == "loggp") return std::make_unique<LogGP>();
    return nullptr;
}

// Parses one value; throws a bare Error (the caller adds the model and key).
double parse_value(const std::string& text, Unit unit) {
    switch (unit) {
        case Unit::time: return parse_time_s(text);
        case Unit::per_byte: return parse_per_byte_s(text);
        case Unit::size: {
            const uint64_t v = parse_size_bytes(text);
            if (v == 0) throw Error("size '" + text + "' is invalid (allowed: at least 1B)");
            return static_cast<double>(v);
        }
        case Unit::count: {
            const std::string allowed = "' is invalid (allowed: an integer 1.." + std::to_string(kMaxPorts) + ")";
            const bool digits = !text.empty() && text.size() <= 4 &&
                                std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
            const int v = digits ? std::stoi(text) : 0;
            if (v < 1 || v > kMaxPorts) throw Error("count '" + text + allowed);
            return v;
        }
        case Unit::flag:
            if (text == "0" || text == "1") return text == "1" ? 1 : 0;
            throw Error("flag '" + text + "' is invalid (allowed: 0 or 1)");
        case Unit::ranks: {
            const bool digits = !text.empty() && text.size() <= 10 &&
                                std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
            const long long v = digits ? std::stoll(text) : 0;
            if (v < 1 || v > 2147483647)
                throw Error("ranks '" + text + "' is invalid (allowed: an integer 1..2147483647)");
            return static_cast<double>(v);
        }
    }
    return 0;
}

std::string allowed_keys(const AnalyticModel& m) {
    std::string out;
    for (const KeyDef& k : m.keys()) out += (out.empty() ? "" : ", ") + std::string(k.name);
    for (const CommonKey& c : common_keys(m.kind())) out += ", " + std::string(c.name);
    return out;
}

std::string required_keys(const AnalyticModel& m) {
    std::string out;
    for (const KeyDef& k : m.keys())
        if (k.required) out += (out.empty() ? "" : ", ") + std::string(k.name);
    return out;
}

// Sets key=value on the model; returns the position of a model-specific key (or -1 for a common key).
int assign(AnalyticModel& m, const std::string& key, const std::string& value, const std::string& where) {
    auto checked = [&](Unit unit) {
        try {
            return parse_value(value, unit);
        } catch (const Error& e) {
            throw Error(where + "bad " + key + ": " + e.what());
        }
    };
    for (size_t i = 0; i < m.keys().size(); ++i) {
        if (key != m.keys()[i].name) continue;
        m.values[i] = checked(m.keys()[i].unit);
        return static_cast<int>(i);
    }
    for (const CommonKey& c : common_keys(m.kind())) {
        if (key != c.name) continue;
        set_field(m, c.field, checked(c.unit));
        return -1;
    }
    throw Error(where + "unknown key '" + key + "' for " + m.kind() + " (allowed: " + allowed_keys(m) + ")");
}

// Splits "k=v,k=v" and assigns each pair; checks duplicates and the required keys.
void assign_all(AnalyticModel& m, std::string_view rest, const std::string& where) {
    std::vector<std::string> seen;
    std::vector<bool> given(m.keys().size(), false);
    while (!trim(rest).empty()) {
        const size_t comma = rest.find(',');
        const std::string_view item = trim(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos)
            throw Error(where + "expected key=value, got '" + std::string(item) + "'");
        const std::string key(trim(item.substr(0, eq))), value(trim(item.substr(eq + 1)));
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
            throw Error(where + "key '" + key + "' given twice (allowed: once)");
        seen.push_back(key);
        const int pos = assign(m, key, value, where);
        if (pos >= 0) given[static_cast<size_t>(pos)] = true;
    }
    for (size_t i = 0; i < m.keys().size(); ++i)
        if (m.keys()[i].required && !given[i])
            throw Error(where + "missing " + m.keys()[i].name + " (required: " + required_keys(m) + ")");
}

int ceil_log2(int n) {
    int r = 0;
    while ((int64_t{1} << r) < n) ++r;
    return r;
}

}  // namespace

double Model::barrier_s(int ranks) const {
    if (ranks <= 1) return 0;
    if (barrier_fixed_s >= 0) return barrier_fixed_s;
    const int rounds = ceil_log2(ranks);
    if (barrier_per_dim_s >= 0) return barrier_per_dim_s * rounds;
    return rounds * message(0, 1).recv_done;
}

std::unique_ptr<Model> parse_model(const std::string& spec) {
    const std::string where = "model '" + spec + "': ";
    const std::string_view text = trim(spec);
    const size_t colon = text.find(':');
    const std::string kind(trim(text.substr(0, colon)));
    std::unique_ptr<AnalyticModel> m = make_kind(kind);
    if (!m) throw Error(where + "unknown kind '" + kind + "' (allowed: hockney, wormhole, circuit, loggp)");
    assign_all(*m, colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1), where);
    return m;
}

}  // namespace collplan
