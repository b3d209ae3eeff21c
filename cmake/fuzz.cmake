# libFuzzer targets (fuzz/*.cpp), one per reader; see fuzz/README.md. Configure a build of its own with clang:
#   cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCOLLPLAN_PYTHON=OFF -DCOLLPLAN_FUZZ=ON
#   cmake --build build/fuzz --target collplan_fuzz
# (`make fuzz` and `make test-fuzz` do both.) The core sources the readers need are compiled again, into an object
# library of their own, with the targets' flags: coverage instrumentation for libFuzzer plus AddressSanitizer and
# UndefinedBehaviorSanitizer (any report aborts). verify/, sim/ (but its parameter parser) and runtime/ (but the
# wisdom reader) are not needed and not built, which keeps the build short enough for `make test`.
option(COLLPLAN_FUZZ "Build the libFuzzer targets in fuzz/ (needs clang)" OFF)

if(COLLPLAN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "COLLPLAN_FUZZ needs clang (libFuzzer); configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  set(COLLPLAN_FUZZ_FLAGS -O1 -gline-tables-only -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all)

  file(GLOB_RECURSE COLLPLAN_FUZZ_CORE_SOURCES CONFIGURE_DEPENDS
       src/collplan/common/*.cpp src/collplan/schedule/*.cpp src/collplan/topology/*.cpp src/collplan/model/*.cpp
       src/collplan/algorithms/*.cpp)
  list(APPEND COLLPLAN_FUZZ_CORE_SOURCES src/collplan/runtime/wisdom.cpp src/collplan/sim/common/params.cpp)
  add_library(collplan_fuzz_core OBJECT ${COLLPLAN_FUZZ_CORE_SOURCES})
  target_include_directories(collplan_fuzz_core PUBLIC src)
  target_compile_options(collplan_fuzz_core PRIVATE ${COLLPLAN_FUZZ_FLAGS} -fsanitize=fuzzer-no-link)

  file(GLOB COLLPLAN_FUZZ_TARGETS CONFIGURE_DEPENDS fuzz/*.cpp)
  add_custom_target(collplan_fuzz)
  foreach(src ${COLLPLAN_FUZZ_TARGETS})
    get_filename_component(name ${src} NAME_WE)
    # Objects of an OBJECT library, not a static archive: the algorithms register themselves with static objects.
    add_executable(fuzz_${name} ${src} $<TARGET_OBJECTS:collplan_fuzz_core>)
    target_include_directories(fuzz_${name} PRIVATE src fuzz)
    target_compile_options(fuzz_${name} PRIVATE ${COLLPLAN_FUZZ_FLAGS} -fsanitize=fuzzer)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    add_dependencies(collplan_fuzz fuzz_${name})
  endforeach()
endif()
