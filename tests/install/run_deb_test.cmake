# The Debian package: cpack -G DEB in the build folder, dpkg-deb -x into a scratch folder, then the
# packaged `railsim compare --no-perf` and (when built) `import railsim` from there.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${CPACK} -G DEB -B ${WORK_DIR}/out
                WORKING_DIRECTORY ${BUILD_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cpack failed:\n${out}")
endif()
file(GLOB debs ${WORK_DIR}/out/*.deb)
list(LENGTH debs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one .deb in ${WORK_DIR}/out, found ${n}")
endif()
execute_process(COMMAND ${DPKG_DEB} --field ${debs} Package Depends
                RESULT_VARIABLE rc OUTPUT_VARIABLE fields)
if(NOT rc EQUAL 0 OR NOT fields MATCHES "Package: railsim" OR NOT fields MATCHES "libtbb12")
  message(FATAL_ERROR "unexpected package fields:\n${fields}")
endif()
execute_process(COMMAND ${DPKG_DEB} -x ${debs} ${WORK_DIR}/root RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dpkg-deb -x failed")
endif()
execute_process(COMMAND ${WORK_DIR}/root/usr/bin/railsim compare --no-perf --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"rail_only\"")
  message(FATAL_ERROR "the packaged railsim failed (${rc}):\n${err}")
endif()
foreach(f include/railsim/topo/fabric.hpp share/bash-completion/completions/railsim)
  if(NOT EXISTS ${WORK_DIR}/root/usr/${f})
    message(FATAL_ERROR "the package has no /usr/${f}")
  endif()
endforeach()
if(WITH_PYTHON)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${WORK_DIR}/root/usr/lib/python3/dist-packages
            ${PYTHON} -c "import railsim; print(railsim.design(gpus=1024, design='rail_only').tiers)"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^1")
    message(FATAL_ERROR "the packaged Python module failed (${rc}): ${out}\n${err}")
  endif()
endif()
file(REMOVE_RECURSE ${WORK_DIR})
