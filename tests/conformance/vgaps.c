/* Conformance of the v-collectives into buffers with gaps, blocking, non-blocking and persistent
 * (tests/conformance/README.md): an ordinary MPI program, nothing but MPI. The blocks of MPI_Allgatherv and
 * MPI_Alltoallv lie at displacements whose stride is larger than their counts, or out of rank order: the gaps
 * between them (and the guards around each buffer) must stay untouched, and no block may be packed or unpacked with
 * another's count or displacement. Every int of every receive buffer is checked against a serial computation; send
 * buffers must stay unchanged. <mode> is one of
 *   blocking  MPI_Allgatherv / MPI_Alltoallv / MPI_Reduce_scatter
 *   nb        MPI_Iallgatherv / MPI_Ialltoallv / MPI_Ireduce_scatter + MPI_Wait
 *   pers      MPI_Allgatherv_init / MPI_Alltoallv_init / MPI_Reduce_scatter_init, started 3 times with new data
 *             (in place: the input placed anew before each MPI_Start), then MPI_Request_free (HAVE_PERSISTENT)
 * Cases, on MPI_COMM_WORLD, an MPI_Comm_dup, the odd/even MPI_Comm_split and the reversed-key split (<comm>):
 *   agv/<mode>/<layout>/<type>[/in-place]/<comm>   allgatherv; type int (MPI_INT) or contig2
 *                     (MPI_Type_contiguous(2, MPI_INT): counts and displacements in elements of 2 ints); layouts:
 *                       stride     displs 0, P, 2P, ... (stride P elements), counts 1 + j % (P - 1) < P (P = 1: 1)
 *                                  -- the reported MPI_Iallgatherv failure (P = 3: displs 0, 3, 6, counts 1, 2, 1)
 *                       stride0    the same displacements, counts j % P (rank 0 sends nothing)
 *                       permuted   rank j's block in slot (P - j) % P of 4 elements + a leading gap of 1: out of rank
 *                                  order; counts (j % 3) + 1
 *                     in place: MPI_IN_PLACE, the rank's own block placed at its displacement before the call
 *   a2av/<mode>/<layout>[/in-place]/<comm>   alltoallv of MPI_INT, rank i sends 1 + (i + 2 j) % 3 ints to rank j
 *                     (in place: 1 + (i + j) % 3, symmetric as MPI_IN_PLACE requires, and sendcounts/sdispls NULL);
 *                     send and receive blocks at displacements with gaps:
 *                       stride     block j at 4 j (stride 4, counts <= 3)
 *                       permuted   block j at 4 ((P - j) % P) + 1 (out of rank order, a gap before each)
 *   rs/<mode>/<counts>[/in-place]/<comm>   reduce_scatter of MPI_INT with MPI_SUM, uneven receive counts:
 *                       uneven     (j * 7 + 3) % 5 (zero for some ranks)
 *                       one        only rank P - 1 receives (5 ints)
 *                     each rank's part against the serial sum; the receive buffer beyond it untouched (not in place)
 */
#include "conformance.h"

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_PERSISTENT 1
#else
#define HAVE_PERSISTENT 0
#endif

enum { MODE_BLOCKING, MODE_NB, MODE_PERS };
static const char *mode_name[] = {"blocking", "nb", "pers"};

static int val(int src, int dst, long x, int round) { return 1 + src * 100003 + dst * 1009 + (int)x + round * 7919; }

/* Starts (nb, pers) or runs (blocking) one call; for pers only in round 0, MPI_Start after. Completes it. */
typedef int (*call_fn)(void *ctx, MPI_Comm comm, int mode, MPI_Request *req);

static void run_rounds(MPI_Comm comm, int mode, void *ctx, call_fn call, void (*fill)(void *, int),
                       void (*check)(void *)) {
    MPI_Request req = MPI_REQUEST_NULL;
    const int rounds = mode == MODE_PERS ? 3 : 1;
    for (int round = 0; round < rounds; round++) {
        fill(ctx, round);
        if (mode != MODE_PERS || round == 0) cf_check_rc("call", call(ctx, comm, mode, &req));
        if (mode == MODE_PERS) cf_check_rc("MPI_Start", MPI_Start(&req));
        if (mode != MODE_BLOCKING) cf_check_rc("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
        check(ctx);
    }
    if (mode == MODE_PERS) cf_check_rc("MPI_Request_free", MPI_Request_free(&req));
}

/* ---- allgatherv ------------------------------------------------------------------------------------------- */
enum { L_STRIDE, L_STRIDE0, L_PERMUTED };
static const char *layout_name[] = {"stride", "stride0", "permuted"};

typedef struct {
    int P, me, layout, elem, in_place;  /* elem: ints per element (1: MPI_INT, 2: contig2) */
    MPI_Datatype type;
    int *counts, *displs;
    long rlen;                          /* receive buffer, elements */
    cf_buf s, d, want, s0;
} agv;

static void agv_fill(void *ctx, int round) {
    agv *a = ctx;
    const int e = a->elem;
    int *sp = cf_buf_ptr(&a->s), *dp = cf_buf_ptr(&a->d), *wp = cf_buf_ptr(&a->want);
    for (long i = 0; i < a->d.len; i++) a->d.mem[i] = a->want.mem[i] = CF_SENTINEL;
    for (long i = 0; i < a->s.len; i++) a->s.mem[i] = CF_SENTINEL;
    for (long x = 0; x < (long)a->counts[a->me] * e; x++) sp[x] = val(a->me, 0, x, round);
    for (int j = 0; j < a->P; j++)
        for (long x = 0; x < (long)a->counts[j] * e; x++) wp[(long)a->displs[j] * e + x] = val(j, 0, x, round);
    if (a->in_place)
        for (long x = 0; x < (long)a->counts[a->me] * e; x++)
            dp[(long)a->displs[a->me] * e + x] = val(a->me, 0, x, round);
    memcpy(a->s0.mem, a->s.mem, sizeof(int) * a->s.len);
}

static int agv_call(void *ctx, MPI_Comm comm, int mode, MPI_Request *req) {
    agv *a = ctx;
    const void *s = a->in_place ? MPI_IN_PLACE : (const void *)cf_buf_ptr(&a->s);
    void *d = cf_buf_ptr(&a->d);
    const int sc = a->in_place ? 0 : a->counts[a->me];
    switch (mode) {
    case MODE_BLOCKING: return MPI_Allgatherv(s, sc, a->type, d, a->counts, a->displs, a->type, comm);
    case MODE_NB: return MPI_Iallgatherv(s, sc, a->type, d, a->counts, a->displs, a->type, comm, req);
#if HAVE_PERSISTENT
    default: return MPI_Allgatherv_init(s, sc, a->type, d, a->counts, a->displs, a->type, comm, MPI_INFO_NULL, req);
#else
    default: return MPI_ERR_OTHER;
#endif
    }
}

static void agv_check(void *ctx) {
    agv *a = ctx;
    cf_check_buf(&a->d, &a->want);
    cf_check_buf(&a->s, &a->s0);
}

static void agv_case(MPI_Comm comm, const char *cn, int mode, int layout, MPI_Datatype type, int in_place) {
    const int elem = type == MPI_INT ? 1 : 2;
    if (!cf_case("agv/%s/%s/%s%s/%s", mode_name[mode], layout_name[layout], elem == 1 ? "int" : "contig2",
                 in_place ? "/in-place" : "", cn))
        return;
    agv a;
    memset(&a, 0, sizeof a);
    MPI_Comm_size(comm, &a.P);
    MPI_Comm_rank(comm, &a.me);
    const int P = a.P;
    a.layout = layout, a.elem = elem, a.in_place = in_place, a.type = type;
    a.counts = malloc(sizeof(int) * P), a.displs = malloc(sizeof(int) * P);
    for (int j = 0; j < P; j++) {
        switch (layout) {
        case L_STRIDE: a.counts[j] = P == 1 ? 1 : 1 + j % (P - 1), a.displs[j] = j * P; break;
        case L_STRIDE0: a.counts[j] = j % P, a.displs[j] = j * P; break;
        default: a.counts[j] = j % 3 + 1, a.displs[j] = ((P - j) % P) * 4 + 1; break;
        }
    }
    a.rlen = layout == L_PERMUTED ? 4L * P + 1 : (long)P * P;
    a.s = cf_buf_new((long)(P + 3) * elem), a.s0 = cf_buf_new((long)(P + 3) * elem);
    a.d = cf_buf_new(a.rlen * elem), a.want = cf_buf_new(a.rlen * elem);
    run_rounds(comm, mode, &a, agv_call, agv_fill, agv_check);
    cf_buf_free(&a.s), cf_buf_free(&a.s0), cf_buf_free(&a.d), cf_buf_free(&a.want);
    free(a.counts), free(a.displs);
}

/* ---- alltoallv -------------------------------------------------------------------------------------------- */
typedef struct {
    int P, me, layout, in_place;
    int *sc, *sd, *rc, *rd;
    cf_buf s, d, want, s0;
} a2av;

static int a2av_count(int i, int j, int in_place) { return 1 + (in_place ? i + j : i + 2 * j) % 3; }
static int a2av_displ(int j, int P, int layout) { return layout == L_STRIDE ? 4 * j : 4 * ((P - j) % P) + 1; }

static void a2av_fill(void *ctx, int round) {
    a2av *a = ctx;
    int *sp = cf_buf_ptr(&a->s), *dp = cf_buf_ptr(&a->d), *wp = cf_buf_ptr(&a->want);
    for (long i = 0; i < a->d.len; i++) a->d.mem[i] = a->want.mem[i] = CF_SENTINEL;
    for (long i = 0; i < a->s.len; i++) a->s.mem[i] = CF_SENTINEL;
    for (int j = 0; j < a->P; j++) {
        for (int x = 0; x < a->rc[j]; x++) wp[a->rd[j] + x] = val(j, a->me, x, round);
        if (a->in_place)  /* what I send to j, in j's receive block */
            for (int x = 0; x < a->rc[j]; x++) dp[a->rd[j] + x] = val(a->me, j, x, round);
        else
            for (int x = 0; x < a->sc[j]; x++) sp[a->sd[j] + x] = val(a->me, j, x, round);
    }
    memcpy(a->s0.mem, a->s.mem, sizeof(int) * a->s.len);
}

static int a2av_call(void *ctx, MPI_Comm comm, int mode, MPI_Request *req) {
    a2av *a = ctx;
    const void *s = a->in_place ? MPI_IN_PLACE : (const void *)cf_buf_ptr(&a->s);
    const int *sc = a->in_place ? NULL : a->sc, *sd = a->in_place ? NULL : a->sd;  /* ignored in place */
    void *d = cf_buf_ptr(&a->d);
    switch (mode) {
    case MODE_BLOCKING: return MPI_Alltoallv(s, sc, sd, MPI_INT, d, a->rc, a->rd, MPI_INT, comm);
    case MODE_NB: return MPI_Ialltoallv(s, sc, sd, MPI_INT, d, a->rc, a->rd, MPI_INT, comm, req);
#if HAVE_PERSISTENT
    default: return MPI_Alltoallv_init(s, sc, sd, MPI_INT, d, a->rc, a->rd, MPI_INT, comm, MPI_INFO_NULL, req);
#else
    default: return MPI_ERR_OTHER;
#endif
    }
}

static void a2av_check(void *ctx) {
    a2av *a = ctx;
    cf_check_buf(&a->d, &a->want);
    cf_check_buf(&a->s, &a->s0);
}

static void a2av_case(MPI_Comm comm, const char *cn, int mode, int layout, int in_place) {
    if (!cf_case("a2av/%s/%s%s/%s", mode_name[mode], layout_name[layout], in_place ? "/in-place" : "", cn)) return;
    a2av a;
    memset(&a, 0, sizeof a);
    MPI_Comm_size(comm, &a.P);
    MPI_Comm_rank(comm, &a.me);
    const int P = a.P;
    a.layout = layout, a.in_place = in_place;
    a.sc = malloc(sizeof(int) * P), a.sd = malloc(sizeof(int) * P), a.rc = malloc(sizeof(int) * P);
    a.rd = malloc(sizeof(int) * P);
    for (int j = 0; j < P; j++) {
        a.sc[j] = a2av_count(a.me, j, in_place), a.rc[j] = a2av_count(j, a.me, in_place);
        a.sd[j] = a.rd[j] = a2av_displ(j, P, layout);
    }
    a.s = cf_buf_new(4L * P + 1), a.s0 = cf_buf_new(4L * P + 1);
    a.d = cf_buf_new(4L * P + 1), a.want = cf_buf_new(4L * P + 1);
    run_rounds(comm, mode, &a, a2av_call, a2av_fill, a2av_check);
    cf_buf_free(&a.s), cf_buf_free(&a.s0), cf_buf_free(&a.d), cf_buf_free(&a.want);
    free(a.sc), free(a.sd), free(a.rc), free(a.rd);
}

/* ---- reduce_scatter --------------------------------------------------------------------------------------- */
enum { C_UNEVEN, C_ONE };
static const char *counts_name[] = {"uneven", "one"};

typedef struct {
    int P, me, in_place;
    int *rc;
    long total, first;  /* ints of the whole vector; where mine starts */
    cf_buf s, d, want, s0;
} rs;

static void rs_fill(void *ctx, int round) {
    rs *a = ctx;
    int *sp = cf_buf_ptr(&a->s), *dp = cf_buf_ptr(&a->d), *wp = cf_buf_ptr(&a->want);
    for (long i = 0; i < a->d.len; i++) a->d.mem[i] = a->want.mem[i] = CF_SENTINEL;
    for (long i = 0; i < a->s.len; i++) a->s.mem[i] = CF_SENTINEL;
    for (long x = 0; x < a->total; x++) (a->in_place ? dp : sp)[x] = val(a->me, 0, x, round);
    if (a->in_place)  /* beyond my part the buffer held input: whatever it holds after is allowed */
        for (long x = 0; x < a->total; x++) wp[x] = dp[x];
    for (long x = 0; x < a->rc[a->me]; x++) {
        long long w = 0;
        for (int q = 0; q < a->P; q++) w += val(q, 0, a->first + x, round);
        wp[x] = (int)w;
    }
    memcpy(a->s0.mem, a->s.mem, sizeof(int) * a->s.len);
}

static int rs_call(void *ctx, MPI_Comm comm, int mode, MPI_Request *req) {
    rs *a = ctx;
    const void *s = a->in_place ? MPI_IN_PLACE : (const void *)cf_buf_ptr(&a->s);
    void *d = cf_buf_ptr(&a->d);
    switch (mode) {
    case MODE_BLOCKING: return MPI_Reduce_scatter(s, d, a->rc, MPI_INT, MPI_SUM, comm);
    case MODE_NB: return MPI_Ireduce_scatter(s, d, a->rc, MPI_INT, MPI_SUM, comm, req);
#if HAVE_PERSISTENT
    default: return MPI_Reduce_scatter_init(s, d, a->rc, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, req);
#else
    default: return MPI_ERR_OTHER;
#endif
    }
}

static void rs_check(void *ctx) {
    rs *a = ctx;
    int *dp = cf_buf_ptr(&a->d), *wp = cf_buf_ptr(&a->want);
    if (a->in_place) /* my part only (and the guards) */
        for (long x = a->rc[a->me]; x < a->total; x++) wp[x] = dp[x];
    cf_check_buf(&a->d, &a->want);
    cf_check_buf(&a->s, &a->s0);
}

static void rs_case(MPI_Comm comm, const char *cn, int mode, int counts, int in_place) {
    if (!cf_case("rs/%s/%s%s/%s", mode_name[mode], counts_name[counts], in_place ? "/in-place" : "", cn)) return;
    rs a;
    memset(&a, 0, sizeof a);
    MPI_Comm_size(comm, &a.P);
    MPI_Comm_rank(comm, &a.me);
    const int P = a.P;
    a.in_place = in_place;
    a.rc = malloc(sizeof(int) * P);
    for (int j = 0; j < P; j++) {
        a.rc[j] = counts == C_UNEVEN ? (j * 7 + 3) % 5 : j == P - 1 ? 5 : 0;
        if (j < a.me) a.first += a.rc[j];
        a.total += a.rc[j];
    }
    a.s = cf_buf_new(a.total), a.s0 = cf_buf_new(a.total), a.d = cf_buf_new(a.total), a.want = cf_buf_new(a.total);
    run_rounds(comm, mode, &a, rs_call, rs_fill, rs_check);
    cf_buf_free(&a.s), cf_buf_free(&a.s0), cf_buf_free(&a.d), cf_buf_free(&a.want);
    free(a.rc);
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "vgaps");
    MPI_Datatype contig2;
    MPI_Type_contiguous(2, MPI_INT, &contig2);
    MPI_Type_commit(&contig2);
    for (int cmk = CF_WORLD; cmk <= CF_SPLIT_REVERSED; cmk++) {
        MPI_Comm comm = cf_comm(cmk);
        const char *cn = cf_comm_names[cmk];
        for (int mode = MODE_BLOCKING; mode <= (HAVE_PERSISTENT ? MODE_PERS : MODE_NB); mode++) {
            for (int layout = L_STRIDE; layout <= L_PERMUTED; layout++)
                for (int ip = 0; ip < 2; ip++) {
                    agv_case(comm, cn, mode, layout, MPI_INT, ip);
                    agv_case(comm, cn, mode, layout, contig2, ip);
                }
            for (int layout = L_STRIDE; layout <= L_PERMUTED; layout += L_PERMUTED - L_STRIDE)
                for (int ip = 0; ip < 2; ip++) a2av_case(comm, cn, mode, layout, ip);
            for (int counts = C_UNEVEN; counts <= C_ONE; counts++)
                for (int ip = 0; ip < 2; ip++) rs_case(comm, cn, mode, counts, ip);
        }
        cf_comm_free(&comm);
    }
    MPI_Type_free(&contig2);
    return cf_finish();
}
