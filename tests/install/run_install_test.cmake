# The `install` test: installs railsim from BUILD_DIR into a fresh prefix under WORK_DIR, then
# configures, builds and runs tests/install/consumer against it (find_package(railsim) only; the
# consumer never sees the source tree), and runs the installed `railsim compare --no-perf` once.
#
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... -DGENERATOR=... [-DMAKE_PROGRAM=...]
#         [-DCXX_COMPILER=...] [-DCOMPILER_LAUNCHER=...] [-DBUILD_TYPE=...] [-DCONFIG=...]
#         [-DBINDIR=bin]
#         -P run_install_test.cmake
cmake_minimum_required(VERSION 3.25)
foreach(v BUILD_DIR WORK_DIR CONSUMER_DIR GENERATOR)
  if(NOT ${v})
    message(FATAL_ERROR "install test: ${v} not set")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${prefix} ${consumer_build})

function(run what)
  cmake_parse_arguments(R "" "OUTPUT" "COMMAND" ${ARGN})
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND ${R_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TIMESTAMP t1 "%s")
  math(EXPR dt "${t1} - ${t0}")
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${R_COMMAND}")
    message(FATAL_ERROR "install test: ${what} failed (exit ${rc}): ${cmd}\n${out}\n${err}")
  endif()
  message("install test: ${what}: ok (${dt} s)")
  if(R_OUTPUT)
    set(${R_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

set(config_args "")
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()

# 1. Install into the temporary prefix.
run("cmake --install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
    ${config_args})
foreach(f include/railsim/topo/builders.hpp include/railsim/core/error.hpp)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install test: ${prefix}/${f} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE config_files ${prefix}/*/railsimConfig.cmake)
if(NOT config_files)
  message(FATAL_ERROR "install test: no railsimConfig.cmake under ${prefix}")
endif()

# 2. Configure and build the consumer with the same generator and compiler.
set(configure_args -S ${CONSUMER_DIR} -B ${consumer_build} -G ${GENERATOR}
                   -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(CXX_COMPILER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(COMPILER_LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${COMPILER_LAUNCHER})
endif()
if(BUILD_TYPE)
  list(APPEND configure_args -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
endif()
run("configure the consumer" COMMAND ${CMAKE_COMMAND} ${configure_args} OUTPUT configure_out)
# The package must come from the prefix, not from the build tree or a package registry.
file(STRINGS ${consumer_build}/CMakeCache.txt found_dir REGEX "^railsim_DIR:")
string(REGEX REPLACE "^railsim_DIR:[A-Z]*=" "" found_dir "${found_dir}")
file(REAL_PATH ${prefix} real_prefix)
file(REAL_PATH "${found_dir}" real_found)
string(FIND "${real_found}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "install test: railsim found in ${found_dir}, not under ${prefix}")
endif()
run("build the consumer" COMMAND ${CMAKE_COMMAND} --build ${consumer_build} ${config_args})

# 3. Run it and check what it printed.
set(exe ${consumer_build}/rail_only_1024)
if(CONFIG AND EXISTS ${consumer_build}/${CONFIG}/rail_only_1024)
  set(exe ${consumer_build}/${CONFIG}/rail_only_1024)
endif()
run("run the consumer" COMMAND ${exe} OUTPUT out)
message("${out}")
foreach(expected
        "rail_only: 1024 GPUs, 1 tier\\(s\\), 8 switches \\(fabric graph: 8\\)"
        "rail_optimized: 1024 GPUs, 2 tier\\(s\\), 24 switches \\(fabric graph: 24\\)"
        "rail_only cost saving \\(paper-ratio\\): 62.5%"
        "bad input: --hb-domain: "
        "consumer: OK")
  if(NOT out MATCHES "${expected}")
    message(FATAL_ERROR "install test: the consumer's output lacks '${expected}'")
  endif()
endforeach()

# 4. The installed program runs from the prefix (its presets are compiled in).
if(NOT BINDIR)
  set(BINDIR bin)
endif()
run("installed railsim compare --no-perf" COMMAND ${prefix}/${BINDIR}/railsim compare --no-perf
    OUTPUT out)
message("${out}")
if(NOT out MATCHES "rail_only" OR NOT out MATCHES "rail_optimized")
  message(FATAL_ERROR "install test: `railsim compare --no-perf` printed no design table")
endif()
message("install test: passed")
