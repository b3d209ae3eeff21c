// libcollplan_pmpi.so, the recorder of COLLPLAN_PROFILE=DIR (profile.hpp; the format: docs/profile.md).
//
// Per rank: records of fixed size in a buffer (calls, completions, communicators first used), per-member values in
// an arena beside it, and the point-to-point summary per peer. When the buffer or the arena fills they are copied
// as they are to DIR/collplan.<world rank>.prof.spill (memory stays bounded however long the program runs); at
// MPI_Finalize everything is formatted (std::to_chars) into DIR/collplan.<world rank>.prof, whose header MPI_Init
// wrote, and the spill file removed. A rank that dies leaves a file without its `end` line (readers report it). Communicators are numbered locally, in the order
// of first use, with no communication (a collective inserted to agree on a number could deadlock a legal program
// whose first call on a communicator is non-blocking); readers match them by member list (docs/profile.md).
#include "collplan/pmpi/profile.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

namespace collplan::mpi::pmpi {

bool g_profile = false;
thread_local bool t_profile_inside __attribute__((tls_model("initial-exec"))) = false;

namespace {

constexpr size_t kMaxLines = 8192;          // records buffered before a write
constexpr size_t kMaxValues = size_t{1} << 17;  // per-member values buffered (1 MiB)

int64_t g_init_enter = 0;  // MPI_Init entered (absolute ns)
int64_t g_zero = 0;        // time zero (absolute ns): profile_open()

struct CommRec {
    uint32_t id = 0;
    bool announced = false;  // its comm line written
    ProfileComm view;
    std::vector<int> world;  // the members' ranks in MPI_COMM_WORLD (local group of an inter-communicator)
    uint64_t cseq = 0;       // its next collective's place
};

enum class What : uint8_t { comm, call, done };

struct Line {
    What what = What::call;
    Collective f{};
    Kind kind = kBlocking;
    bool contiguous = true;
    int8_t commutative = -1;  // -1: not a reduction
    uint8_t op = 0;           // index into kOps (0: none)
    bool inter = false;       // comm: an inter-communicator
    uint32_t comm = 0;
    uint32_t start_no = 0;    // a persistent request's start: 1, 2, ... (0: not a start)
    int32_t root = -1;
    uint64_t seq = 0;         // call: its number; done: the call's
    uint64_t cseq = 0;
    uint64_t bytes = 0;
    int64_t type_size = 0;
    int64_t enter = 0, exit = 0, gap = 0;  // relative to time zero
    uint64_t values_at = 0, nvalues = 0;   // in the arena (comm: its members)
};

struct Persistent {  // a recorded persistent request: its init line, and how often it was started
    Line init;
    std::vector<uint64_t> values;
    uint32_t starts = 0;
};

struct Recorder {
    std::FILE* file = nullptr;
    std::FILE* spill = nullptr;  // full buffers, until MPI_Finalize formats them (spill())
    std::string path, spill_path;
    int rank = 0;
    std::vector<Line> lines;
    std::vector<uint64_t> arena;
    uint64_t next_seq = 0, written_calls = 0;
    int64_t last_exit = 0;  // relative: the previous call line's exit (or MPI_Init's)
    std::unordered_map<uint64_t, CommRec> comms;
    uint64_t last_key = 0;       // the communicator of the last call, and its record (a program calls on few)
    CommRec* last = nullptr;
    MPI_Op last_op = MPI_OP_NULL;  // the operation of the last reduction, and its index in kOps
    uint8_t last_op_index = 0;
    uint32_t next_comm = 0;
    int keyval = MPI_KEYVAL_INVALID;
    std::unordered_map<uint64_t, uint64_t> pending;  // request -> its call's seq, until a completion call returns it
    std::unordered_map<uint64_t, Persistent> persistent;
    std::map<int, std::pair<uint64_t, uint64_t>> p2p;  // world rank -> messages, bytes
    std::string failed;  // a write that failed: said once at MPI_Finalize
};
Recorder* g_rec = nullptr;  // leaked: interceptors may run during static destruction

struct OpName {
    MPI_Op op;
    const char* name;
};
const OpName kOps[] = {
    {MPI_OP_NULL, "-"},     {MPI_SUM, "sum"},   {MPI_PROD, "prod"},   {MPI_MAX, "max"},         {MPI_MIN, "min"},
    {MPI_LAND, "land"},     {MPI_LOR, "lor"},   {MPI_LXOR, "lxor"},   {MPI_BAND, "band"},       {MPI_BOR, "bor"},
    {MPI_BXOR, "bxor"},     {MPI_MAXLOC, "maxloc"}, {MPI_MINLOC, "minloc"}, {MPI_REPLACE, "replace"},
    {MPI_NO_OP, "no_op"},
};
constexpr uint8_t kUserOp = static_cast<uint8_t>(std::size(kOps));

const char* kind_text(Kind k, uint32_t start_no) {
    if (start_no > 0) return "start";
    return k == kBlocking ? "b" : k == kNonblocking ? "nb" : "init";
}

void set_watch() { watch_requests(!g_rec->pending.empty() || !g_rec->persistent.empty()); }

// ------------------------------------------------------------------------------------------------ the file
struct Text {
    std::string s;
    void put(std::string_view t) { s.append(t.data(), t.size()); }
    template <class I>
    void num(I v) {
        char b[24];
        auto r = std::to_chars(b, b + sizeof b, v);
        s.push_back(' ');
        s.append(b, r.ptr);
    }
};

void format(Text& t, const Line& l, const std::vector<uint64_t>& arena) {
    switch (l.what) {
        case What::comm:
            t.put("comm");
            t.num(l.comm);
            t.num(l.nvalues);
            t.num(l.inter ? 1 : 0);
            for (uint64_t i = 0; i < l.nvalues; ++i) t.num(arena[l.values_at + i]);
            break;
        case What::call:
            t.put("call");
            t.num(l.seq);
            t.put(" "), t.put(describe(l.f).name);
            t.put(" "), t.put(kind_text(l.kind, l.start_no));
            t.num(l.comm);
            t.num(l.cseq);
            t.num(l.start_no);
            t.num(l.root);
            t.num(l.bytes);
            t.num(l.type_size);
            t.num(l.contiguous ? 1 : 0);
            t.put(" "), t.put(l.op == kUserOp ? "user" : kOps[l.op].name);
            if (l.commutative < 0) t.put(" -");
            else t.num(static_cast<int>(l.commutative));
            t.num(l.enter);
            t.num(l.exit);
            t.num(l.gap);
            t.num(l.nvalues);
            for (uint64_t i = 0; i < l.nvalues; ++i) t.num(arena[l.values_at + i]);
            break;
        case What::done:
            t.put("done");
            t.num(l.seq);
            t.num(l.enter);
            t.num(l.exit);
            break;
    }
    t.s.push_back('\n');
}

void write_text(const std::string& s) {
    Recorder& r = *g_rec;
    if (!r.file || s.empty()) return;
    if (std::fwrite(s.data(), 1, s.size(), r.file) != s.size() || std::fflush(r.file) != 0) {
        if (r.failed.empty()) r.failed = "cannot write " + r.path + ": " + std::strerror(errno);
        std::fclose(r.file), r.file = nullptr;
    }
}

// The buffered records formatted into the file.
void format_all(const std::vector<Line>& lines, const std::vector<uint64_t>& arena) {
    Text t;
    t.s.reserve(lines.size() * 96 + arena.size() * 8);
    for (const Line& l : lines) {
        format(t, l, arena);
        if (l.what == What::call) ++g_rec->written_calls;
    }
    write_text(t.s);
}

// The buffers are full while the program runs: they go as they are (a few hundred microseconds of copying per
// 8,192 calls) to DIR/collplan.<rank>.prof.spill, formatted only at MPI_Finalize -- formatting them now would cost
// every call about 0.1 us (bench/README.md, "Drop-in overhead"). The buffer and the arena are empty after.
void spill() {
    Recorder& r = *g_rec;
    if (!r.spill && r.file) {
        r.spill = std::fopen(r.spill_path.c_str(), "w+b");
        if (!r.spill && r.failed.empty()) r.failed = "cannot write " + r.spill_path + ": " + std::strerror(errno);
    }
    const uint64_t head[2] = {r.lines.size(), r.arena.size()};
    if (r.spill && (std::fwrite(head, sizeof head, 1, r.spill) != 1 ||
                    std::fwrite(r.lines.data(), sizeof(Line), r.lines.size(), r.spill) != r.lines.size() ||
                    std::fwrite(r.arena.data(), sizeof(uint64_t), r.arena.size(), r.spill) != r.arena.size())) {
        if (r.failed.empty()) r.failed = "cannot write " + r.spill_path + ": " + std::strerror(errno);
        std::fclose(r.spill), r.spill = nullptr;
    }
    r.lines.clear();
    r.arena.clear();
}

// At MPI_Finalize: the spilled records, then the buffered ones, formatted into the file.
void finish() {
    Recorder& r = *g_rec;
    if (r.spill) {
        std::rewind(r.spill);
        std::vector<Line> lines;
        std::vector<uint64_t> arena;
        for (uint64_t head[2]; std::fread(head, sizeof head, 1, r.spill) == 1;) {
            lines.resize(head[0]), arena.resize(head[1]);
            if (std::fread(lines.data(), sizeof(Line), lines.size(), r.spill) != lines.size() ||
                std::fread(arena.data(), sizeof(uint64_t), arena.size(), r.spill) != arena.size()) {
                if (r.failed.empty()) r.failed = "cannot read back " + r.spill_path;
                break;
            }
            format_all(lines, arena);
        }
        std::fclose(r.spill), r.spill = nullptr;
        std::remove(r.spill_path.c_str());
    }
    format_all(r.lines, r.arena);
    r.lines.clear();
    r.arena.clear();
}

// Room for one more record with n values (a write first where the buffers are full).
void reserve(uint64_t n) {
    Recorder& r = *g_rec;
    if (r.lines.size() >= kMaxLines || (r.arena.size() + n > kMaxValues && !r.arena.empty())) spill();
}

uint64_t put_values(const uint64_t* v, uint64_t n) {
    const uint64_t at = g_rec->arena.size();
    if (n > 0) g_rec->arena.insert(g_rec->arena.end(), v, v + n);
    return at;
}

// The operation's index in kOps (kUserOp: not predefined).
uint8_t op_index(MPI_Op op) {
    Recorder& r = *g_rec;
    if (op == r.last_op) return r.last_op_index;
    uint8_t k = kUserOp;
    for (uint8_t i = 0; i < kUserOp; ++i)
        if (kOps[i].op == op) k = i;
    r.last_op = op, r.last_op_index = k;
    return k;
}

// ------------------------------------------------------------------------------------------ communicators
int forget(MPI_Comm, int, void* key, void*) {
    if (!g_rec) return MPI_SUCCESS;
    g_rec->comms.erase(reinterpret_cast<uintptr_t>(key));
    g_rec->last_key = 0, g_rec->last = nullptr;
    return MPI_SUCCESS;
}

// The record of comm, learnt on first sight (size, rank, members' world ranks): local calls only.
CommRec& comm_rec(MPI_Comm comm) {
    Recorder& r = *g_rec;
    const uint64_t key = handle_key(comm);
    if (key == r.last_key && r.last) return *r.last;
    if (auto it = r.comms.find(key); it != r.comms.end()) return r.last_key = key, *(r.last = &it->second);
    CommRec c;
    c.id = r.next_comm++;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    c.view.inter = inter != 0;
    PMPI_Comm_size(comm, &c.view.size);
    PMPI_Comm_rank(comm, &c.view.rank);
    MPI_Group g = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    PMPI_Comm_group(comm, &g);  // (the local group of an inter-communicator)
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    std::vector<int> ranks(static_cast<size_t>(c.view.size));
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(i);
    c.world.assign(ranks.size(), MPI_UNDEFINED);
    PMPI_Group_translate_ranks(g, c.view.size, ranks.data(), world, c.world.data());
    PMPI_Group_free(&g), PMPI_Group_free(&world);
    // The attribute's delete callback forgets the record when the program frees comm (its handle may come back).
    if (r.keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_set_attr(comm, r.keyval, reinterpret_cast<void*>(static_cast<uintptr_t>(key)));
    return r.comms.emplace(key, std::move(c)).first->second;
}

void announce(CommRec& c) {
    Recorder& r = *g_rec;
    reserve(c.world.size());
    Line l;
    l.what = What::comm;
    l.comm = c.id;
    l.inter = c.view.inter;
    std::vector<uint64_t> w(c.world.begin(), c.world.end());
    l.nvalues = w.size();
    l.values_at = put_values(w.data(), w.size());
    r.lines.push_back(l);
    c.announced = true;
}

// A call line (values: l.nvalues of them), numbered, its gap from the previous one.
uint64_t append_call(Line l, const uint64_t* values) {
    Recorder& r = *g_rec;
    reserve(l.nvalues);
    l.seq = r.next_seq++;
    l.gap = l.enter - r.last_exit;
    r.last_exit = l.exit;
    l.values_at = put_values(values, l.nvalues);
    r.lines.push_back(l);
    return l.seq;
}

void done(uint64_t key, int64_t enter) {
    Recorder& r = *g_rec;
    auto it = r.pending.find(key);
    if (it == r.pending.end()) return;
    reserve(0);
    Line l;
    l.what = What::done;
    l.seq = it->second;
    l.enter = enter - g_zero;
    l.exit = profile_now() - g_zero;
    r.lines.push_back(l);
    r.pending.erase(it);
}

std::string one_line(std::string s) {
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}


}  // namespace

int64_t profile_now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void profile_init_entered() { g_init_enter = profile_now(); }

std::string profile_host() {
    char host[256] = {};
    std::string h = gethostname(host, sizeof host - 1) == 0 ? one_line(host) : "";
    for (char& c : h)
        if (c == ' ') c = '_';
    return h.empty() ? "unknown" : h;
}

void profile_open(int64_t zero_ns, const std::string& host) {
    const char* dir = std::getenv("COLLPLAN_PROFILE");
    if (!dir || !*dir) return;
    const int64_t opened = profile_now();
    g_zero = zero_ns;
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::string d = dir, path = d + "/collplan." + std::to_string(rank) + ".prof";
    if (::mkdir(dir, 0777) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "collplan: warning: COLLPLAN_PROFILE=%s: cannot create the directory (%s); rank %d records nothing\n",
                     dir, std::strerror(errno), rank);
        return;
    }
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "collplan: warning: COLLPLAN_PROFILE: cannot write %s (%s); rank %d records nothing\n",
                     path.c_str(), std::strerror(errno), rank);
        return;
    }
    g_rec = new Recorder;
    Recorder& r = *g_rec;
    r.file = f, r.path = path, r.spill_path = path + ".spill", r.rank = rank;
    r.lines.reserve(kMaxLines);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget, &r.keyval, nullptr);
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    PMPI_Get_library_version(version, &len);
    std::string v(version, static_cast<size_t>(std::max(0, std::min(len, MPI_MAX_LIBRARY_VERSION_STRING))));
    v = one_line(v.substr(0, v.find('\n')));
    Text t;
    t.put("collplan-profile 1\nrank");
    t.num(rank), t.num(size);
    t.put("\nmpi " + (v.empty() ? std::string("unknown") : v) + "\nhost " + host + "\ninit");
    t.num(g_init_enter - g_zero), t.num(opened - g_zero);
    t.put("\n");
    write_text(t.s);
    r.last_exit = opened - g_zero;
    g_profile = r.file != nullptr;
}

void profile_close() {
    if (!g_rec) return;
    MaybeLock lock(g_locking);
    Recorder& r = *g_rec;
    const int64_t fin = profile_now() - g_zero;
    g_profile = false;
    watch_requests(false);
    finish();
    Text t;
    for (const auto& [peer, mb] : r.p2p) {
        t.put("p2p");
        t.num(peer), t.num(mb.first), t.num(mb.second);
        t.put("\n");
    }
    t.put("finalize");
    t.num(fin);
    t.put("\nend");
    t.num(r.written_calls);
    t.put("\n");
    write_text(t.s);
    if (r.file) std::fclose(r.file), r.file = nullptr;
    if (!r.failed.empty()) std::fprintf(stderr, "collplan: warning: COLLPLAN_PROFILE: %s; the profile of rank %d is cut\n",
                                        r.failed.c_str(), r.rank);
    if (r.keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&r.keyval);
    r.pending.clear(), r.persistent.clear();
}

bool profile_comm(MPI_Comm comm, ProfileComm& out) {
    if (comm == MPI_COMM_NULL || !g_rec) return false;
    MaybeLock lock(g_locking);
    out = comm_rec(comm).view;
    return true;
}

void profile_record(MPI_Comm comm, ProfileCall& call, int rc, const MPI_Request* req) {
    const int64_t exit = profile_now();
    MaybeLock lock(g_locking);
    if (!g_profile) return;
    CommRec& c = comm_rec(comm);
    if (!c.announced) announce(c);
    Line l;
    l.f = call.f, l.kind = call.kind, l.comm = c.id, l.cseq = c.cseq++, l.root = call.root;
    l.bytes = call.bytes, l.type_size = call.type_size, l.contiguous = call.contiguous;
    if (describe(call.f).reduction) {
        l.op = op_index(call.op);
        int commute = 1;
        if (l.op == kUserOp && call.op != MPI_OP_NULL) PMPI_Op_commutative(call.op, &commute);
        l.commutative = static_cast<int8_t>(commute != 0);
    }
    l.enter = call.enter_ns - g_zero, l.exit = exit - g_zero;
    const std::vector<uint64_t>& v = call.values;
    l.nvalues = v.size();
    const uint64_t seq = append_call(l, v.data());
    if (rc != MPI_SUCCESS || !req || *req == MPI_REQUEST_NULL) return;
    Recorder& r = *g_rec;
    if (call.kind == kNonblocking) r.pending[handle_key(*req)] = seq;
    else if (call.kind == kPersistent) r.persistent[handle_key(*req)] = Persistent{l, v, 0};
    set_watch();
}

ProfileWatch::ProfileWatch(int n, const MPI_Request* reqs) {
    if (n <= 0 || !reqs) return;
    enter_ = profile_now();
    keys_.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) keys_[static_cast<size_t>(i)] = handle_key(reqs[i]);
}

void ProfileWatch::all() {
    if (keys_.empty()) return;
    MaybeLock lock(g_locking);
    if (!g_rec) return;
    for (uint64_t k : keys_) done(k, enter_);
    set_watch();
}

void ProfileWatch::index(int i) { some(1, &i); }

void ProfileWatch::some(int count, const int* indices) {
    if (keys_.empty() || count == MPI_UNDEFINED) return;
    MaybeLock lock(g_locking);
    if (!g_rec) return;
    const int n = static_cast<int>(keys_.size());
    for (int k = 0; k < count; ++k)
        if (indices[k] >= 0 && indices[k] < n) done(keys_[static_cast<size_t>(indices[k])], enter_);
    set_watch();
}

void profile_started(int n, const MPI_Request* reqs, int64_t enter_ns) {
    MaybeLock lock(g_locking);
    if (!g_profile) return;
    Recorder& r = *g_rec;
    const int64_t exit = profile_now();
    for (int i = 0; i < n; ++i) {
        const uint64_t key = handle_key(reqs[i]);
        auto it = r.persistent.find(key);
        if (it == r.persistent.end()) continue;
        Line l = it->second.init;
        l.start_no = ++it->second.starts;
        l.enter = enter_ns - g_zero, l.exit = exit - g_zero;
        r.pending[key] = append_call(l, it->second.values.data());
    }
    set_watch();
}

void profile_freed(const MPI_Request* req) {
    MaybeLock lock(g_locking);
    if (!g_rec || !req) return;
    g_rec->pending.erase(handle_key(*req));
    g_rec->persistent.erase(handle_key(*req));
    set_watch();
}

void profile_sent(MPI_Comm comm, int dst, int64_t count, MPI_Datatype t) {
    if (comm == MPI_COMM_NULL || dst < 0 || count < 0) return;  // MPI_PROC_NULL; erroneous calls: the library's error
    MaybeLock lock(g_locking);
    if (!g_profile) return;
    const CommRec& c = comm_rec(comm);
    if (c.view.inter || dst >= static_cast<int>(c.world.size())) return;
    int size = 0;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &size) != MPI_SUCCESS) return;
    auto& [messages, bytes] = g_rec->p2p[c.world[static_cast<size_t>(dst)]];
    ++messages;
    bytes += static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
}

}  // namespace collplan::mpi::pmpi
