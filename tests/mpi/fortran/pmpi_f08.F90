! An ordinary MPI program in Fortran (use mpi_f08) that knows nothing about collplan: every collective, blocking,
! non-blocking and (with HAVE_PERSISTENT) persistent, checked against a serial computation (checks.inc says what).
! Prints "pmpi_fortran: all checks passed" on rank 0, or a line per failure and stops with an error.
#define BINDING 'mpi_f08'
#define COMM_T type(MPI_Comm)
#define TYPE_T type(MPI_Datatype)
#define OP_T type(MPI_Op)
#define REQ_T type(MPI_Request)
#define STATUS_T(x) type(MPI_Status) :: x
#define STATUSES_T(x, n) type(MPI_Status) :: x(n)
#define STATUS_OF(x, j) x(j)
#define BUF(x, c) x(:, c)
module pmpi_f08_checks
  use mpi_f08
  use, intrinsic :: iso_fortran_env, only: error_unit, output_unit
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
#include "checks.inc"

  ! ------------------------------------------------------------------------------------------- user operations
  ! as mpi_f08 calls them (MPI_User_function): the vectors as C pointers to len elements of the datatype
  subroutine isum(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: u(:), v(:)
    call c_f_pointer(invec, u, [len])
    call c_f_pointer(inoutvec, v, [len])
    call called_with(datatype, MPI_INTEGER)
    v = u + v
  end subroutine isum

  subroutine compose(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: u(:, :), v(:, :)
    integer :: i
    call c_f_pointer(invec, u, [2, len])
    call c_f_pointer(inoutvec, v, [2, len])
    call called_with(datatype, pair_type)
    do i = 1, len
      v(:, i) = after(u(:, i), v(:, i))
    end do
  end subroutine compose
end module pmpi_f08_checks

program pmpi_f08
  use pmpi_f08_checks, only: run_all
  implicit none
  call run_all()
end program pmpi_f08
