! An ordinary MPI program in Fortran (include 'mpif.h') that knows nothing about collplan: every collective,
! blocking, non-blocking and (with HAVE_PERSISTENT) persistent, checked against a serial computation (checks.inc
! says what). Prints "pmpi_fortran: all checks passed" on rank 0, or a line per failure and stops with an error.
#define BINDING 'mpif.h'
#define INTEGER_HANDLES
module pmpi_mpifh_checks
  use, intrinsic :: iso_fortran_env, only: error_unit, output_unit
  implicit none
  include 'mpif.h'
#include "checks.inc"
end module pmpi_mpifh_checks

program pmpi_mpifh
  use pmpi_mpifh_checks, only: run_all
  implicit none
  call run_all()
end program pmpi_mpifh
