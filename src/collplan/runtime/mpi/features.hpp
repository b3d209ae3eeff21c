// What the MPI library in use has, beyond MPI 3.1: cmake/mpi_wrapper.cmake finds it by compiling and linking a call
// against the installation and passes -DCOLLPLAN_HAVE_...=0|1; a build without those definitions falls back on
// mpi.h's version macros. What an MPI lacks is not interposed (the PMPI library) and not offered (the runtime).
#pragma once
#include <mpi.h>

// MPI-4 persistent collectives (MPI_Allreduce_init, ...): MPICH 4+, Open MPI 5 (which says MPI_VERSION 3).
#ifndef COLLPLAN_HAVE_PERSISTENT
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define COLLPLAN_HAVE_PERSISTENT 1
#else
#define COLLPLAN_HAVE_PERSISTENT 0
#endif
#endif

// MPI-4 large-count calls (MPI_Bcast_c, MPI_Type_size_c, ...): MPICH 4+; Open MPI 5.0 declares none.
#ifndef COLLPLAN_HAVE_LARGE_COUNT
#if MPI_VERSION >= 4
#define COLLPLAN_HAVE_LARGE_COUNT 1
#else
#define COLLPLAN_HAVE_LARGE_COUNT 0
#endif
#endif

// MPI 4.1's MPI_Request_get_status_any/all/some.
#ifndef COLLPLAN_HAVE_MPI_4_1
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define COLLPLAN_HAVE_MPI_4_1 1
#else
#define COLLPLAN_HAVE_MPI_4_1 0
#endif
#endif
