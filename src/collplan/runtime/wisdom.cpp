// Wisdom files. See wisdom.hpp; the JSON reader is a small recursive-descent parser (no dependency).
#include "collplan/runtime/wisdom.hpp"

#include "collplan/algorithms/registry.hpp"
#include "collplan/schedule/reduction.hpp"

#include <climits>
#include <cmath>
#include <fstream>
#include <sstream>

namespace collplan {
namespace {

struct Member;  // a key and a value; complete after Json (a pair<string, Json> inside Json does not build with clang)

struct Json {
    enum Type { null, boolean, number, string, array, object } type = null;
    bool b = false;
    double num = 0;
    std::string str;
    std::vector<Json> items;
    std::vector<Member> members;
    const Json* get(const std::string& k) const;
};

struct Member {
    std::string key;
    Json value;
};

const Json* Json::get(const std::string& k) const {
    for (const auto& [key, v] : members)
        if (key == k) return &v;
    return nullptr;
}

class Reader {
public:
    explicit Reader(const std::string& t) : t_(t) {}
    Json document() {
        Json v = value();
        skip();
        if (p_ != t_.size()) fail("end of input");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& expected) const {
        size_t line = 1;
        for (size_t i = 0; i < p_ && i < t_.size(); ++i) line += t_[i] == '\n';
        throw Error("wisdom: line " + std::to_string(line) + ": expected " + expected);
    }
    void skip() {
        while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\n' || t_[p_] == '\t' || t_[p_] == '\r')) ++p_;
    }
    bool eat(char c) {
        skip();
        if (p_ < t_.size() && t_[p_] == c) return ++p_, true;
        return false;
    }
    bool word(const char* w) {
        const std::string s(w);
        if (t_.compare(p_, s.size(), s) == 0) return p_ += s.size(), true;
        return false;
    }
    Json value() {
        skip();
        Json v;
        if (p_ >= t_.size()) fail("a value");
        const char c = t_[p_];
        if (c == '{') return object();
        if (c == '[') return array();
        if (c == '"') return v.type = Json::string, v.str = text(), v;
        if (word("true")) return v.type = Json::boolean, v.b = true, v;
        if (word("false")) return v.type = Json::boolean, v;
        if (word("null")) return v;
        size_t used = 0;
        try {
            v.num = std::stod(t_.substr(p_, 64), &used);
        } catch (...) {
            fail("a value");
        }
        p_ += used;
        v.type = Json::number;
        return v;
    }
    std::string text() {
        if (!eat('"')) fail("a string");
        std::string s;
        while (p_ < t_.size() && t_[p_] != '"') {
            char c = t_[p_++];
            if (c == '\\' && p_ < t_.size()) {
                c = t_[p_++];
                if (c == 'n') c = '\n';
                else if (c == 't') c = '\t';
                else if (c != '"' && c != '\\' && c != '/') fail("a simple escape (\\\" \\\\ \\/ \\n \\t)");
            }
            s += c;
        }
        if (!eat('"')) fail("'\"'");
        return s;
    }
    // Arrays and objects nest at most kMaxDepth deep (a wisdom file nests 3): deeper input is refused with one line
    // instead of exhausting the stack (a crafted file once crashed every MPI program that read it).
    static constexpr int kMaxDepth = 64;
    struct Nest {
        Reader& r;
        explicit Nest(Reader& rd) : r(rd) {
            if (++r.depth_ > kMaxDepth) r.fail("at most " + std::to_string(kMaxDepth) + " nested arrays and objects");
        }
        ~Nest() { --r.depth_; }
    };
    Json array() {
        Nest nest(*this);
        Json v;
        v.type = Json::array;
        eat('[');
        if (eat(']')) return v;
        do v.items.push_back(value());
        while (eat(','));
        if (!eat(']')) fail("',' or ']'");
        return v;
    }
    Json object() {
        Nest nest(*this);
        Json v;
        v.type = Json::object;
        eat('{');
        if (eat('}')) return v;
        do {
            skip();
            std::string k = text();
            if (!eat(':')) fail("':'");
            v.members.emplace_back(std::move(k), value());
        } while (eat(','));
        if (!eat('}')) fail("',' or '}'");
        return v;
    }

    const std::string& t_;
    size_t p_ = 0;
    int depth_ = 0;
};

uint64_t as_bytes(const Json& v, const std::string& what) {
    if (v.type != Json::number || v.num < 0 || v.num != std::floor(v.num))
        throw Error("wisdom: " + what + " must be a non-negative integer");
    return v.num >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v.num);
}

std::string scalar_text(const Json& v, const std::string& what) {
    if (v.type == Json::string) return v.str;
    // |num| < 2^63: converting a larger double (or inf) to long long is undefined behaviour.
    if (v.type == Json::number && v.num == std::floor(v.num) && std::fabs(v.num) < 9.2e18)
        return std::to_string(static_cast<long long>(v.num));
    throw Error("wisdom: " + what + " must be a string or an integer of at most 18 digits");
}

// What a call would run must exist: a registered algorithm of the entry's collective with valid parameters (or
// "native"), and a known operation -- refused when the file is read, not at the call that would use it.
void check_choice(const WisdomEntry& w, const std::string& where) {
    try {
        if (!w.op.empty()) reduction_op(w.op);
        auto [name, spec_params] = parse_algorithm_spec(w.algorithm);
        if (name == "native") return;
        const std::string full = name.find('/') == std::string::npos ? std::string(to_string(w.collective)) + "/" + name
                                                                     : name;
        const Algorithm& a = Registry::get().find(full);
        if (a.collective != w.collective)
            throw Error("algorithm " + full + " is a " + to_string(a.collective) + " algorithm (allowed: a " +
                        to_string(w.collective) + " algorithm or native)");
        std::map<std::string, std::string> params = w.params;
        params.insert(spec_params.begin(), spec_params.end());
        validate_params(a, params);
    } catch (const Error& e) {
        throw Error("wisdom: " + where + ": " + e.what());
    }
}

WisdomEntry entry(const Json& e, size_t i) {
    const std::string where = "entry " + std::to_string(i);
    if (e.type != Json::object) throw Error("wisdom: " + where + " is not an object");
    WisdomEntry w;
    const Json* c = e.get("collective");
    const Json* a = e.get("algorithm");
    if (!c || c->type != Json::string) throw Error("wisdom: " + where + " has no \"collective\" string");
    if (!a || a->type != Json::string) throw Error("wisdom: " + where + " has no \"algorithm\" string");
    w.collective = parse_collective(c->str);
    w.algorithm = a->str;
    if (const Json* r = e.get("ranks")) {
        const uint64_t ranks = as_bytes(*r, where + " ranks");  // a communicator size is an int
        if (ranks < 1 || ranks > static_cast<uint64_t>(INT_MAX))
            throw Error("wisdom: " + where + " ranks " + std::to_string(ranks) + " is invalid (allowed: 1.." +
                        std::to_string(INT_MAX) + ", or no \"ranks\" for any size)");
        w.ranks = static_cast<int>(ranks);
    }
    for (auto [key, field] : {std::pair{"op", &w.op}, std::pair{"topology", &w.topology}})
        if (const Json* v = e.get(key)) {
            if (v->type != Json::string) throw Error("wisdom: " + where + " " + key + " must be a string");
            *field = v->str;
        }
    if (const Json* r = e.get("min_bytes")) w.min_bytes = as_bytes(*r, where + " min_bytes");
    if (const Json* r = e.get("max_bytes")) w.max_bytes = as_bytes(*r, where + " max_bytes");
    if (const Json* p = e.get("params")) {
        if (p->type != Json::object) throw Error("wisdom: " + where + " params must be an object");
        for (const auto& [k, v] : p->members) w.params[k] = scalar_text(v, where + " parameter " + k);
    }
    if (w.max_bytes <= w.min_bytes)
        throw Error("wisdom: " + where + " has an empty size range: min_bytes " + std::to_string(w.min_bytes) +
                    ", max_bytes " + std::to_string(w.max_bytes) + " (allowed: min_bytes < max_bytes)");
    check_choice(w, where);
    return w;
}

std::string quoted(const std::string& s) {
    std::string o = "\"";
    for (char c : s) o += (c == '"' || c == '\\') ? std::string("\\") + c : c == '\n' ? std::string("\\n") : std::string(1, c);
    return o + "\"";
}

}  // namespace

const WisdomEntry* Wisdom::lookup(Collective c, int ranks, uint64_t bytes, const std::string& op,
                                  const std::string& topology) const {
    for (const WisdomEntry& e : entries) {
        if (e.collective != c || (e.ranks >= 0 && e.ranks != ranks)) continue;
        if ((!e.op.empty() && e.op != op) || e.topology != topology) continue;
        if (c != Collective::alltoallv && (bytes < e.min_bytes || bytes >= e.max_bytes)) continue;
        return &e;
    }
    return nullptr;
}

Wisdom parse_wisdom(const std::string& json) {
    const Json doc = Reader(json).document();
    if (doc.type != Json::object) throw Error("wisdom: the document must be an object");
    const Json* f = doc.get("format");
    if (!f || f->type != Json::string || f->str != "collplan-wisdom/1")
        throw Error("wisdom: \"format\" must be \"collplan-wisdom/1\"");
    const Json* es = doc.get("entries");
    if (!es || es->type != Json::array) throw Error("wisdom: \"entries\" must be an array");
    Wisdom w;
    for (size_t i = 0; i < es->items.size(); ++i) w.entries.push_back(entry(es->items[i], i));
    return w;
}

Wisdom load_wisdom(const std::string& path, size_t max_bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("wisdom: cannot read file '" + path + "'");
    std::string text;
    char buf[65536];
    while (in) {
        in.read(buf, sizeof buf);
        text.append(buf, static_cast<size_t>(in.gcount()));
        if (text.size() > max_bytes)
            throw Error("wisdom: file '" + path + "' is larger than " + std::to_string(max_bytes >> 20) + " MiB (" +
                        std::to_string(max_bytes) + " bytes)");
    }
    if (in.bad()) throw Error("wisdom: cannot read file '" + path + "'");
    return parse_wisdom(text);
}

std::string to_json(const Wisdom& w) {
    std::string o = "{\"format\": \"collplan-wisdom/1\", \"entries\": [";
    for (size_t i = 0; i < w.entries.size(); ++i) {
        const WisdomEntry& e = w.entries[i];
        o += std::string(i ? ",\n  " : "\n  ") + "{\"collective\": " + quoted(to_string(e.collective));
        if (e.ranks >= 0) o += ", \"ranks\": " + std::to_string(e.ranks);
        if (!e.topology.empty()) o += ", \"topology\": " + quoted(e.topology);
        if (!e.op.empty()) o += ", \"op\": " + quoted(e.op);
        o += ", \"min_bytes\": " + std::to_string(e.min_bytes);
        if (e.max_bytes != UINT64_MAX) o += ", \"max_bytes\": " + std::to_string(e.max_bytes);
        o += ", \"algorithm\": " + quoted(e.algorithm) + ", \"params\": {";
        bool first = true;
        for (const auto& [k, v] : e.params) o += (first ? "" : ", ") + quoted(k) + ": " + quoted(v), first = false;
        o += "}}";
    }
    return o + "\n]}\n";
}

std::pair<std::string, std::map<std::string, std::string>> parse_algorithm_spec(const std::string& spec) {
    const size_t colon = spec.find(':');
    std::pair<std::string, std::map<std::string, std::string>> out{spec.substr(0, colon), {}};
    if (out.first.empty()) throw Error("algorithm spec '" + spec + "' has no name (allowed: name[:k=v,...])");
    if (colon == std::string::npos) return out;
    std::string last;
    size_t start = colon + 1;
    while (start <= spec.size()) {
        size_t end = spec.find(',', start);
        if (end == std::string::npos) end = spec.size();
        const std::string piece = spec.substr(start, end - start);
        const size_t eq = piece.find('=');
        if (eq != std::string::npos && eq > 0) {
            last = piece.substr(0, eq);
            if (out.second.count(last))
                throw Error("algorithm spec '" + spec + "': parameter " + last + " is given twice (allowed: once)");
            out.second[last] = piece.substr(eq + 1);
        } else if (!last.empty()) {
            out.second[last] += "," + piece;  // a list value or a topology like fattree:4,2
        } else {
            throw Error("algorithm spec '" + spec + "': parameter '" + piece + "' is not k=v");
        }
        start = end + 1;
    }
    return out;
}

}  // namespace collplan
