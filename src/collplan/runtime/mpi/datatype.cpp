// Datatypes and operations for the runtime. See datatype.hpp.
#include "collplan/runtime/mpi/datatype.hpp"
#include "collplan/runtime/mpi/check.hpp"
#include "collplan/runtime/mpi/features.hpp"

namespace collplan::mpi {

TypeInfo type_info(MPI_Datatype t) {
    TypeInfo i;
    int size = 0;
    check(MPI_Type_size(t, &size), "MPI_Type_size");
    MPI_Aint lb = 0, ext = 0, tlb = 0, text = 0;
    check(MPI_Type_get_extent(t, &lb, &ext), "MPI_Type_get_extent");
    check(MPI_Type_get_true_extent(t, &tlb, &text), "MPI_Type_get_true_extent");
    i.size = size, i.lb = lb, i.extent = ext, i.true_lb = tlb, i.true_extent = text;
    i.contiguous = size > 0 && lb == 0 && tlb == 0 && ext == size && text == size;
    int combiner = 0;
#if COLLPLAN_HAVE_LARGE_COUNT  // MPICH refuses the int version for types made by the large-count constructors (mpi4py's)
    MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
    check(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &combiner), "MPI_Type_get_envelope_c");
#else
    int ni = 0, na = 0, nd = 0;
    check(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner), "MPI_Type_get_envelope");
#endif
    i.predefined = combiner == MPI_COMBINER_NAMED;
    return i;
}

int integer_bytes(MPI_Datatype t) {
    const MPI_Datatype ints[] = {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT,
                                 MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
                                 MPI_INT8_T, MPI_UINT8_T, MPI_INT16_T, MPI_UINT16_T, MPI_INT32_T, MPI_UINT32_T,
                                 MPI_INT64_T, MPI_UINT64_T, MPI_WCHAR, MPI_AINT, MPI_OFFSET, MPI_COUNT};
    for (MPI_Datatype i : ints)
        if (t == i) {
            int s = 0;
            MPI_Type_size(t, &s);
            return s;
        }
    return 0;
}

namespace {
const std::pair<MPI_Op, const char*> kOps[] = {
    {MPI_SUM, "sum"}, {MPI_PROD, "prod"}, {MPI_MAX, "max"}, {MPI_MIN, "min"}, {MPI_BAND, "band"},
    {MPI_BOR, "bor"}, {MPI_BXOR, "bxor"}, {MPI_LAND, "land"}, {MPI_LOR, "lor"}, {MPI_LXOR, "lxor"},
    {MPI_MAXLOC, "maxloc"}, {MPI_MINLOC, "minloc"}, {MPI_REPLACE, "replace"}, {MPI_NO_OP, "no_op"}};
}  // namespace

bool predefined_op(MPI_Op op) {
    for (const auto& [o, name] : kOps)
        if (o == op) return true;
    return false;
}

std::string op_name(MPI_Op op) {
    for (const auto& [o, name] : kOps)
        if (o == op) return name;
    int commutes = 1;
    MPI_Op_commutative(op, &commutes);
    return commutes ? "user" : "noncommutative";
}

bool exact_reduction(MPI_Datatype t, MPI_Op op) {
    const std::string name = op_name(op);
    if (name == "user" || name == "noncommutative") return false;
    if (integer_bytes(t) > 0 || t == MPI_C_BOOL) return true;
    return (name == "maxloc" || name == "minloc") && (t == MPI_2INT || t == MPI_SHORT_INT || t == MPI_LONG_INT);
}

void pack(const void* from, int64_t count, MPI_Datatype type, void* to, int64_t bytes) {
    if (count == 0 || bytes == 0) return;  // Open MPI refuses a null buffer even for nothing
    int pos = 0;
    check(MPI_Pack(from, as_int(static_cast<uint64_t>(count), "pack count"), type, to,
                   as_int(static_cast<uint64_t>(bytes), "pack buffer"), &pos, MPI_COMM_SELF),
          "MPI_Pack");
    if (pos != bytes)
        throw Error("MPI_Pack wrote " + std::to_string(pos) + " bytes where the type signature has " + std::to_string(bytes));
}

void unpack(const void* from, int64_t bytes, void* to, int64_t count, MPI_Datatype type) {
    if (count == 0 || bytes == 0) return;
    int pos = 0;
    check(MPI_Unpack(from, as_int(static_cast<uint64_t>(bytes), "unpack buffer"), &pos, to,
                     as_int(static_cast<uint64_t>(count), "unpack count"), type, MPI_COMM_SELF),
          "MPI_Unpack");
}

}  // namespace collplan::mpi
