! The Fortran twin of latency.c for MPI_Allreduce (use mpi): the same OSU-style loop -- per size, WARMUP + ITERS
! calls of MPI_Allreduce on REAL sums (size/4 elements), each timed alone and followed by a barrier -- and the same
! output (average latency over the ranks, in us). compare.py --fortran runs it, to measure what the Fortran entry
! points of libcollplan_pmpi.so (src/collplan/pmpi/fortran.cpp) cost against the MPI library's own binding.
!   latency_f MIN MAX ITERS WARMUP
program latency_f
  use mpi
  implicit none
  integer :: ierr, me, p, i, nargs
  integer(8) :: lo, hi, iters, warmup, bytes
  character(len=32) :: arg
  real, allocatable :: sbuf(:), rbuf(:)
  double precision :: t0, timer, lat, total

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  lo = 4; hi = 65536; iters = 2000; warmup = 200
  nargs = command_argument_count()
  if (nargs >= 4) then
    call get_command_argument(1, arg); read (arg, *) lo
    call get_command_argument(2, arg); read (arg, *) hi
    call get_command_argument(3, arg); read (arg, *) iters
    call get_command_argument(4, arg); read (arg, *) warmup
  end if
  allocate(sbuf(max(hi / 4, 1_8)), rbuf(max(hi / 4, 1_8)))
  do i = 1, size(sbuf)
    sbuf(i) = real(mod(i + me, 5))
  end do
  if (me == 0) then
    print '(a,i0,a,i0,a,i0,a)', '# collplan latency (Fortran, use mpi): MPI_Allreduce, ', p, ' ranks, ', iters, &
      ' iterations, ', warmup, ' warm-up'
    print '(a)', '# Size       Avg Latency(us)'
  end if
  bytes = lo
  do while (bytes <= hi)
    if (mod(bytes, 4_8) == 0) then
      timer = 0
      do i = 1, int(warmup + iters)
        t0 = MPI_Wtime()
        call MPI_Allreduce(sbuf, rbuf, int(bytes / 4), MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
        if (i > warmup) timer = timer + (MPI_Wtime() - t0)
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
      end do
      lat = timer * 1d6 / dble(iters)
      call MPI_Reduce(lat, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
      if (me == 0) print '(i0,t11,f18.2)', bytes, total / p
    end if
    bytes = max(bytes * 2, 1_8)
  end do
  call MPI_Finalize(ierr)
end program
