// The collectives over MPI with per-communicator caches. See collectives.hpp.
#include "collplan/runtime/mpi/collectives.hpp"
#include "collplan/runtime/mpi/check.hpp"
#include "collplan/runtime/mpi/datatype.hpp"
#include "collplan/schedule/reduction.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/model.hpp"
#include "collplan/topology/families.hpp"

namespace collplan::mpi {

namespace {
constexpr int kTagWindow = Plan::kTagWindow;  // tags per run; overlapping runs get different windows
constexpr size_t kMaxPlans = 64;   // per communicator, least recently used dropped first
// Idle runs (an Execution with its staging and reduction scratch) kept for reuse: at most 4 per plan and 64 MiB
// per communicator in all. Without the byte limit, `collplan run` over every allreduce algorithm at 64 MiB kept
// each algorithm's buffers after its request was freed (a rank reached 6x the estimate of measure.case_bytes).
constexpr uint64_t kMaxIdleBytes = uint64_t{64} << 20;
}  // namespace

struct CommState {
    MPI_Comm dup = MPI_COMM_NULL;
    // Tag windows: runs started by blocking and non-blocking calls take the next of `slots` in turn (every rank
    // starts them in the same order); persistent requests pin one of the `pinned_slots` after them at their _init
    // (matched in the same order on every rank, while MPI_Start may come in any order: MPI 4.0, 6.13).
    int slots = 1, pinned_slots = 0;
    uint64_t seq = 0, pinned_seq = 0, clock = 0;
    struct Entry {
        std::shared_ptr<const Plan> plan;
        std::vector<std::unique_ptr<Execution>> idle;
        uint64_t last_use = 0;
    };
    std::vector<std::string> topologies;  // the communicator's own shape(s), tried first (pick_topology)
    // Schedules built (or refused) on this communicator, by algorithm, parameters, P and whole-or-own. Never
    // evicted, and refusals are kept too: a rank may ask again later on its own (the PMPI library's decisions are
    // cached per datatype, which may differ between ranks) and must then find the answer every rank agreed on,
    // not build and agree alone. The keys of collectives with counts (alltoallv's matrix, allgatherv's and
    // reduce_scatter's per-rank counts) hold the counts, so they are kept apart and evicted: every such call asks
    // on every rank with the same counts (gathered, or equal by MPI's rules), so every rank evicts alike.
    struct Built {
        std::shared_ptr<const Schedule> schedule;
        std::string refusal;
    };
    std::map<std::string, Built> schedules, counted_schedules;
    std::map<std::string, Entry> plans;
    std::map<std::string, std::string> measured;  // parameter=measure: the value timed fastest, by call
    uint64_t hits = 0, misses = 0;
    uint64_t idle_bytes = 0;  // held by the idle Executions of `plans`

    ~CommState() {
        plans.clear();
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin && dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
    }
    int next_tag_base() { return static_cast<int>(seq++ % static_cast<uint64_t>(slots)) * kTagWindow; }
    int next_pinned_tag_base() {
        if (pinned_slots == 0) return -1;  // a tag space too small to set windows apart: they rotate too
        return (slots + static_cast<int>(pinned_seq++ % static_cast<uint64_t>(pinned_slots))) * kTagWindow;
    }
};

namespace {

int delete_state(MPI_Comm, int, void* attr, void*) {
    delete static_cast<std::shared_ptr<CommState>*>(attr);
    return MPI_SUCCESS;
}

// The process-wide attribute key (MPI keyvals are process-global by nature; created once, never freed).
int keyval() {
    static const int kv = [] {
        int k = MPI_KEYVAL_INVALID;
        check(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &k, nullptr), "MPI_Comm_create_keyval");
        return k;
    }();
    return kv;
}

// COLLPLAN_TOPOLOGY, then the grid of a communicator made by MPI_Cart_create: a torus when every dimension is
// periodic, else a mesh (a ring or line in one dimension); sides reversed as in dims_spec.
std::vector<std::string> comm_topologies(MPI_Comm comm) {
    std::vector<std::string> out;
    if (const char* env = std::getenv("COLLPLAN_TOPOLOGY"); env && *env) out.emplace_back(env);
    int kind = MPI_UNDEFINED, nd = 0;
    if (MPI_Topo_test(comm, &kind) != MPI_SUCCESS || kind != MPI_CART || MPI_Cartdim_get(comm, &nd) != MPI_SUCCESS || nd < 1)
        return out;
    std::vector<int> dims(static_cast<size_t>(nd)), periods(static_cast<size_t>(nd)), coords(static_cast<size_t>(nd));
    check(MPI_Cart_get(comm, nd, dims.data(), periods.data(), coords.data()), "MPI_Cart_get");
    const bool torus = std::all_of(periods.begin(), periods.end(), [](int p) { return p != 0; });
    std::string spec = nd == 1 ? (torus ? "ring:" : "line:") : (torus ? "torus:" : "mesh:");
    for (int i = nd - 1; i >= 0; --i) spec += std::to_string(dims[static_cast<size_t>(i)]) + (i ? "x" : "");
    out.push_back(spec);
    return out;
}

// Waits for r, a request of the MPI library's own: with the PMPI library loaded, MPI_Wait is its interposed
// version, which advances collplan's running non-blocking schedules meanwhile -- a rank waiting here for the others
// (a new communicator, a new schedule's agreement, alltoallv's counts) must not stall a schedule another rank waits
// for in its own MPI_Wait (the cycle that hangs a program with several non-blocking collectives in flight).
void wait_progressing(MPI_Request& r, const char* what) { check(MPI_Wait(&r, MPI_STATUS_IGNORE), what); }

std::shared_ptr<CommState> state_of(MPI_Comm comm) {
    if (comm == MPI_COMM_NULL) throw Error("communicator is MPI_COMM_NULL (allowed: an intra-communicator)");
    int inter = 0;
    check(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
    if (inter) throw Error("inter-communicators are not supported (allowed: an intra-communicator)");
    void* attr = nullptr;
    int found = 0;
    check(MPI_Comm_get_attr(comm, keyval(), &attr, &found), "MPI_Comm_get_attr");
    if (found) return *static_cast<std::shared_ptr<CommState>*>(attr);
    auto st = std::make_shared<CommState>();
    MPI_Request r = MPI_REQUEST_NULL;
    check(MPI_Comm_idup(comm, &st->dup, &r), "MPI_Comm_idup");
    wait_progressing(r, "MPI_Comm_idup");
    void* ub = nullptr;
    int has = 0;
    MPI_Comm_get_attr(st->dup, MPI_TAG_UB, &ub, &has);
    const int tag_ub = has ? *static_cast<int*>(ub) : 32767;
    const int windows = static_cast<int>(std::max<int64_t>(1, (int64_t{tag_ub} + 1) / kTagWindow));  // (Open MPI: INT_MAX)
    st->pinned_slots = windows / 2;
    st->slots = windows - st->pinned_slots;
    st->topologies = comm_topologies(comm);
    check(MPI_Comm_set_attr(comm, keyval(), new std::shared_ptr<CommState>(st)), "MPI_Comm_set_attr");
    return st;
}

// MPI_Dims_create's balanced grid of P ranks in `nd` dimensions, largest side first (topology/families.hpp).
std::vector<int> mpi_balanced_grid(int P, int nd) {
    std::vector<int> dims(static_cast<size_t>(nd), 0);
    if (MPI_Dims_create(P, nd, dims.data()) != MPI_SUCCESS) return {};
    return dims;
}

// The topology the schedule is generated for, the first that the algorithm applies to of: params["topology"];
// the communicator's own (CommState::topologies: COLLPLAN_TOPOLOGY, MPI_Cart_create's grid); full:P; and the
// shapes of the algorithm's default families that the runtime tries (topology/families.hpp, balanced_family_shapes).
Topology pick_topology(const Algorithm& a, int P, std::map<std::string, std::string>& params, const Inputs& inputs,
                       const std::vector<std::string>& comm_topologies) {
    auto it = params.find("topology");
    if (it != params.end()) {
        Topology t = Topology::parse(it->second);
        params.erase(it);
        return t;
    }
    std::vector<std::string> specs = comm_topologies;
    specs.push_back("full:" + std::to_string(P));
    for (const std::string& fam : a.default_topologies)
        for (const std::string& spec : balanced_family_shapes(fam, P, mpi_balanced_grid))
            if (!spec.empty()) specs.push_back(spec);
    const Params valid = validate_params(a, params);
    std::string reasons;
    for (const std::string& spec : specs) {
        const Topology t = Topology::parse(spec);
        if (t.nodes() != P) continue;
        Problem p{a.collective, P, t, valid, inputs.counts};
        p.root = inputs.root;
        const std::string why = a.applies ? a.applies(p) : "";
        if (why.empty()) return t;
        if (reasons.find(why) == std::string::npos) reasons += (reasons.empty() ? "" : "; ") + spec + ": " + why;
    }
    throw Error(a.name + " does not apply to P=" + std::to_string(P) + " (tried " + reasons + ")");
}

const Algorithm& resolve(Collective c, const std::string& name) {
    const std::string full = name.find('/') == std::string::npos ? std::string(to_string(c)) + "/" + name : name;
    const Algorithm& a = Registry::get().find(full);
    if (a.collective != c)
        throw Error("algorithm " + a.name + " is not a " + to_string(c) + " algorithm");
    return a;
}

std::string encode(const std::vector<uint64_t>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(uint64_t));
}

// The schedule of a call, cached per communicator. Each rank builds only its own program (whole = false) unless
// the call's layout is uneven (Layout::uniform), which needs every rank's. The first request of a key is made by
// every rank in the same call (the key holds only what every rank has alike, and a rank whose own decision cache
// skips the request has made it before), so that miss agrees once, over the communicator, that every rank built its
// part within the tag window: one rank's failure is every rank's Error, never a rank-local fallback. Later
// requests, by any subset of the ranks, find the agreed answer (CommState::schedules keeps refusals too).
std::shared_ptr<const Schedule> schedule_for(CommState& st, Collective c, int P, const Choice& ch, const Inputs& inputs,
                                             bool whole) {
    const Algorithm& a = resolve(c, ch.algorithm);
    std::string key = a.name + "|" + std::to_string(P) + "|" + std::to_string(inputs.root) + (whole ? "|whole|" : "|");
    for (const auto& [k, v] : ch.params) key += k + "=" + v + ";";
    key += "|" + encode(inputs.counts);
    const bool by_counts = counts_size(c, P) > 0;
    auto& cache = by_counts ? st.counted_schedules : st.schedules;
    if (auto it = cache.find(key); it != cache.end()) {
        if (!it->second.refusal.empty()) throw Error(it->second.refusal);
        return it->second.schedule;
    }
    int me = 0;
    check(MPI_Comm_rank(st.dup, &me), "MPI_Comm_rank");
    std::shared_ptr<const Schedule> s;
    std::string failure;
    int local[2] = {0, -1};  // failed, highest tag
    try {
        s = runtime_schedule(c, P, ch, inputs, st.topologies, whole ? Schedule::kAllRanks : me);
        for (const Op& op : s->program(me).ops)  // a whole schedule: every rank checks its own part too
            if (op.kind == OpKind::send || op.kind == OpKind::recv) local[1] = std::max(local[1], op.tag());
    } catch (const std::exception& e) {  // Error, or bad_alloc on this rank alone
        failure = e.what();
        local[0] = 1;
    }
    int agreed[2] = {0, 0};
    MPI_Request r = MPI_REQUEST_NULL;
    check(PMPI_Iallreduce(local, agreed, 2, MPI_INT, MPI_MAX, st.dup, &r), "MPI_Iallreduce");  // never intercepted
    wait_progressing(r, "MPI_Iallreduce");
    std::string refusal;
    if (agreed[0]) refusal = failure.empty() ? a.name + ": building the schedule failed on another rank" : failure;
    else if (agreed[1] >= kTagWindow - 1)
        refusal = "schedule " + a.name + " uses tag " + std::to_string(agreed[1]) + " (allowed: < " + std::to_string(kTagWindow - 1) + ")";
    if (by_counts && cache.size() >= kMaxPlans) cache.clear();
    cache.emplace(key, CommState::Built{refusal.empty() ? s : nullptr, refusal});
    if (!refusal.empty()) throw Error(refusal);
    return s;
}

std::string shape_key(const CallShape& sh, Noncontig mode) {
    return std::to_string(static_cast<int>(sh.collective)) + "|" + std::to_string(sh.root) + "|" + std::to_string(sh.count) +
           "|" + std::to_string(sh.elem_bytes) + "|" + std::to_string(static_cast<int>(mode)) + "|" + encode(sh.counts) +
           "|" + encode(sh.send_displs) + "|" + encode(sh.recv_displs);
}

}  // namespace

void check_choice(Collective c, const Choice& ch) {
    auto params = ch.params;
    if (auto it = params.find("topology"); it != params.end()) Topology::parse(it->second), params.erase(it);
    validate_params(resolve(c, ch.algorithm), params);
}

std::shared_ptr<const Schedule> runtime_schedule(Collective c, int P, const Choice& ch, const Inputs& inputs,
                                                 const std::vector<std::string>& comm_topologies, int only_rank) {
    const Algorithm& a = resolve(c, ch.algorithm);
    auto params = ch.params;
    const Topology t = pick_topology(a, P, params, inputs, comm_topologies);
    return std::make_shared<const Schedule>(make_schedule(a.name, P, t, params, inputs, only_rank));
}

struct RequestFactory {
    // `shape.counts` and `shape.root` are the schedule's inputs (alltoallv: the byte matrix; allgatherv and
    // reduce_scatter: the per-rank counts).
    static std::unique_ptr<Request> make(MPI_Comm comm, Collective c, const Choice& ch, const CallShape& shape) {
        auto st = state_of(comm);
        int P = 1;
        MPI_Comm_size(st->dup, &P);
        if (describe(c).rooted && (shape.root < 0 || shape.root >= P))
            throw Error(std::string(to_string(c)) + ": root " + std::to_string(shape.root) + " (allowed: 0.." + std::to_string(P - 1) + ")");
        const Inputs inputs(shape.counts, shape.root);
        auto sched = ch.schedule ? ch.schedule : schedule_for(*st, c, P, ch, inputs, false);
        if (!sched->whole() && !Layout::uniform(*sched, shape)) sched = schedule_for(*st, c, P, ch, inputs, true);
        if (sched->collective() != c || sched->ranks() != P)
            throw Error("schedule " + sched->algorithm + " is a " + to_string(sched->collective()) + " for " +
                        std::to_string(sched->ranks()) + " ranks, not a " + to_string(c) + " for " + std::to_string(P));
        if (describe(c).rooted && sched->root != shape.root)
            throw Error("schedule " + sched->algorithm + " is for root " + std::to_string(sched->root) + ", not " +
                        std::to_string(shape.root));
        std::unique_ptr<Request> r(new Request());
        r->state_ = st;
        r->key_ = sched->algorithm + "|" + sched->params + "|" + sched->topology + "|" + std::to_string(reinterpret_cast<uintptr_t>(sched.get())) + "|" + shape_key(shape, ch.mode);
        auto it = st->plans.find(r->key_);
        r->cached_ = it != st->plans.end();
        if (!r->cached_) {
            ++st->misses;
            if (st->plans.size() >= kMaxPlans) {
                auto lru = std::min_element(st->plans.begin(), st->plans.end(), [](const auto& x, const auto& y) {
                    return x.second.last_use < y.second.last_use;
                });
                for (const auto& e : lru->second.idle) st->idle_bytes -= e->held_bytes();
                st->plans.erase(lru);
            }
            it = st->plans.emplace(r->key_, CommState::Entry{std::make_shared<const Plan>(st->dup, sched, shape, ch.mode), {}, 0}).first;
        } else {
            ++st->hits;
        }
        it->second.last_use = ++st->clock;
        r->plan_ = it->second.plan;
        if (!it->second.idle.empty()) {
            r->exec_ = std::move(it->second.idle.back());
            it->second.idle.pop_back();
            st->idle_bytes -= r->exec_->held_bytes();
        } else {
            r->exec_ = std::make_unique<Execution>(r->plan_);
        }
        return r;
    }

    static void set_reduction(Request& r, MPI_Datatype type, MPI_Op op, int64_t lb) {
        r.args_.datatype = type;
        r.args_.op = op;
        r.args_.lb = lb;
    }

    static void set_input(Request& r, const void* send, void* recv, uint64_t in_place_offset) {
        r.in_place_offset_ = in_place_offset;
        r.bind(send, recv);
    }
};

Request::~Request() {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!exec_ || fin) return;
    try {
        if (exec_->active()) exec_->wait();
        auto it = state_->plans.find(key_);
        const uint64_t held = exec_->held_bytes();
        if (it != state_->plans.end() && it->second.plan == plan_ && it->second.idle.size() < 4 &&
            state_->idle_bytes + held <= kMaxIdleBytes) {
            it->second.idle.push_back(std::move(exec_));
            state_->idle_bytes += held;
        }
    } catch (...) {  // destructors do not throw; an abandoned run is cancelled by ~Execution
    }
}

void Request::prepare() {
    if (stage_in_ && !staged_in_.empty())
        std::memcpy(staged_in_.data(), static_cast<const char*>(user_in_) + in_offset_, staged_in_.size());
    args_.tag_base = pinned_tag_base_ >= 0 ? pinned_tag_base_ : state_->next_tag_base();
}

void Request::pin_tags() {
    if (active()) throw Error("collplan request pinned to a tag window while it runs");
    pinned_tag_base_ = state_->next_pinned_tag_base();
}

void Request::unpin_tags() { pinned_tag_base_ = -1; }

void Request::start() {
    prepare();
    exec_->start(args_);
}

void Request::run() {
    prepare();
    exec_->run(args_);
}

// Input staging: in place (MPI_IN_PLACE or send == recv, where the collective allows it), or when the schedule
// writes its input. Scatter's root in place: the output goes to a scratch (the root's block stays in send).
void Request::bind(const void* send, void* recv) {
    if (active()) throw Error("collplan request rebound while it runs (wait or test it first)");
    const Schedule& s = plan_->schedule();
    const InPlace rule = describe(s.collective()).in_place;
    const bool root = plan_->rank() == s.root;
    const bool send_in_place = (rule == InPlace::send_everywhere || (rule == InPlace::send_at_root && root)) &&
                               (send == MPI_IN_PLACE || send == recv);
    const bool recv_in_place = rule == InPlace::recv_at_root && root && recv == MPI_IN_PLACE;
    stage_in_ = send_in_place || plan_->writes_input();
    user_in_ = send_in_place ? recv : send;
    in_offset_ = send_in_place ? in_place_offset_ : 0;
    if (recv_in_place) scratch_out_.resize(plan_->layout().out_extent());
    args_.out = recv_in_place ? scratch_out_.data() : recv;
    if (stage_in_) staged_in_.resize(plan_->layout().in_extent());
    args_.in = stage_in_ ? staged_in_.data() : send;
}

bool Request::test() { return exec_->test(); }
void Request::wait() { exec_->wait(); }

// ------------------------------------------------------------------------------------------------ collectives
namespace {

int comm_size(MPI_Comm comm) {
    int P = 1;
    check(MPI_Comm_size(comm, &P), "MPI_Comm_size");
    return P;
}

uint64_t comm_rank(MPI_Comm comm) {
    int r = 0;
    check(MPI_Comm_rank(comm, &r), "MPI_Comm_rank");
    return static_cast<uint64_t>(r);
}

using MakeRequest = std::function<std::unique_ptr<Request>(const Choice&)>;

// Seconds of one run of `r` on zero-filled buffers of the call's size (the slowest rank's mean of kRuns runs after
// a warm-up), the same on every rank.
double time_request(Request& r, MPI_Comm dup) {
    constexpr int kRuns = 5;
    std::vector<char> in(r.plan().layout().in_extent()), out(r.plan().layout().out_extent());
    r.bind(in.empty() ? nullptr : in.data(), out.empty() ? nullptr : out.data());
    r.run();
    check(PMPI_Barrier(dup), "MPI_Barrier");
    const double t0 = MPI_Wtime();
    for (int k = 0; k < kRuns; ++k) r.run();
    const double mine = (MPI_Wtime() - t0) / kRuns;
    double worst = 0;
    check(PMPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, dup), "MPI_Allreduce");
    return worst;
}

// A parameter given as "measure" (n=measure: End et al. time n = 1..7 at the first call and keep the fastest): the
// first call of this shape on the communicator times every candidate value the algorithm lists for it
// (Algorithm::candidates) with the call's size, and keeps the fastest (ties: the first listed). Every rank takes
// part and every rank compares the same numbers (each candidate's slowest rank), so all choose the same value; it is
// cached per communicator, algorithm, parameters and call shape (`what`: the reduction), so later calls find it.
Choice measured_choice(Collective c, const Choice& ch, const CallShape& sh, MPI_Comm comm, const std::string& what,
                       const MakeRequest& make) {
    std::string param;
    for (const auto& [k, v] : ch.params)
        if (v == "measure") {
            if (!param.empty()) throw Error("parameters " + param + " and " + k + " are both 'measure' (allowed: one)");
            param = k;
        }
    if (param.empty() || ch.schedule) return ch;
    auto st = state_of(comm);
    std::string key = ch.algorithm + "|" + what + "|" + shape_key(sh, ch.mode) + "|";
    for (const auto& [k, v] : ch.params) key += k + "=" + v + ";";
    Choice out = ch;
    if (auto it = st->measured.find(key); it != st->measured.end()) return out.params[param] = it->second, out;
    const Algorithm& a = resolve(c, ch.algorithm);
    const int P = comm_size(st->dup);
    const Topology full = Topology::full(P);
    const auto model = parse_model("hockney:alpha=1us,beta=1ns/B");  // only for candidate lists that need one
    const double bytes = static_cast<double>(sh.count) * sh.elem_bytes;
    std::vector<std::string> values;
    for (const ParamSet& ps : candidate_params(a, CandidateQuery{P, full, *model, bytes, bytes}))
        if (auto it = ps.find(param); it != ps.end() && std::find(values.begin(), values.end(), it->second) == values.end())
            values.push_back(it->second);
    double best = std::numeric_limits<double>::infinity();
    for (const std::string& v : values) {
        out.params[param] = v;
        std::unique_ptr<Request> r;
        int ok = 1, all = 0;
        try {
            r = make(out);
        } catch (const Error&) {  // this value does not apply (the refusal is the same on every rank)
            ok = 0;
        }
        check(PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, st->dup), "MPI_Allreduce");
        if (!all) continue;
        const double t = time_request(*r, st->dup);
        if (t < best) best = t, st->measured[key] = v;
    }
    if (!st->measured.count(key))
        throw Error(a.name + ": " + param + "=measure found no candidate value to time (allowed: a value of " + param +
                    ", or measure where the algorithm lists candidates that apply to P=" + std::to_string(P) + ")");
    return out.params[param] = st->measured[key], out;
}

// A collective of bytes: `count` bytes per unit, no reduction.
std::unique_ptr<Request> bytes_request(Collective c, const void* send, void* recv, CallShape sh, MPI_Comm comm,
                                       const Choice& ch, uint64_t in_place_offset) {
    sh.collective = c;
    const MakeRequest make = [&](const Choice& x) { return RequestFactory::make(comm, c, x, sh); };
    auto r = make(measured_choice(c, ch, sh, comm, "", make));
    RequestFactory::set_input(*r, send, recv, in_place_offset);
    return r;
}

// Throws Error unless c is one of the collectives without counts that are (`reduction`) or are not reductions:
// the collectives bytes_init (or reduction_init) serves.
void check_shape(Collective c, bool reduction, const char* entry) {
    auto fits = [&](Collective x) { return describe(x).reduction == reduction && describe(x).counts == Counts::none; };
    if (fits(c)) return;
    std::string allowed;
    for (Collective x : kCollectives)
        if (fits(x)) allowed += (allowed.empty() ? "" : ", ") + std::string(describe(x).name);
    throw Error(std::string(entry) + ": collective '" + to_string(c) + "' (allowed: " + allowed + ")");
}

// P counts, the same on every rank by MPI's rules; `what` names them in the error.
std::vector<uint64_t> per_rank(const uint64_t* v, int P, const char* what) {
    if (v == nullptr && P > 0) throw Error(std::string(what) + " is null (allowed: one entry per rank, " + std::to_string(P) + ")");
    return std::vector<uint64_t>(v, v + P);
}

}  // namespace

std::unique_ptr<Request> bytes_init(Collective c, const void* send, void* recv, uint64_t bytes, int root,
                                    MPI_Comm comm, const Choice& ch) {
    check_shape(c, false, "bytes_init");
    const auto st = state_of(comm);  // (refuses MPI_COMM_NULL and inter-communicators)
    const int P = comm_size(st->dup);
    const uint64_t me = comm_rank(st->dup);
    CallShape sh;
    sh.count = bytes;
    sh.root = describe(c).rooted ? root : 0;
    // In place, the input is this rank's block of the output where the output is every rank's input (allgather;
    // gather at the root), else the output's start (alltoall).
    const CollShape one{P, sh.root, 1};
    const uint64_t in = buffer_blocks(c, one, static_cast<int>(me), Buf::in);
    const uint64_t out = buffer_blocks(c, one, static_cast<int>(me), Buf::out);
    return bytes_request(c, send, recv, sh, comm, ch, in > 0 && out == static_cast<uint64_t>(P) * in ? me * bytes : 0);
}

std::unique_ptr<Request> allgatherv_init(const void* send, void* recv, const uint64_t* recv_bytes,
                                         const uint64_t* recv_displs, MPI_Comm comm, const Choice& c) {
    const int P = comm_size(comm);
    CallShape sh;
    sh.counts = per_rank(recv_bytes, P, "allgatherv: recvcounts");
    sh.recv_displs = per_rank(recv_displs, P, "allgatherv: displs");
    const uint64_t in_place_offset = sh.recv_displs.empty() ? 0 : sh.recv_displs[comm_rank(comm)];
    return bytes_request(Collective::allgatherv, send, recv, sh, comm, c, in_place_offset);
}

std::unique_ptr<Request> alltoallv_init(const void* send, const uint64_t* send_bytes, const uint64_t* send_displs,
                                        void* recv, const uint64_t* recv_bytes, const uint64_t* recv_displs,
                                        MPI_Comm comm, const Choice& c) {
    auto st = state_of(comm);
    const int P = comm_size(st->dup);
    const bool in_place = send == MPI_IN_PLACE;
    const uint64_t* sb = in_place ? recv_bytes : send_bytes;
    CallShape sh;
    sh.counts.resize(static_cast<size_t>(P) * P);
    std::vector<uint64_t> row(sb, sb + P);
    MPI_Request r = MPI_REQUEST_NULL;
    check(PMPI_Iallgather(row.data(), P, MPI_UINT64_T, sh.counts.data(), P, MPI_UINT64_T, st->dup, &r), "MPI_Iallgather");
    wait_progressing(r, "MPI_Iallgather");
    int me = 0;
    MPI_Comm_rank(st->dup, &me);
    for (int i = 0; i < P; ++i)
        if (sh.counts[static_cast<size_t>(i) * P + me] != recv_bytes[i])
            throw Error("alltoallv: rank " + std::to_string(i) + " sends " + std::to_string(sh.counts[size_t(i) * P + me]) +
                        " bytes to rank " + std::to_string(me) + ", which expects " + std::to_string(recv_bytes[i]));
    sh.send_displs.assign(in_place ? recv_displs : send_displs, (in_place ? recv_displs : send_displs) + P);
    sh.recv_displs.assign(recv_displs, recv_displs + P);
    return bytes_request(Collective::alltoallv, send, recv, sh, comm, c, 0);
}

std::string reduction_unsupported(const Schedule& s, MPI_Datatype type, MPI_Op op) {
    const std::string name = op_name(op);
    if (name == "replace" || name == "no_op") return "MPI_" + std::string(name == "replace" ? "REPLACE" : "NO_OP") + " is for one-sided communication only";
    const ReductionOp& r = reduction_op(name);
    if (s.needs_commutative && !r.commutative) return s.algorithm + " needs a commutative operation";
    if (s.needs_inverse && !(r.invertible && integer_bytes(type) > 0))
        return s.algorithm + " " + s.params + " takes contributions back out (allowed: MPI_SUM, MPI_BXOR on integer types)";
    if (s.idempotent_only && !r.idempotent) return s.algorithm + " needs an idempotent operation (max, min, band, bor, land, lor, maxloc, minloc)";
    if (!s.rank_consistent && !exact_reduction(type, op))
        return s.algorithm + (s.params.empty() ? "" : " " + s.params) +
               " is not rank-consistent, so ranks could get different bits (allowed here: a predefined operation on an integer type)";
    return "";
}

namespace {

// The choice with the algorithm's rank-consistent variant (Algorithm::rank_consistent_params; parameters the
// caller set win). That variant is exact for every operation, so it serves both a reduction that needs
// rank-consistency (not exact, datatype.hpp) and one the caller's schedule cannot do (e.g. an inverse it lacks).
Choice variant_choice(Collective c, const Choice& ch) {
    Choice out = ch;
    if (ch.schedule) return out;
    for (const auto& [k, v] : resolve(c, ch.algorithm).rank_consistent_params) out.params.try_emplace(k, v);
    return out;
}

// A reduction of elements of `type` (sh.count or sh.counts in elements), reduced with `op` by MPI_Reduce_local.
std::unique_ptr<Request> reduction_request(Collective c, const void* send, void* recv, CallShape sh, MPI_Datatype type,
                                           MPI_Op op, MPI_Comm comm, const Choice& ch) {
    const TypeInfo t = type_info(type);
    if (t.extent <= 0 || t.true_lb < t.lb || t.true_lb + t.true_extent > t.lb + t.extent)
        throw Error(std::string(to_string(c)) + ": datatype with extent " + std::to_string(t.lb) + ".." +
                    std::to_string(t.lb + t.extent) + " and data at " + std::to_string(t.true_lb) + ".." +
                    std::to_string(t.true_lb + t.true_extent) + " (allowed: a positive extent that holds the data)");
    sh.collective = c;
    sh.elem_bytes = static_cast<uint32_t>(t.extent);
    const bool exact = exact_reduction(type, op);
    const MakeRequest make = [&](const Choice& x) {
        const Choice variant = variant_choice(c, x);
        auto r = RequestFactory::make(comm, c, exact ? x : variant, sh);
        std::string why = reduction_unsupported(r->plan().schedule(), type, op);
        if (!why.empty() && variant.params != x.params && exact) {
            r = RequestFactory::make(comm, c, variant, sh);
            why = reduction_unsupported(r->plan().schedule(), type, op);
        }
        if (!why.empty()) throw Error(std::string(to_string(c)) + ": " + why);
        RequestFactory::set_reduction(*r, type, op, t.lb);
        return r;
    };
    auto r = make(measured_choice(c, ch, sh, comm, op_name(op) + "|" + std::to_string(t.size), make));
    RequestFactory::set_input(*r, send, recv, 0);
    return r;
}

}  // namespace

std::unique_ptr<Request> reduction_init(Collective c, const void* send, void* recv, uint64_t count, MPI_Datatype type,
                                        MPI_Op op, int root, MPI_Comm comm, const Choice& ch) {
    check_shape(c, true, "reduction_init");
    CallShape sh;
    sh.count = count;
    sh.root = describe(c).rooted ? root : 0;
    return reduction_request(c, send, recv, sh, type, op, comm, ch);
}

std::unique_ptr<Request> reduce_scatter_init(const void* send, void* recv, const uint64_t* counts, MPI_Datatype type,
                                             MPI_Op op, MPI_Comm comm, const Choice& c) {
    const int P = comm_size(comm);
    CallShape sh;
    sh.counts = per_rank(counts, P, "reduce_scatter: recvcounts");
    MPI_Aint lb = 0, extent = 0;
    check(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
    uint64_t off = 0;
    for (uint64_t n : sh.counts) sh.send_displs.push_back(off), off += n * static_cast<uint64_t>(std::max<MPI_Aint>(extent, 0));
    return reduction_request(Collective::reduce_scatter, send, recv, sh, type, op, comm, c);
}

std::unique_ptr<Request> barrier_init(MPI_Comm comm, const Choice& c) {
    return bytes_request(Collective::barrier, nullptr, nullptr, CallShape{}, comm, c, 0);
}

CacheStats cache_stats(MPI_Comm comm) {
    auto st = state_of(comm);
    return {st->schedules.size() + st->counted_schedules.size(), st->plans.size(), st->hits, st->misses};
}

}  // namespace collplan::mpi
