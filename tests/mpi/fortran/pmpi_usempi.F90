! An ordinary MPI program in Fortran (use mpi) that knows nothing about collplan: every collective, blocking,
! non-blocking and (with HAVE_PERSISTENT) persistent, checked against a serial computation (checks.inc says what).
! Prints "pmpi_fortran: all checks passed" on rank 0, or a line per failure and stops with an error.
#define BINDING 'use mpi'
#define INTEGER_HANDLES
module pmpi_usempi_checks
  use mpi
  use, intrinsic :: iso_fortran_env, only: error_unit, output_unit
  implicit none
#include "checks.inc"
end module pmpi_usempi_checks

program pmpi_usempi
  use pmpi_usempi_checks, only: run_all
  implicit none
  call run_all()
end program pmpi_usempi
