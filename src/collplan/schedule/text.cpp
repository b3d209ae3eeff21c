// The text form of a schedule and the GOAL export. The grammar is documented in docs/schedule.md.
//
// Writing appends to one string with std::to_chars. Reading is a hand-written, line-oriented scanner (no regex, no
// per-line allocation) that feeds RankBuilder, so every check of the builder applies to text input too; errors
// are "line N: expected X, got 'Y'".
#include "collplan/schedule/text.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "collplan/schedule/walk.hpp"

namespace collplan {

namespace {

constexpr std::string_view kMagic = "collplan-schedule";
constexpr uint64_t kVersion = 1;

// ---------------------------------------------------------------------------------------------------------------
// Writing

void put_u(std::string& o, uint64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    o.append(buf, r.ptr);
}

void put_i(std::string& o, int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    o.append(buf, r.ptr);
}

bool is_bare_char(unsigned char c) { return (c > 0x20 && c < 0x7f && c != '"' && c != '#' && c != '\\') || c >= 0x80; }

// A metadata string: bare when it is one word of safe characters, else double-quoted with \" \\ \xHH escapes.
void put_string(std::string& o, const std::string& v) {
    bool bare = !v.empty();
    for (unsigned char c : v) bare = bare && is_bare_char(c);
    if (bare) {
        o += v;
        return;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    o += '"';
    for (unsigned char c : v) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            o += "\\x";
            o += kHex[c >> 4];
            o += kHex[c & 15];
        } else {
            o += static_cast<char>(c);
        }
    }
    o += '"';
}

void put_segs(std::string& o, std::span<const Segment> segs) {
    if (segs.empty()) {
        o += '-';
        return;
    }
    for (size_t i = 0; i < segs.size(); ++i) {
        if (i) o += ',';
        o += to_string(segs[i].buf());
        o += '[';
        put_u(o, segs[i].first());
        o += '+';
        put_u(o, segs[i].count);
        o += ']';
    }
}

// The units an op has when none are given explicitly (what RankBuilder derives).
uint64_t implicit_units(const OpView& v) {
    switch (v.op.kind) {
        case OpKind::calc: return static_cast<uint32_t>(v.op.aux);
        case OpKind::copy:
        case OpKind::reduce: return block_count(v.src());
        default: return block_count(v.segs);  // send, recv; barrier has no segments
    }
}

void put_options(std::string& o, const OpView& v) {
    if (v.op.flags & opflag::reverse) o += " reverse";
    if (v.op.flags & opflag::inverse) o += " inverse";
    if (v.units != implicit_units(v)) {
        o += " units ";
        put_u(o, v.units);
    }
    if (v.op.port != kAnyPort) {
        o += " port ";
        put_i(o, v.op.port);
    }
    if (v.op.ties != 0) {
        o += " ties ";
        put_u(o, v.op.ties);
    }
    if (!v.deps.empty()) {
        o += " after ";
        for (size_t i = 0; i < v.deps.size(); ++i) {
            if (i) o += ',';
            put_u(o, v.deps[i]);
        }
    }
}

void put_op(std::string& o, uint32_t index, const OpView& v) {
    o += "  ";
    put_u(o, index);
    o += v.op.fence() ? ": | " : ": ";
    o += to_string(v.op.kind);
    switch (v.op.kind) {
        case OpKind::send:
        case OpKind::recv:
            o += v.op.kind == OpKind::send ? " to " : " from ";
            put_i(o, v.op.peer);
            o += " tag ";
            put_i(o, v.op.tag());
            o += ' ';
            put_segs(o, v.segs);
            break;
        case OpKind::copy:
        case OpKind::reduce:
            o += ' ';
            put_segs(o, v.src());
            o += " -> ";
            put_segs(o, v.dst());
            break;
        case OpKind::calc:
            o += ' ';
            put_i(o, v.op.aux);
            break;
        case OpKind::barrier: break;
    }
    put_options(o, v);
    o += '\n';
}

void put_header(std::string& o, const Schedule& s) {
    o += kMagic;
    o += ' ';
    put_u(o, kVersion);
    o += "\ncollective ";
    o += to_string(s.collective());
    o += "\nranks ";
    put_i(o, s.ranks());
    o += "\nblocks in=";
    put_u(o, s.blocks(Buf::in));
    o += " out=";
    put_u(o, s.blocks(Buf::out));
    o += " tmp=";
    put_u(o, s.blocks(Buf::tmp));
    o += "\nalgorithm ";
    put_string(o, s.algorithm);
    o += "\nparams ";
    put_string(o, s.params);
    o += "\ntopology ";
    put_string(o, s.topology);
    o += "\nflags";
    if (s.needs_commutative) o += " needs_commutative";
    if (s.needs_inverse) o += " needs_inverse";
    if (s.idempotent_only) o += " idempotent_only";
    if (s.rank_consistent) o += " rank_consistent";
    if (s.symmetry != Symmetry::none) o += s.symmetry == Symmetry::cyclic ? " cyclic_symmetric" : " xor_symmetric";
    o += '\n';
    if (describe(s.collective()).rooted) {
        o += "root ";
        put_i(o, s.root);
        o += '\n';
    }
}

// alltoallv's matrix as P rows "matrix i: ..."; P counts as one line "counts c0 c1 ...".
void put_counts(std::string& o, const Schedule& s) {
    if (s.counts.empty()) return;
    const auto P = static_cast<size_t>(s.ranks());
    if (describe(s.collective()).counts == Counts::per_rank) {
        if (s.counts.size() != P)
            throw Error("schedule counts have " + std::to_string(s.counts.size()) + " entries (allowed: 0 or P = " +
                        std::to_string(P) + ")");
        o += "counts";
        for (uint64_t c : s.counts) o += ' ', put_u(o, c);
        o += '\n';
        return;
    }
    if (s.counts.size() != P * P)
        throw Error("schedule matrix has " + std::to_string(s.counts.size()) + " entries (allowed: 0 or P*P = " +
                    std::to_string(P * P) + ")");
    for (size_t i = 0; i < P; ++i) {
        o += "matrix ";
        put_u(o, i);
        o += ':';
        for (size_t j = 0; j < P; ++j) {
            o += ' ';
            put_u(o, s.counts[i * P + j]);
        }
        o += '\n';
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Reading

std::string quote(std::string_view w) {
    if (w.empty()) return "end of line";
    return "'" + std::string(w.substr(0, 60)) + (w.size() > 60 ? "...'" : "'");
}

// Throws "line N: what" unless `what` already names a line.
[[noreturn]] void fail_line(size_t line, const std::string& what) {
    throw Error("line " + std::to_string(line) + ": " + what);
}

// Runs f; an Error it throws (from RankBuilder, Schedule, Segment) gets the line number in front.
template <class F>
auto at_line(size_t line, F&& f) {
    try {
        return f();
    } catch (const Error& e) {
        fail_line(line, e.what());
    }
}

// One line of input and a cursor into it. Words end at blanks and at '#' (which starts a comment).
class Line {
public:
    Line() = default;
    Line(std::string_view text, size_t number) : t_(text), n_(number) {}
    size_t line_no() const { return n_; }
    size_t pos() const { return p_; }

    void skip_ws() {
        while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t')) ++p_;
    }
    bool at_end() {
        skip_ws();
        return p_ >= t_.size() || t_[p_] == '#';
    }
    char peek_char() {
        skip_ws();
        return p_ < t_.size() ? t_[p_] : '\0';
    }
    std::string_view peek_word() {
        skip_ws();
        size_t e = p_;
        while (e < t_.size() && t_[e] != ' ' && t_[e] != '\t' && t_[e] != '#') ++e;
        return t_.substr(p_, e - p_);
    }
    std::string_view word() {
        std::string_view w = peek_word();
        p_ += w.size();
        return w;
    }
    [[noreturn]] void fail(const std::string& expected) { fail_at(p_, expected); }
    [[noreturn]] void fail_at(size_t pos, const std::string& expected) {
        p_ = pos;
        fail_line(n_, "expected " + expected + ", got " + quote(peek_word()));
    }
    void expect_word(std::string_view w) {
        if (peek_word() != w) {
            std::string want(1, '\'');
            want.append(w).push_back('\'');
            fail(want);
        }
        p_ += w.size();
    }
    // Matches exact characters (after blanks), e.g. "in=" or ":".
    void expect_text(std::string_view s, const char* expected) {
        skip_ws();
        if (t_.substr(p_, s.size()) != s) fail(expected);
        p_ += s.size();
    }
    bool accept_char(char c) {
        if (p_ < t_.size() && t_[p_] == c) return ++p_, true;
        return false;
    }
    // Reads a number <= max; on failure leaves the cursor at it and returns false.
    bool try_number(uint64_t& v, uint64_t max = std::numeric_limits<uint64_t>::max()) {
        skip_ws();
        auto r = std::from_chars(t_.data() + p_, t_.data() + t_.size(), v);
        if (r.ec != std::errc() || v > max) return false;
        p_ = static_cast<size_t>(r.ptr - t_.data());
        return true;
    }
    uint64_t number(const char* what, uint64_t max = std::numeric_limits<uint64_t>::max()) {
        uint64_t v = 0;
        if (!try_number(v, max)) fail(what);
        return v;
    }
    void end() {
        if (!at_end()) fail("end of line");
    }
    std::string string_value();
    void segments(std::vector<Segment>& out);

private:
    std::string_view t_;
    size_t p_ = 0;
    size_t n_ = 0;
};

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// A bare word or a double-quoted string with \" \\ \xHH escapes; nothing may follow it.
std::string Line::string_value() {
    if (peek_char() != '"') {
        std::string v(word());
        if (v.empty()) fail("a value (a word or a \"quoted string\")");
        end();
        return v;
    }
    const size_t start = p_++;
    std::string v;
    while (true) {
        if (p_ >= t_.size()) fail_at(start, "a closing '\"'");
        const char c = t_[p_++];
        if (c == '"') break;
        if (c != '\\') {
            v += c;
            continue;
        }
        if (p_ < t_.size() && (t_[p_] == '"' || t_[p_] == '\\')) {
            v += t_[p_++];
        } else if (p_ + 2 < t_.size() && t_[p_] == 'x' && hex_digit(t_[p_ + 1]) >= 0 && hex_digit(t_[p_ + 2]) >= 0) {
            // put_string escapes control characters only: a byte >= 0x80 from an escape could make the string
            // invalid UTF-8 (every reader of the metadata -- Python, JSON -- needs text)
            const int byte = hex_digit(t_[p_ + 1]) * 16 + hex_digit(t_[p_ + 2]);
            if (byte >= 0x80) fail_at(p_ - 1, "an escape \\xHH of a control character (\\x00-\\x1f, \\x7f); other "
                                              "characters are written as they are, in UTF-8");
            v += static_cast<char>(byte);
            p_ += 3;
        } else {
            fail_at(p_ - 1, "an escape \\\" \\\\ or \\xHH");
        }
    }
    end();
    return v;
}

// "-" (no segments) or buf[first+count] joined by ',', e.g. out[0+1],tmp[3+2].
void Line::segments(std::vector<Segment>& out) {
    static const std::string kWhat = "segments like out[0+1],tmp[3+2] or '-'";
    skip_ws();
    const size_t start = p_;
    if (peek_word() == "-") {
        ++p_;
        return;
    }
    do {
        Buf b;
        if (t_.substr(p_, 3) == "in[") b = Buf::in, p_ += 3;
        else if (t_.substr(p_, 4) == "out[") b = Buf::out, p_ += 4;
        else if (t_.substr(p_, 4) == "tmp[") b = Buf::tmp, p_ += 4;
        else fail_at(start, kWhat);
        uint64_t first = 0, count = 0;
        auto r = std::from_chars(t_.data() + p_, t_.data() + t_.size(), first);
        if (r.ec != std::errc() || r.ptr == t_.data() + t_.size() || *r.ptr != '+') fail_at(start, kWhat);
        p_ = static_cast<size_t>(r.ptr - t_.data()) + 1;
        r = std::from_chars(t_.data() + p_, t_.data() + t_.size(), count);
        if (r.ec != std::errc() || r.ptr == t_.data() + t_.size() || *r.ptr != ']') fail_at(start, kWhat);
        p_ = static_cast<size_t>(r.ptr - t_.data()) + 1;
        if (first >= (1u << 30) || count > std::numeric_limits<uint32_t>::max())
            fail_line(n_, "segment " + std::string(to_string(b)) + "[" + std::to_string(first) + "+" +
                              std::to_string(count) + "] out of range (allowed: first < 2^30, count < 2^32)");
        out.emplace_back(b, static_cast<uint32_t>(first), static_cast<uint32_t>(count));
    } while (accept_char(','));
    if (p_ < t_.size() && t_[p_] != ' ' && t_[p_] != '\t' && t_[p_] != '#') fail_at(start, kWhat);
}

// Splits the input into lines, skipping blank and comment-only ones.
class Reader {
public:
    explicit Reader(std::string_view text) : t_(text) {}
    bool next(Line& out) {
        while (pos_ < t_.size()) {
            const char* nl = static_cast<const char*>(std::memchr(t_.data() + pos_, '\n', t_.size() - pos_));
            const size_t end = nl ? static_cast<size_t>(nl - t_.data()) : t_.size();
            std::string_view line = t_.substr(pos_, end - pos_);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            pos_ = end + 1;
            ++line_;
            out = Line(line, line_);
            if (!out.at_end()) return true;
        }
        return false;
    }
    // The next line, or an error naming what was expected at the end of the input.
    Line require(const std::string& expected) {
        Line l;
        if (!next(l)) fail_line(line_ + 1, "expected " + expected + ", got end of input");
        return l;
    }
    size_t line() const { return line_; }

private:
    std::string_view t_;
    size_t pos_ = 0;
    size_t line_ = 0;
};

// Options that may follow an op: reverse inverse units U port N ties M after D,D,...
struct OpOptions {
    uint8_t flags = 0;
    uint64_t units = RankBuilder::kBlockUnits;
    int port = kAnyPort;
    unsigned ties = 0;
    std::vector<uint32_t> deps;
};

void parse_options(Line& ln, OpKind kind, OpOptions& o) {
    static const std::string kWhat = "'reverse', 'inverse', 'units', 'port', 'ties', 'after' or end of line";
    unsigned seen = 0;
    while (!ln.at_end()) {
        const std::string_view w = ln.peek_word();
        const unsigned bit = w == "reverse" ? 1 : w == "inverse" ? 2 : w == "units" ? 4 : w == "port" ? 8
                             : w == "after" ? 16 : w == "ties" ? 32 : 0;
        if (bit == 0 || (seen & bit)) ln.fail(bit ? "each option at most once" : kWhat);
        if ((bit & 3) && kind != OpKind::reduce) ln.fail("an option allowed on " + std::string(to_string(kind)));
        if (bit == 4 && (kind == OpKind::calc || kind == OpKind::barrier))
            ln.fail("an option allowed on " + std::string(to_string(kind)) + " ('units' is for send, recv, copy, reduce)");
        if (bit == 32 && kind != OpKind::send)
            ln.fail("an option allowed on " + std::string(to_string(kind)) + " ('ties' is for send)");
        seen |= bit;
        ln.word();
        if (bit == 1) o.flags |= opflag::reverse;
        if (bit == 2) o.flags |= opflag::inverse;
        if (bit == 4) o.units = ln.number("a number of units", RankBuilder::kBlockUnits - 1);
        if (bit == 8) o.port = static_cast<int>(ln.number("a port number 0..127", 127));
        if (bit == 32) o.ties = static_cast<unsigned>(ln.number("a ties mask 0..255", 255));
        if (bit == 16) {
            do {
                o.deps.push_back(static_cast<uint32_t>(ln.number("an op index", 0xffffffffu)));
            } while (ln.accept_char(','));
        }
    }
}

OpKind parse_kind(Line& ln) {
    const std::string_view w = ln.peek_word();
    for (OpKind k : {OpKind::send, OpKind::recv, OpKind::reduce, OpKind::copy, OpKind::calc, OpKind::barrier})
        if (w == to_string(k)) {
            ln.word();
            return k;
        }
    ln.fail("an op kind (send, recv, reduce, copy, calc, barrier)");
}

// Reused buffers for the ops of one parse.
struct OpScratch {
    std::vector<Segment> src, dst;
    OpOptions opt;
};

uint32_t add_op(Line& ln, RankBuilder& b, OpKind kind, OpScratch& sc) {
    int peer = 0;
    int tag = 0;
    uint64_t calc_units = 0;
    if (kind == OpKind::send || kind == OpKind::recv) {
        ln.expect_word(kind == OpKind::send ? "to" : "from");
        peer = static_cast<int>(ln.number("a peer rank", 0x7fffffff));
        ln.expect_word("tag");
        tag = static_cast<int>(ln.number("a tag 0..2^31-1", 0x7fffffff));
        ln.segments(sc.src);
    } else if (kind == OpKind::copy || kind == OpKind::reduce) {
        ln.segments(sc.src);
        ln.expect_word("->");
        ln.segments(sc.dst);
    } else if (kind == OpKind::calc) {
        calc_units = ln.number("a number of calc units", 0xffffffffu);
    }
    parse_options(ln, kind, sc.opt);
    const auto& o = sc.opt;
    return at_line(ln.line_no(), [&] {
        switch (kind) {
            case OpKind::send: return b.send(peer, tag, sc.src, o.deps, o.units);
            case OpKind::recv: return b.recv(peer, tag, sc.src, o.deps, o.units);
            case OpKind::copy: return b.copy(sc.src, sc.dst, o.deps, o.units);
            case OpKind::reduce: return b.reduce(sc.src, sc.dst, o.deps, o.flags, o.units);
            case OpKind::calc: return b.calc(static_cast<uint32_t>(calc_units), o.deps);
            case OpKind::barrier: break;
        }
        return b.barrier(o.deps);
    });
}

// "  I: [|] kind args options"
void parse_op(Line& ln, RankBuilder& b, OpScratch& sc) {
    const uint32_t want = b.size();
    if (ln.peek_char() < '0' || ln.peek_char() > '9')
        ln.fail("op index " + std::to_string(want) + ": or 'rank'");
    const uint64_t index = ln.number("an op index");
    if (index != want) fail_line(ln.line_no(), "expected op index " + std::to_string(want) + ", got '" +
                                                  std::to_string(index) + "'");
    ln.expect_text(":", "':' after the op index");
    if (ln.peek_char() == '|') {
        ln.accept_char('|');
        if (want == 0) fail_line(ln.line_no(), "expected an op without '|' (op 0 cannot open a new group), got '|'");
        b.fence();
    }
    const OpKind kind = parse_kind(ln);
    sc.src.clear();
    sc.dst.clear();
    sc.opt.flags = 0;
    sc.opt.units = RankBuilder::kBlockUnits;
    sc.opt.port = kAnyPort;
    sc.opt.ties = 0;
    sc.opt.deps.clear();
    add_op(ln, b, kind, sc);
    if (sc.opt.port != kAnyPort) at_line(ln.line_no(), [&] { b.on_port(sc.opt.port); });
    if (sc.opt.ties != 0) at_line(ln.line_no(), [&] { b.ties_minus(sc.opt.ties); });
}

// A number on its own that must lie in [lo, hi]; an error names `expected` and shows the bad word.
uint64_t bounded_number(Line& ln, uint64_t lo, uint64_t hi, const std::string& expected) {
    ln.skip_ws();
    const size_t at = ln.pos();
    uint64_t v = 0;
    if (!ln.try_number(v, hi) || v < lo) ln.fail_at(at, expected);
    return v;
}

Collective parse_collective_word(Line& ln) {
    Collective c{};
    try {
        c = parse_collective(std::string(ln.peek_word()));
    } catch (const Error&) {
        std::string names;
        for (Collective k : kCollectives) names += (names.empty() ? "" : ", ") + std::string(describe(k).name);
        ln.fail("a collective (" + names + ")");
    }
    ln.word();
    return c;
}

// The fixed header: magic, collective, ranks, blocks. Returns the empty schedule.
Schedule parse_fixed_header(Reader& rd, size_t max_ranks, size_t text_bytes, const Job& job) {
    Line ln = rd.require("'collplan-schedule 1'");
    ln.expect_word(kMagic);
    bounded_number(ln, kVersion, kVersion, "format version 1");
    ln.end();
    ln = rd.require("'collective'");
    ln.expect_word("collective");
    const Collective c = parse_collective_word(ln);
    ln.end();
    ln = rd.require("'ranks'");
    ln.expect_word("ranks");
    const uint64_t P = bounded_number(ln, 1, max_ranks, "a number of ranks in 1.." + std::to_string(max_ranks) +
                                                            " (one 'rank' line each)");
    job.require_memory(schedule_text_memory_bytes(text_bytes, P), "reading a schedule of " + std::to_string(P) + " ranks");
    ln.end();
    ln = rd.require("'blocks'");
    ln.expect_word("blocks");
    uint64_t nb[3];
    const char* keys[3] = {"in=", "out=", "tmp="};
    const char* wants[3] = {"'in=<blocks>'", "'out=<blocks>'", "'tmp=<blocks>'"};
    for (int i = 0; i < 3; ++i) {
        ln.expect_text(keys[i], wants[i]);
        nb[i] = ln.number("a number of blocks < 2^30", (1u << 30) - 1);
    }
    ln.end();
    return at_line(ln.line_no(), [&] {
        return Schedule(c, static_cast<int>(P), static_cast<uint32_t>(nb[0]), static_cast<uint32_t>(nb[1]),
                        static_cast<uint32_t>(nb[2]));
    });
}

void parse_flags(Line& ln, Schedule& s) {
    while (!ln.at_end()) {
        const std::string_view w = ln.peek_word();
        if (w == "needs_commutative") s.needs_commutative = true;
        else if (w == "needs_inverse") s.needs_inverse = true;
        else if (w == "idempotent_only") s.idempotent_only = true;
        else if (w == "rank_consistent") s.rank_consistent = true;
        else if (w == "cyclic_symmetric") s.symmetry = Symmetry::cyclic;
        else if (w == "xor_symmetric") s.symmetry = Symmetry::xor_;
        else ln.fail("a flag (needs_commutative, needs_inverse, idempotent_only, rank_consistent, cyclic_symmetric, "
                     "xor_symmetric)");
        ln.word();
    }
}

void parse_matrix_row(Line& ln, Schedule& s) {
    const auto P = static_cast<size_t>(s.ranks());
    const size_t row = s.counts.size() / P;
    bounded_number(ln, row, row, "matrix row " + std::to_string(row));
    ln.expect_text(":", "':' after the matrix row");
    uint64_t v = 0;
    for (size_t j = 0; j < P; ++j) {
        if (!ln.try_number(v)) ln.fail("matrix entry " + std::to_string(j) + " of " + std::to_string(P));
        s.counts.push_back(v);
    }
    ln.end();
}

void parse_counts(Line& ln, Schedule& s) {
    const auto P = static_cast<size_t>(s.ranks());
    if (describe(s.collective()).counts != Counts::per_rank)
        ln.fail(std::string("no 'counts' line: ") + to_string(s.collective()) + " has no per-rank counts");
    uint64_t v = 0;
    for (size_t j = 0; j < P; ++j) {
        if (!ln.try_number(v)) ln.fail("count " + std::to_string(j) + " of " + std::to_string(P));
        s.counts.push_back(v);
    }
    ln.end();
}

constexpr size_t kMaxMetadataBytes = 4096;

// Metadata lines after the fixed header, each at most once (matrix: P rows in order), until the first 'rank'.
void parse_metadata(Reader& rd, Line& ln, bool& have, Schedule& s) {
    unsigned seen = 0;
    while (have && ln.peek_word() != "rank") {
        const std::string_view w = ln.peek_word();
        const unsigned bit = w == "algorithm" ? 1 : w == "params" ? 2 : w == "topology" ? 4 : w == "flags" ? 8
                             : w == "matrix" ? 16 : w == "root" ? 32 : w == "counts" ? 64 : 0;
        if (bit == 0 || (bit != 16 && (seen & bit)))
            ln.fail("'algorithm', 'params', 'topology', 'flags', 'root', 'counts', 'matrix' (each once) or 'rank 0'");
        seen |= bit;
        ln.word();
        if (bit & 7) {  // names, not data: a megabyte of "algorithm" is a corrupt or hostile file
            std::string v = ln.string_value();
            if (v.size() > kMaxMetadataBytes)
                ln.fail(std::string(w) + " of at most " + std::to_string(kMaxMetadataBytes) + " bytes (got " +
                        std::to_string(v.size()) + ")");
            (bit == 1 ? s.algorithm : bit == 2 ? s.params : s.topology) = std::move(v);
        }
        if (bit == 8) parse_flags(ln, s);
        if (bit == 16) parse_matrix_row(ln, s);
        if (bit == 32) s.root = static_cast<int>(bounded_number(ln, 0, static_cast<uint64_t>(s.ranks()) - 1, "a root in 0.." + std::to_string(s.ranks() - 1))), ln.end();
        if (bit == 64) parse_counts(ln, s);
        have = rd.next(ln);
    }
    const auto P = static_cast<size_t>(s.ranks());
    if ((seen & 16) && s.counts.size() != P * P) {
        const std::string want = "'matrix " + std::to_string(s.counts.size() / P) + ":'";
        if (!have) fail_line(rd.line() + 1, "expected " + want + ", got end of input");
        ln.fail(want);
    }
}

size_t count_lines(const std::string& text) {
    size_t n = 1;
    const char* p = text.data();
    const char* const e = p + text.size();
    while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(e - p))))) ++n, ++p;
    return n;
}

}  // namespace

std::string to_text(const Schedule& s) {
    std::string o;
    o.reserve(256 + s.total_ops() * 40 + s.counts.size() * 4);
    put_header(o, s);
    put_counts(o, s);
    for (int r = 0; r < s.ranks(); ++r) {
        o += "rank ";
        put_i(o, r);
        o += '\n';
        const auto n = static_cast<uint32_t>(s.num_ops(r));
        for (uint32_t i = 0; i < n; ++i) put_op(o, i, s.op(r, i));
    }
    return o;
}

double schedule_text_memory_bytes(size_t text_bytes, uint64_t ranks) {
    // The shortest op line ("  0: calc 1\n", 12 bytes) becomes a 20-byte op: at most twice the text, plus the
    // growth of the vectors (a quarter on average, twice at worst).
    return static_cast<double>(text_bytes) * 4 + static_cast<double>(ranks) * sizeof(RankProgram);
}

Schedule from_text(const std::string& text, const Job& job) {
    Reader rd(text);
    Schedule s = parse_fixed_header(rd, count_lines(text), text.size(), job);
    Line ln;
    bool have = rd.next(ln);
    parse_metadata(rd, ln, have, s);
    OpScratch sc;
    for (int r = 0; r < s.ranks(); ++r) {
        const std::string want = "'rank " + std::to_string(r) + "'";
        if (!have) fail_line(rd.line() + 1, "expected " + want + ", got end of input");
        ln.expect_word("rank");
        if (ln.peek_word() != std::to_string(r)) ln.fail("rank " + std::to_string(r));
        ln.word();
        ln.end();
        RankBuilder b(s, r);
        while ((have = rd.next(ln)) && ln.peek_word() != "rank") parse_op(ln, b, sc);
    }
    if (have) ln.fail("end of input (the schedule has " + std::to_string(s.ranks()) + " ranks)");
    return s;
}

// ---------------------------------------------------------------------------------------------------------------
// GOAL export

namespace {

uint64_t rounded(double x, const char* what) {
    if (!std::isfinite(x) || x < 0 || x > 1.8e19)
        throw Error(std::string(what) + " " + std::to_string(x) + " out of range (allowed: finite, >= 0)");
    return static_cast<uint64_t>(std::round(x));
}

struct GoalCosts {
    double block_bytes, reduce_s_per_byte, copy_s_per_byte;
    int barrier_tag;  // the tag of the barrier's messages: above every tag of the schedule
};

void goal_op(std::string& o, uint32_t i, const OpView& v, const GoalCosts& c) {
    o += 'l';
    put_u(o, i);
    o += ": ";
    const double bytes = static_cast<double>(v.units) * c.block_bytes;
    switch (v.op.kind) {
        case OpKind::send:
        case OpKind::recv:
            o += v.op.kind == OpKind::send ? "send " : "recv ";
            put_u(o, rounded(bytes, "message bytes"));
            o += v.op.kind == OpKind::send ? "b to " : "b from ";
            put_i(o, v.op.peer);
            o += " tag ";
            put_i(o, v.op.tag());
            if (v.op.port != kAnyPort) {
                o += " nic ";
                put_i(o, v.op.port);
            }
            break;
        case OpKind::copy: o += "calc ", put_u(o, rounded(bytes * c.copy_s_per_byte * 1e9, "copy time ns")); break;
        case OpKind::reduce:
        case OpKind::calc: o += "calc ", put_u(o, rounded(bytes * c.reduce_s_per_byte * 1e9, "calc time ns")); break;
        case OpKind::barrier: o += "calc 0"; break;  // its messages are the b nodes before it (goal_barrier)
    }
    o += '\n';
}

// A node of the GOAL text: l<i> (op i), f<i> (the boundary before op i's group), b<i>_<round><s|r> (a message of
// the barrier of op i).
struct GoalNode {
    char kind;
    uint32_t i;
    int round = -1;
    char side = 0;
};

void put_node(std::string& o, const GoalNode& n) {
    o += n.kind;
    put_u(o, n.i);
    if (n.round >= 0) {
        o += '_';
        put_i(o, n.round);
        o += n.side;
    }
}

void goal_requires(std::string& o, const GoalNode& a, const GoalNode& b) {
    put_node(o, a);
    o += " requires ";
    put_node(o, b);
    o += '\n';
}

// Group boundaries: every op of a group requires every op of the group before it, as direct edges -- not through a
// zero-time calc node: LogGOPSim runs such a node as an event of its own, which frees the next group only when it
// is handled and so reorders events of equal time (torgos on torus:9x9 at 1 KiB, 4 NICs: 443,116 ns with the node,
// 358,778 ns with direct edges, the latter collplan's loggp time). Where both groups are large (more than
// kGoalDirectEdges edges) the boundary is a `calc 0` node, named fK for the group's first op K.
constexpr uint64_t kGoalDirectEdges = 4096;

// A barrier op (collplan's global barrier; GOAL has none) as a dissemination barrier of 0-byte messages: in round
// j rank r sends to r + 2^j and receives from r - 2^j (mod P); round j + 1 waits for both; op i itself is a
// `calc 0` node after the last round. The rounds' first nodes take op i's requirements (`in`).
void goal_barrier(std::string& o, const Schedule& s, int r, uint32_t i, const std::vector<GoalNode>& in, const GoalCosts& c) {
    const int P = s.ranks();
    int rounds = 0;
    while ((1 << rounds) < P) ++rounds;
    for (int j = 0; j < rounds; ++j)
        for (const char side : {'s', 'r'}) {
            const GoalNode n{'b', i, j, side};
            put_node(o, n);
            o += side == 's' ? ": send 0b to " : ": recv 0b from ";
            put_i(o, ((side == 's' ? r + (1 << j) : r - (1 << j)) % P + P) % P);
            o += " tag ";
            put_i(o, c.barrier_tag);
            o += '\n';
            if (j == 0)
                for (const GoalNode& x : in) goal_requires(o, n, x);
            else
                for (const char prev : {'s', 'r'}) goal_requires(o, n, GoalNode{'b', i, j - 1, prev});
        }
    goal_op(o, i, s.op(r, i), c);
    if (rounds == 0)
        for (const GoalNode& x : in) goal_requires(o, GoalNode{'l', i}, x);
    for (const char side : {'s', 'r'})
        if (rounds > 0) goal_requires(o, GoalNode{'l', i}, GoalNode{'b', i, rounds - 1, side});
}

void goal_rank(std::string& o, const Schedule& s, int r, const GoalCosts& c) {
    o += "\nrank ";
    put_i(o, r);
    o += " {\n";
    const auto n = static_cast<uint32_t>(s.num_ops(r));
    uint32_t prev = 0, group = 0;  // first op of the previous and of the current group
    bool hub = false;              // the current group waits for a calc node fK (K = group), else for direct edges
    std::vector<GoalNode> in;      // what op i requires
    for (uint32_t i = 0; i < n; ++i) {
        const OpView v = s.op(r, i);
        if (v.op.fence() && i > 0) {
            const uint32_t end = group_end(s.program(r), i);
            prev = group, group = i;
            hub = uint64_t{group - prev} * (end - group) > kGoalDirectEdges;
            if (hub) {
                o += 'f';
                put_u(o, i);
                o += ": calc 0\n";
                for (uint32_t j = prev; j < i; ++j) goal_requires(o, GoalNode{'f', i}, GoalNode{'l', j});
            }
        }
        in.clear();
        if (group > 0 && hub) in.push_back({'f', group});
        if (group > 0 && !hub)
            for (uint32_t j = prev; j < group; ++j) in.push_back({'l', j});
        for (uint32_t d : v.deps)
            if (hub || group == 0 || d < prev || d >= group) in.push_back({'l', d});  // else among the group edges
        if (v.op.kind == OpKind::barrier) {
            goal_barrier(o, s, r, i, in, c);
            continue;
        }
        goal_op(o, i, v, c);
        for (const GoalNode& x : in) goal_requires(o, GoalNode{'l', i}, x);
    }
    o += "}\n";
}

}  // namespace

std::string to_goal(const Schedule& s, double block_bytes, double reduce_s_per_byte, double copy_s_per_byte) {
    for (double x : {block_bytes, reduce_s_per_byte, copy_s_per_byte})
        if (!std::isfinite(x) || x < 0)
            throw Error("GOAL export parameter " + std::to_string(x) + " invalid (allowed: finite, >= 0)");
    int max_tag = -1;
    bool barrier = false;
    for (int r = 0; r < s.ranks(); ++r)
        for (const Op& op : s.program(r).ops) {
            if (op.kind == OpKind::send || op.kind == OpKind::recv) max_tag = std::max(max_tag, op.tag());
            barrier = barrier || op.kind == OpKind::barrier;
        }
    const GoalCosts c{block_bytes, reduce_s_per_byte, copy_s_per_byte, max_tag + 1};
    std::string o;
    o.reserve(32 + s.total_ops() * 48);
    o += "num_ranks ";
    put_i(o, s.ranks());
    o += '\n';
    if (barrier) {
        o += "// collplan's global barrier ops are exported as dissemination barriers of 0-byte messages with tag ";
        put_i(o, c.barrier_tag);
        o += "\n// (nodes b<op>_<round>s / b<op>_<round>r), each followed by a calc 0 node l<op>\n";
    }
    for (int r = 0; r < s.ranks(); ++r) goal_rank(o, s, r, c);
    return o;
}

}  // namespace collplan
