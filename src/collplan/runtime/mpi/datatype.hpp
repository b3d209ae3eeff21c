// What the runtime needs to know about an MPI datatype and an MPI_Op, in one place.
//
// Layout: the executor moves bytes. A datatype is `contiguous` when its data are exactly the bytes of its extent
// (size == extent == true extent, lower bounds 0): buffers of it move as they are. Any other datatype (holes,
// strides, resized, non-zero lower bound, zero size) is packed into a contiguous staging buffer and unpacked at
// the end (MPI_Pack / MPI_Unpack: the MPI library's own datatype engine), so every legal datatype works and two
// ranks that describe the same data with different datatypes (same type signature) run the same schedule.
//
// Reductions: `exact` -- a predefined operation on a predefined integer, logical or byte type (or a pair type of
// integers): every association and order of the operands gives the same bits, so any correct schedule gives every
// rank the same result. Anything else (floating-point types, their pair and complex types, user-defined
// operations, derived datatypes) runs only schedules that are rank-consistent (Schedule::rank_consistent).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>

namespace collplan::mpi {

struct TypeInfo {
    int64_t size = 0;                     // bytes of data in one element (MPI_Type_size)
    int64_t lb = 0, extent = 0;           // MPI_Type_get_extent
    int64_t true_lb = 0, true_extent = 0; // MPI_Type_get_true_extent
    bool contiguous = false;              // moves as `size` bytes from the buffer's address
    bool predefined = false;              // a named (predefined) datatype
};

// Queries the MPI library (no cache: callers cache what they need).
TypeInfo type_info(MPI_Datatype t);

// Bytes of one element of a predefined integer type (incl. MPI_BYTE, MPI_CHAR and the fixed-width types), else 0.
int integer_bytes(MPI_Datatype t);

// The operation's name in the table of reduction operations (schedule/reduction.hpp): sum, prod, max, min, land,
// lor, lxor, band, bor, bxor, maxloc, minloc; a user-defined operation is "user" when it commutes, else
// "noncommutative"; MPI_REPLACE and MPI_NO_OP (one-sided only) are "replace" and "no_op".
std::string op_name(MPI_Op op);

// True for the predefined reduction operations (MPI_SUM ... MPI_MINLOC, MPI_REPLACE, MPI_NO_OP).
bool predefined_op(MPI_Op op);

// True when any association and order of `op` on `t` gives the same bits (see above).
bool exact_reduction(MPI_Datatype t, MPI_Op op);

// Copies `count` elements of `type` at `from` into `bytes` contiguous bytes at `to` (pack), or back (unpack).
void pack(const void* from, int64_t count, MPI_Datatype type, void* to, int64_t bytes);
void unpack(const void* from, int64_t bytes, void* to, int64_t count, MPI_Datatype type);

}  // namespace collplan::mpi
