// MPI return codes as collplan errors, and byte counts that must fit an MPI int: shared by the runtime's files.
#pragma once
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <string>

#include "collplan/common/error.hpp"

namespace collplan::mpi {

// Throws Error("<what> failed: <the MPI library's message>") unless rc is MPI_SUCCESS.
inline void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(std::string(what) + " failed: " + std::string(msg, static_cast<size_t>(len)));
}

// `bytes` as an MPI int count, or Error naming `what` and the limit.
inline int as_int(uint64_t bytes, const char* what) {
    if (bytes > static_cast<uint64_t>(INT_MAX))
        throw Error(std::string(what) + " of " + std::to_string(bytes) + " bytes exceeds the MPI count limit (allowed: <= " +
                    std::to_string(INT_MAX) + ")");
    return static_cast<int>(bytes);
}

}  // namespace collplan::mpi
