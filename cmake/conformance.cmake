# The conformance suite (tests/conformance, README.md there): plain C MPI programs, one per collective, run by
# run_conformance.py under every algorithm variant of their collective with libcollplan_pmpi.so preloaded.
# Included from cmake/mpi_runtime.cmake inside its per-MPI loop (variables abi, mpi_family, mpi_includes, mpi_link,
# mpiexec, mpi_site), with tests on:
#   conformance_list_algorithms       lists the COLLPLAN_<COLLECTIVE> specs (built once)
#   conformance_<program>_<abi>       the programs, built against that MPI's mpi.h as pmpi_prog is
#   ctest conformance_<abi>_<program> one test per (MPI, program), label "conformance", RUN_SERIAL
#   ctest conformance_start           fixture: resets the time budget all conformance tests share
#   ctest conformance_runner_selftest the runner's output parsing, without MPI
set(COLLPLAN_CONFORMANCE_PROGRAMS allreduce allgather alltoall alltoallv barrier
    bcast reduce reduce_scatter_block reduce_scatter allgatherv gather scatter)
# The programs of the seven collectives added later run at P = 1-4, 7, 8 (P = 5, 6 left out to save time: the
# report says which P ran; tests/conformance/README.md, "Time"); -DCOLLPLAN_CONFORMANCE_EXTRA_ARGS="--ranks;1-8"
# runs them at every P.
set(COLLPLAN_CONFORMANCE_RANK_SUBSET bcast reduce reduce_scatter_block reduce_scatter allgatherv gather scatter)
set(conformance_rank_subset 1-4,7,8)
# nonblocking.c: the non-blocking and persistent versions of all twelve, under two fixed sets of choices
# (run_conformance.py NONBLOCKING_SETS), at every P = 1..8 (3-6 s per MPI).
list(APPEND COLLPLAN_CONFORMANCE_PROGRAMS nonblocking)
# The programs of several collectives (tests/conformance/README.md, "Programs of several collectives"): freed ops
# and datatypes under pending requests, the start order of persistent requests, v-collectives into buffers with
# gaps, in place on MPI_COMM_SELF, a seeded random stress of the non-blocking ones. Each runs under the zip of the
# specs of the collectives it calls (max over those collectives of the distinct applicable schedules at P: up to 30
# runs per P), so each at the P that matter for it (README.md, "Time"); -DCOLLPLAN_CONFORMANCE_EXTRA_ARGS=
# "--ranks;1-8" runs them all at every P.
list(APPEND COLLPLAN_CONFORMANCE_PROGRAMS nb_lifetime pers_order vgaps self_inplace stress)
# The three first programs (allreduce, allgather, alltoall: the most algorithms) leave out P = 5 and 7 (3 is the odd
# non-power of two, 6 the even one): a third of their launches, so that the site MPIs' tests fit make test's time.
set(conformance_ranks_allreduce 1-4,6,8)
set(conformance_ranks_allgather 1-4,6,8)
set(conformance_ranks_alltoall 1-4,6,8)
set(conformance_ranks_nb_lifetime 1-4,8)
set(conformance_ranks_pers_order 2-4,8)
set(conformance_ranks_vgaps 1-8)
set(conformance_ranks_self_inplace 1,3,8)
set(conformance_ranks_stress 2-4,8)
# --budget (seconds) is shared by all conformance tests of one ctest run; later arguments win, so
# -DCOLLPLAN_CONFORMANCE_EXTRA_ARGS="--budget;900;--jobs;2" overrides.
set(conformance_args --jobs 3 --timeout 30 --max-timeouts 3 --budget 720)
# An installed MPI built from its wrapper (mpi_site) runs four programs at P = 2, two runs at a time: the wheels'
# installations run them all; this shows that the same library works against another build and version of the MPI
# (Debian's MPICH 4.0 polls without yielding: oversubscribed, a run of allreduce's program took 10-30 s at P = 3).
set(COLLPLAN_SITE_CONFORMANCE_PROGRAMS allreduce alltoallv bcast nonblocking)
set(conformance_site_ranks 2)
set(COLLPLAN_CONFORMANCE_EXTRA_ARGS "" CACHE STRING "more arguments of run_conformance.py in the ctest tests (a ;-list)")
set(COLLPLAN_CONFORMANCE_TEST_TIMEOUT 600 CACHE STRING "ctest TIMEOUT of one conformance test (one MPI, one program)")

if(NOT TARGET conformance_list_algorithms)
  add_executable(conformance_list_algorithms tests/conformance/list_algorithms.cpp $<TARGET_OBJECTS:collplan_core>)
  target_include_directories(conformance_list_algorithms PRIVATE src)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  # The budget of the whole set counts from this file's time: the fixture removes it, the first conformance test
  # to run creates it (ctest may run the fixture long before the RUN_SERIAL tests get their turn).
  set(conformance_budget_file ${CMAKE_BINARY_DIR}/conformance/budget-start)
  add_test(NAME conformance_start COMMAND ${CMAKE_COMMAND} -E rm -f ${conformance_budget_file})
  set_tests_properties(conformance_start PROPERTIES FIXTURES_SETUP conformance LABELS conformance)
  add_test(NAME conformance_runner_selftest   # the runner's parsing of the programs' and the library's output
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/conformance/run_conformance.py --self-test)
  set_tests_properties(conformance_runner_selftest PROPERTIES LABELS conformance TIMEOUT 60)
endif()

set(conformance_programs ${COLLPLAN_CONFORMANCE_PROGRAMS})
if(mpi_site)
  set(conformance_programs ${COLLPLAN_SITE_CONFORMANCE_PROGRAMS})
  if(mpi_version MATCHES "^MPICH 4\\.0\\.")
    # MPICH 4.0's own non-blocking and persistent collectives deliver wrong data in nonblocking.c's native runs
    # (MPI_Allgather_init, MPI_Gather_init, MPI_Scatter_init, MPI_Iallgatherv on a split communicator: the library
    # alone, no collplan), which validate every case; tests/mpi/pmpi_nonblocking.c checks collplan's there. Its
    # processes poll without yielding, so allreduce.c's 23 runs took 75 s at P = 2: the PMPI and Fortran programs
    # cover MPI_Allreduce under it.
    list(REMOVE_ITEM conformance_programs nonblocking allreduce)
  endif()
endif()
foreach(prog IN LISTS conformance_programs)
  set(prog_ranks "")
  if(mpi_site)
    set(prog_ranks --ranks ${conformance_site_ranks} --jobs 2)
    if(mpi_version MATCHES "^Open MPI [1-4]\\.")
      # Open MPI 4's launcher forwards the ranks' output in chunks, so another rank's text could land inside the
      # statistics line (1 run in ~150 read as "collplan ran no calls"): tagged output comes in whole lines
      list(APPEND prog_ranks --mpirun-arg=--tag-output)
    endif()

  elseif(prog IN_LIST COLLPLAN_CONFORMANCE_RANK_SUBSET)
    set(prog_ranks --ranks ${conformance_rank_subset})
  elseif(DEFINED conformance_ranks_${prog})
    set(prog_ranks --ranks ${conformance_ranks_${prog}})
  endif()
  add_executable(conformance_${prog}_${abi} tests/conformance/${prog}.c)
  set_target_properties(conformance_${prog}_${abi} PROPERTIES BUILD_RPATH "${mpi_libdirs}" C_STANDARD 11
                        OUTPUT_NAME conformance_${prog} RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/conformance/${abi})
  target_include_directories(conformance_${prog}_${abi} PRIVATE ${mpi_includes})
  target_compile_options(conformance_${prog}_${abi} PRIVATE -Wall -Wextra)
  target_link_libraries(conformance_${prog}_${abi} PRIVATE ${mpi_link} m)
  add_test(NAME conformance_${abi}_${prog}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/conformance/run_conformance.py
                   --mpirun ${mpiexec} --abi ${mpi_family} --lib $<TARGET_FILE:collplan_pmpi_${abi}>
                   --lister $<TARGET_FILE:conformance_list_algorithms>
                   --program $<TARGET_FILE:conformance_${prog}_${abi}>
                   --report ${CMAKE_BINARY_DIR}/conformance/${abi}_${prog}.md
                   --budget-file ${conformance_budget_file} ${conformance_args} ${prog_ranks}
                   ${COLLPLAN_CONFORMANCE_EXTRA_ARGS})
  set_tests_properties(conformance_${abi}_${prog} PROPERTIES RUN_SERIAL TRUE ENVIRONMENT "${mpi_env}" LABELS conformance SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED conformance TIMEOUT ${COLLPLAN_CONFORMANCE_TEST_TIMEOUT})
endforeach()
