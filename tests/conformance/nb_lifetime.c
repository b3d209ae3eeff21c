/* Conformance of the lifetime of user operations and derived datatypes under non-blocking and persistent
 * collectives (tests/conformance/README.md): an ordinary MPI program, nothing but MPI. MPI lets a program free an
 * operation (MPI_Op_free) or a datatype (MPI_Type_free) while a non-blocking or persistent collective that uses it
 * is pending -- the object lives on until the operation completes or the persistent request is freed. Between each
 * free and the completion the case creates and frees other operations and datatypes and then keeps one more of each
 * ("decoys": an operation that writes -1, MPI_Type_contiguous(3, MPI_DOUBLE), a stride-5 vector) until after the
 * completion, so that an MPI library that recycles handles hands the freed handle to a decoy: a collective that kept
 * the bare handle and uses it after the free then uses the decoy (wrong data, an error or a crash).
 * Element layouts (conformance.h): int; contig2 = MPI_Type_contiguous(2, MPI_INT); vector = MPI_Type_vector(2, 1,
 * 2, MPI_INT) resized to 4 ints (holes at ints 1 and 3 that must stay untouched). The user operations are those of
 * reduce.c (commutative: addition mod a prime; non-commutative: composition of affine maps mod a prime, on 2-int
 * elements) but find the element layout from the datatype they are called with (MPI_Type_size/_get_extent): a call
 * with any other datatype counts as a failure (case "ops-called-with-unknown-datatypes"). Results against the serial
 * fold in rank order; every byte outside the value slots (holes, guards) untouched; send buffers unchanged.
 *   red/<coll>/<what>/<comm>   coll: ireduce at root 0 and at root P-1 (a non-root's receive buffer untouched),
 *                          iallreduce, ireduce_scatter_block; count 3 (per rank for reduce_scatter_block); what:
 *                            op-comm/int              a commutative user op on MPI_INT, the op freed before MPI_Wait
 *                            op-noncomm/contig2       a non-commutative user op on contig2, the op freed
 *                            type-contig2/op-comm     a new contig2 type, the type freed (the op kept)
 *                            type-vector/op-noncomm   a new strided vector type, the type freed
 *                            both/vector/op-noncomm   the op and the type freed
 *                          (ireduce_scatter_block: type-vector/op-comm and both/contig2/op-noncomm instead of the
 *                          two non-commutative ones on the vector, which MPICH 5.0.2's own gets wrong at
 *                          power-of-two P: README.md)
 *   move/<coll>/<comm>     igather (root P-1), iallgather, iscatter (root 0), ibcast (root P/2), ialltoall: 3 elements
 *                          per block of a new strided vector type as receive and as send type (one new type each),
 *                          both freed before MPI_Wait; holes and guards of the receive buffer untouched, a non-root's
 *                          gather receive buffer untouched, send buffers unchanged
 *   pers/allreduce/<what>/<comm>, pers/reduce/<what>/<comm> (root P-1)   MPI_Allreduce_init / MPI_Reduce_init with
 *                          what = op-comm/int (op freed), type-vector/op-comm (type freed), both/vector/op-comm and
 *                          both/contig2/op-comm (op and type freed), freed right after the _init; started 3 times
 *                          with new data (decoys made anew before each start), MPI_Request_free (commutative ops
 *                          only: no schedule restricted to commutative operations leaves them to the MPI library)
 *   pers/allgather/<comm>  MPI_Allgather_init with new strided vector send and receive types freed after the _init,
 *                          started 3 times with new data, MPI_Request_free
 *   ops-called-with-unknown-datatypes   no user op was called with a datatype of another layout
 * on MPI_COMM_WORLD, an MPI_Comm_dup and the odd/even MPI_Comm_split (<comm>). The pers/ cases need MPI-4
 * persistent collectives (HAVE_PERSISTENT, as nonblocking.c). Open MPI 5.0's own persistent collectives do not keep
 * a freed op or datatype alive: MPI_Allreduce_init, MPI_Reduce_init and MPI_Allgather_init then compute with the
 * decoys, corrupt the heap or crash (README.md, "What the two MPIs do"). So under Open MPI the pers/<coll> cases
 * are skipped (the case name ends in /skipped-openmpi-native) where the run leaves <coll> on that communicator to
 * Open MPI: COLLPLAN_<COLL> unset or "native", or <coll> or <coll>@<communicator size> listed in CONFORMANCE_NATIVE
 * (comma-separated; the runner lists there the collectives whose algorithm of the run does not apply at a
 * communicator size or cannot run a user op there: the library falls back to the MPI library). */
#include "conformance.h"

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HAVE_PERSISTENT 1
#else
#define HAVE_PERSISTENT 0
#endif

/* ---- the user operations: the layout from the datatype they are called with ----------------------------- */
static long unknown_types = 0;

static int layout(MPI_Datatype t, int pos[2], int *ext) {
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &extent);
    const int is = (int)sizeof(int);
    if (lb == 0 && size == is && extent == is) return pos[0] = 0, *ext = 1, 1;
    if (lb == 0 && size == 2 * is && extent == 2 * is) return pos[0] = 0, pos[1] = 1, *ext = 2, 2;
    if (lb == 0 && size == 2 * is && extent == 4 * is) return pos[0] = 0, pos[1] = 2, *ext = 4, 2;
    unknown_types++;
    return 0;
}

static void op_comm_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
    int pos[2], ext, k = layout(*t, pos, &ext);
    int *a = in, *b = inout;
    for (int e = 0; e < *len; e++)
        for (int j = 0; j < k; j++) {
            const long x = (long)e * ext + pos[j];
            b[x] = (int)(((long long)a[x] + b[x]) % CF_PRIME);
        }
}

/* inout = in o inout: (a1, b1) o (a2, b2) = (a1 a2, a1 b2 + b1) */
static void op_noncomm_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
    int pos[2], ext, k = layout(*t, pos, &ext);
    if (k != 2) {
        if (k) unknown_types++;
        return;
    }
    int *a = in, *b = inout;
    for (int e = 0; e < *len; e++) {
        const int *x = a + (long)e * ext;
        int *y = b + (long)e * ext;
        const long long na = (long long)x[pos[0]] * y[pos[0]] % CF_PRIME;
        const long long nb = ((long long)x[pos[0]] * y[pos[1]] + x[pos[1]]) % CF_PRIME;
        y[pos[0]] = (int)na, y[pos[1]] = (int)nb;
    }
}

static void op_decoy_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)in, (void)t;
    int *b = inout;
    for (int e = 0; e < *len; e++) b[e] = -1;
}

/* ---- datatypes ---------------------------------------------------------------------------------------------- */
enum { L_INT, L_CONTIG2, L_VECTOR };

static MPI_Datatype new_type(int l) {
    MPI_Datatype t, v;
    if (l == L_INT) return MPI_INT;
    if (l == L_CONTIG2) {
        MPI_Type_contiguous(2, MPI_INT, &t);
    } else {
        MPI_Type_vector(2, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 4 * (MPI_Aint)sizeof(int), &t);
        MPI_Type_free(&v);
    }
    MPI_Type_commit(&t);
    return t;
}

/* The decoys: made right after a free (some made and freed again first: the churn), kept until decoys_free. */
typedef struct {
    MPI_Op op;
    MPI_Datatype t[2];
} decoys;

static decoys decoys_make(void) {
    decoys d;
    for (int i = 0; i < 3; i++) {
        MPI_Op o;
        MPI_Datatype x;
        MPI_Op_create(op_decoy_fn, i % 2, &o);
        MPI_Type_contiguous(i + 3, MPI_INT, &x);
        MPI_Type_commit(&x);
        MPI_Op_free(&o);
        MPI_Type_free(&x);
    }
    MPI_Op_create(op_decoy_fn, 1, &d.op);
    MPI_Type_contiguous(3, MPI_DOUBLE, &d.t[0]);
    MPI_Type_vector(3, 1, 5, MPI_INT, &d.t[1]);
    MPI_Type_commit(&d.t[0]);
    MPI_Type_commit(&d.t[1]);
    return d;
}

static void decoys_free(decoys *d) {
    MPI_Op_free(&d->op);
    MPI_Type_free(&d->t[0]);
    MPI_Type_free(&d->t[1]);
}

/* ---- reductions ------------------------------------------------------------------------------------------- */
/* What a reduction case frees: the element layout, the operation, and which of the two the case makes anew and
 * frees before the completion (the other one is a static one of main, kept). */
typedef struct {
    const char *name;
    int layout, noncomm, free_op, free_type;
} what;
enum { W_OP_COMM_INT, W_OP_NONCOMM_CONTIG2, W_TYPE_CONTIG2_COMM, W_TYPE_VECTOR_NONCOMM, W_TYPE_VECTOR_COMM,
       W_BOTH_VECTOR_NONCOMM, W_BOTH_VECTOR_COMM, W_BOTH_CONTIG2_NONCOMM, W_BOTH_CONTIG2_COMM, NWHAT };
static const what whats[NWHAT] = {
    {"op-comm/int", L_INT, 0, 1, 0},          {"op-noncomm/contig2", L_CONTIG2, 1, 1, 0},
    {"type-contig2/op-comm", L_CONTIG2, 0, 0, 1}, {"type-vector/op-noncomm", L_VECTOR, 1, 0, 1},
    {"type-vector/op-comm", L_VECTOR, 0, 0, 1}, {"both/vector/op-noncomm", L_VECTOR, 1, 1, 1},
    {"both/vector/op-comm", L_VECTOR, 0, 1, 1}, {"both/contig2/op-noncomm", L_CONTIG2, 1, 1, 1},
    {"both/contig2/op-comm", L_CONTIG2, 0, 1, 1}};
/* The cases of ireduce and iallreduce, of ireduce_scatter_block (MPICH 5.0.2's own gets a non-commutative op on a
 * datatype with holes wrong at power-of-two P: README.md), and of the persistent ones (commutative ops only, so
 * that no schedule restricted to commutative operations leaves them to the MPI library). */
static const int red_whats[] = {W_OP_COMM_INT, W_OP_NONCOMM_CONTIG2, W_TYPE_CONTIG2_COMM, W_TYPE_VECTOR_NONCOMM,
                                W_BOTH_VECTOR_NONCOMM};
static const int rsb_whats[] = {W_OP_COMM_INT, W_OP_NONCOMM_CONTIG2, W_TYPE_CONTIG2_COMM, W_TYPE_VECTOR_COMM,
                                W_BOTH_CONTIG2_NONCOMM};
static const int pers_whats[] = {W_OP_COMM_INT, W_TYPE_VECTOR_COMM, W_BOTH_VECTOR_COMM, W_BOTH_CONTIG2_COMM};

/* The static operations and datatypes of the cases that free only the other one. */
static MPI_Op kept_op[2];
static MPI_Datatype kept_type[3];

/* A reduction kind of conformance.h (the serial fold, the value slots) for `what`, with a new op and/or type where
 * the case frees them. */
static cf_red red_kind(int w) {
    const what *x = &whats[w];
    const int l = x->layout;
    cf_red k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "%s", x->name);
    k.rop = x->noncomm ? RO_USER_NONCOMM : RO_USER_COMM;
    if (x->free_op)
        MPI_Op_create(x->noncomm ? op_noncomm_fn : op_comm_fn, !x->noncomm, &k.op);
    else
        k.op = kept_op[x->noncomm];
    k.type = x->free_type ? new_type(l) : kept_type[l];
    k.extent = (long)sizeof(int) * (l == L_INT ? 1 : l == L_CONTIG2 ? 2 : 4);
    k.nslots = l == L_INT ? 1 : 2;
    k.slot_off[1] = (long)sizeof(int) * (l == L_VECTOR ? 2 : 1);
    return k;
}

/* Frees what the case frees (the handles in k stay as they were: MPI sets the variables, not k's copies). */
static void red_free(int w, const cf_red *k) {
    MPI_Op op = k->op;
    MPI_Datatype t = k->type;
    if (whats[w].free_op) MPI_Op_free(&op);
    if (whats[w].free_type) MPI_Type_free(&t);
}

enum { R_REDUCE0, R_REDUCE_LAST, R_ALLREDUCE, R_RSB, NRED };
static const char *red_name[NRED] = {"ireduce/root0", "ireduce/rootlast", "iallreduce", "ireduce_scatter_block"};

static void red_case(MPI_Comm comm, const char *cn, int rc, int w) {
    if (!cf_case("red/%s/%s/%s", red_name[rc], whats[w].name, cn)) return;
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    const int n = 3, root = rc == R_REDUCE_LAST ? P - 1 : 0;
    const long nin = rc == R_RSB ? (long)n * P : n;
    cf_red k = red_kind(w);
    cf_bytes s = cf_bytes_new(cf_red_bytes(&k, nin)), d = cf_bytes_new(cf_red_bytes(&k, nin)),
             s0 = cf_bytes_new(cf_red_bytes(&k, nin));
    cf_red_fill(&k, cf_bytes_ptr(&s), 0, nin, me, P);
    memcpy(s0.mem, s.mem, (size_t)s.len);
    MPI_Request req;
    int r;
    switch (rc) {
    case R_REDUCE0:
    case R_REDUCE_LAST:
        r = MPI_Ireduce(cf_bytes_ptr(&s), cf_bytes_ptr(&d), n, k.type, k.op, root, comm, &req);
        break;
    case R_ALLREDUCE: r = MPI_Iallreduce(cf_bytes_ptr(&s), cf_bytes_ptr(&d), n, k.type, k.op, comm, &req); break;
    default: r = MPI_Ireduce_scatter_block(cf_bytes_ptr(&s), cf_bytes_ptr(&d), n, k.type, k.op, comm, &req); break;
    }
    cf_check_rc("start", r);
    red_free(w, &k);
    decoys dec = decoys_make();
    cf_check_rc("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
    decoys_free(&dec);
    const int has_result = rc == R_ALLREDUCE || rc == R_RSB || me == root;
    if (has_result) cf_red_check_values(&k, cf_bytes_ptr(&d), rc == R_RSB ? (long)me * n : 0, n, P);
    cf_red_check_holes(&k, &d, has_result ? n : 0, 0);
    cf_bytes_check_same(&s, &s0);
    cf_bytes_free(&s), cf_bytes_free(&d), cf_bytes_free(&s0);
}

#if HAVE_PERSISTENT
/* Whether this run leaves the persistent `coll` ("allreduce", "reduce", "allgather") on `comm` to Open MPI, whose
 * own persistent collectives use a freed op or datatype (README.md, "What the two MPIs do"): under Open MPI when
 * COLLPLAN_<COLL> is unset or "native", or when CONFORMANCE_NATIVE (comma-separated) names `coll` or
 * `coll`@<size of comm> -- the runner lists there the collectives whose algorithm of the run does not apply at
 * a communicator size or cannot run a user op there, which the library then leaves to the MPI library. */
static int openmpi_native(const char *coll, MPI_Comm comm) {
#ifdef OMPI_MAJOR_VERSION
    char var[64], list[1024], tok[2][80];
    int P;
    MPI_Comm_size(comm, &P);
    snprintf(var, sizeof var, "COLLPLAN_%s", coll);
    for (char *c = var; *c; c++) *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
    const char *e = getenv(var), *n = getenv("CONFORMANCE_NATIVE");
    if (!e || !*e || strncmp(e, "native", 6) == 0) return 1;
    snprintf(list, sizeof list, ",%s,", n ? n : "");
    snprintf(tok[0], sizeof tok[0], ",%s,", coll);
    snprintf(tok[1], sizeof tok[1], ",%s@%d,", coll, P);
    return strstr(list, tok[0]) != NULL || strstr(list, tok[1]) != NULL;
#else
    (void)coll, (void)comm;
    return 0;
#endif
}

static void pers_red_case(MPI_Comm comm, const char *cn, int allreduce, int w) {
    const int skip = openmpi_native(allreduce ? "allreduce" : "reduce", comm);
    if (!cf_case("pers/%s/%s/%s%s", allreduce ? "allreduce" : "reduce", whats[w].name, cn,
                 skip ? "/skipped-openmpi-native" : ""))
        return;
    if (skip) return;
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    const int n = 3, root = P - 1;
    cf_red k = red_kind(w);
    cf_bytes s = cf_bytes_new(cf_red_bytes(&k, n)), d = cf_bytes_new(cf_red_bytes(&k, n)),
             s0 = cf_bytes_new(cf_red_bytes(&k, n));
    MPI_Request req;
    if (allreduce)
        cf_check_rc("MPI_Allreduce_init", MPI_Allreduce_init(cf_bytes_ptr(&s), cf_bytes_ptr(&d), n, k.type, k.op,
                                                               comm, MPI_INFO_NULL, &req));
    else
        cf_check_rc("MPI_Reduce_init", MPI_Reduce_init(cf_bytes_ptr(&s), cf_bytes_ptr(&d), n, k.type, k.op, root,
                                                         comm, MPI_INFO_NULL, &req));
    red_free(w, &k);
    for (int round = 0; round < 3; round++) {
        decoys dec = decoys_make();
        const long first = 1000L * round;  /* new data: other elements of the serial sequence */
        cf_red_fill(&k, cf_bytes_ptr(&s), first, n, me, P);
        memcpy(s0.mem, s.mem, (size_t)s.len);
        memset(d.mem, CF_RBYTE, (size_t)d.len);
        cf_check_rc("MPI_Start", MPI_Start(&req));
        cf_check_rc("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
        decoys_free(&dec);
        const int has_result = allreduce || me == root;
        if (has_result) cf_red_check_values(&k, cf_bytes_ptr(&d), first, n, P);
        cf_red_check_holes(&k, &d, has_result ? n : 0, 0);
        cf_bytes_check_same(&s, &s0);
    }
    cf_check_rc("MPI_Request_free", MPI_Request_free(&req));
    cf_bytes_free(&s), cf_bytes_free(&d), cf_bytes_free(&s0);
}
#endif

/* ---- data movement with freed strided types ----------------------------------------------------------------- */
enum { M_GATHER, M_ALLGATHER, M_SCATTER, M_BCAST, M_ALLTOALL, M_PERS_ALLGATHER, NMOVE };
static const char *move_name[NMOVE] = {"igather", "iallgather", "iscatter", "ibcast", "ialltoall", "allgather"};

static int mval(int r, long b, int round) { return 1 + r * 1009 + (int)b + round * 100003; }

/* Fills the send buffer, the receive buffer's sentinels and what the receive buffer must hold (kind K_VEC: the
 * strided layout; n elements per block). */
static void move_fill(int m, int P, int me, int root, int n, int round, cf_buf *s, cf_buf *d, cf_buf *want) {
    const long nb = 2L * n;  /* basic ints per block */
    for (long i = 0; i < s->len; i++) s->mem[i] = CF_SENTINEL;
    for (long i = 0; i < d->len; i++) d->mem[i] = want->mem[i] = CF_SENTINEL;
    int *sp = cf_buf_ptr(s), *wp = cf_buf_ptr(want);
    switch (m) {
    case M_GATHER:
    case M_ALLGATHER:
    case M_PERS_ALLGATHER:
        for (long b = 0; b < nb; b++) sp[cf_pos(K_VEC, 0, b)] = mval(me, b, round);
        if (m != M_GATHER || me == root)
            for (int j = 0; j < P; j++)
                for (long b = 0; b < nb; b++) wp[cf_pos(K_VEC, (long)j * n, b)] = mval(j, b, round);
        break;
    case M_SCATTER:
        if (me == root)
            for (long b = 0; b < nb * P; b++) sp[cf_pos(K_VEC, 0, b)] = mval(root, b, round);
        for (long b = 0; b < nb; b++) wp[cf_pos(K_VEC, 0, b)] = mval(root, me * nb + b, round);
        break;
    case M_BCAST:
        for (long b = 0; b < nb; b++) wp[cf_pos(K_VEC, 0, b)] = mval(root, b, round);
        if (me == root) memcpy(d->mem, want->mem, sizeof(int) * d->len);
        break;
    case M_ALLTOALL:
        for (long b = 0; b < nb * P; b++) sp[cf_pos(K_VEC, 0, b)] = mval(me, b, round);
        for (int j = 0; j < P; j++)
            for (long b = 0; b < nb; b++) wp[cf_pos(K_VEC, (long)j * n, b)] = mval(j, me * nb + b, round);
        break;
    }
}

static void move_case(MPI_Comm comm, const char *cn, int m) {
#if HAVE_PERSISTENT
    const int skip = m == M_PERS_ALLGATHER && openmpi_native("allgather", comm);
#else
    const int skip = 0;
#endif
    if (!cf_case("%s/%s/%s%s", m == M_PERS_ALLGATHER ? "pers" : "move", move_name[m], cn,
                 skip ? "/skipped-openmpi-native" : ""))
        return;
    if (skip) return;
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    const int n = 3, root = m == M_GATHER ? P - 1 : m == M_BCAST ? P / 2 : 0;
    const long ints = 4L * n * P;  /* P blocks of n elements of extent 4 */
    cf_buf s = cf_buf_new(ints), d = cf_buf_new(ints), want = cf_buf_new(ints), s0 = cf_buf_new(ints);
    MPI_Datatype st = new_type(L_VECTOR), rt = new_type(L_VECTOR);
    int *sp = cf_buf_ptr(&s), *dp = cf_buf_ptr(&d);
    MPI_Request req = MPI_REQUEST_NULL;
    const int rounds = m == M_PERS_ALLGATHER ? 3 : 1;
    for (int round = 0; round < rounds; round++) {
        move_fill(m, P, me, root, n, round, &s, &d, &want);
        memcpy(s0.mem, s.mem, sizeof(int) * s.len);
        int r = MPI_SUCCESS;
        if (round == 0) {
            switch (m) {
            case M_GATHER: r = MPI_Igather(sp, n, st, dp, n, rt, root, comm, &req); break;
            case M_ALLGATHER: r = MPI_Iallgather(sp, n, st, dp, n, rt, comm, &req); break;
            case M_SCATTER: r = MPI_Iscatter(sp, n, st, dp, n, rt, root, comm, &req); break;
            case M_BCAST: r = MPI_Ibcast(dp, n, rt, root, comm, &req); break;
            case M_ALLTOALL: r = MPI_Ialltoall(sp, n, st, dp, n, rt, comm, &req); break;
#if HAVE_PERSISTENT
            case M_PERS_ALLGATHER:
                r = MPI_Allgather_init(sp, n, st, dp, n, rt, comm, MPI_INFO_NULL, &req);
                break;
#endif
            }
            cf_check_rc("start", r);
            MPI_Type_free(&st);
            MPI_Type_free(&rt);
        }
        decoys dec = decoys_make();
        if (m == M_PERS_ALLGATHER) cf_check_rc("MPI_Start", MPI_Start(&req));
        cf_check_rc("MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE));
        decoys_free(&dec);
        cf_check_buf(&d, &want);
        if (m != M_BCAST) cf_check_buf(&s, &s0);
    }
    if (m == M_PERS_ALLGATHER) cf_check_rc("MPI_Request_free", MPI_Request_free(&req));
    cf_buf_free(&s), cf_buf_free(&d), cf_buf_free(&want), cf_buf_free(&s0);
}

int main(int argc, char **argv) {
    cf_init(&argc, &argv, "nb_lifetime");
    MPI_Op_create(op_comm_fn, 1, &kept_op[0]);
    MPI_Op_create(op_noncomm_fn, 0, &kept_op[1]);
    for (int l = 0; l < 3; l++) kept_type[l] = new_type(l);
    for (int cmk = CF_WORLD; cmk <= CF_SPLIT_ODD_EVEN; cmk++) {
        MPI_Comm comm = cf_comm(cmk);
        const char *cn = cf_comm_names[cmk];
        for (int rc = 0; rc < NRED; rc++)
            for (int i = 0; i < 5; i++) red_case(comm, cn, rc, rc == R_RSB ? rsb_whats[i] : red_whats[i]);
        for (int m = 0; m < NMOVE; m++)
            if (m != M_PERS_ALLGATHER || HAVE_PERSISTENT) move_case(comm, cn, m);
#if HAVE_PERSISTENT
        for (int allreduce = 1; allreduce >= 0; allreduce--)
            for (int i = 0; i < 4; i++) pers_red_case(comm, cn, allreduce, pers_whats[i]);
#endif
        cf_comm_free(&comm);
    }
    if (cf_case("ops-called-with-unknown-datatypes"))
        cf_check_true(0, unknown_types == 0, "a user op called with a datatype of another layout",
                      "every call with the collective's datatype");
    MPI_Op_free(&kept_op[0]);
    MPI_Op_free(&kept_op[1]);
    for (int l = 1; l < 3; l++) MPI_Type_free(&kept_type[l]);
    return cf_finish();
}
