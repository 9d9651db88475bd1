# Layering check (ctest `layering`): fails when a module's code includes a module it may not use.
#
#   cmake -DSOURCE_DIR=<repository root> -P cmake/check_layering.cmake
#
# Scans every file under src/<m>/, include/railsim/<m>/ and tests/<m>/ for lines
# `#include "railsim/<x>/..."` (or <railsim/<x>/...>) and checks <x> against the graph in
# cmake/railsim_modules.cmake (the module itself and its dependencies, transitively): a module's
# tests link that module only (CMakeLists.txt), so they may use what it may. Also fails on a module
# folder the graph does not know and on a library include that climbs out of its folder ("../";
# tests share helpers in tests/common/ that way).
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repository root> -P check_layering.cmake")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/railsim_modules.cmake)

set(violations "")
set(checked 0)

# Module folders that the graph does not list.
foreach(root src include/railsim)
  file(GLOB entries LIST_DIRECTORIES true RELATIVE ${SOURCE_DIR}/${root} ${SOURCE_DIR}/${root}/*)
  foreach(e ${entries})
    if(IS_DIRECTORY ${SOURCE_DIR}/${root}/${e} AND NOT e IN_LIST RAILSIM_MODULES)
      list(APPEND violations
           "${root}/${e}/: module '${e}' is not in cmake/railsim_modules.cmake (add it and its dependencies there)")
    endif()
  endforeach()
endforeach()

foreach(m ${RAILSIM_MODULES})
  railsim_module_closure(${m} allowed)
  file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR}
       ${SOURCE_DIR}/src/${m}/* ${SOURCE_DIR}/include/railsim/${m}/* ${SOURCE_DIR}/tests/${m}/*)
  list(SORT files)
  foreach(f ${files})
    if(NOT f MATCHES "\\.(h|hh|hpp|hxx|c|cc|cpp|cxx|ipp|inl|tpp)$")
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${SOURCE_DIR}/${f} lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line ${lines})
      if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*[<\"]railsim/([^/\">]+)/")
        set(used ${CMAKE_MATCH_1})
        if(NOT used IN_LIST allowed)
          string(REPLACE ";" " " allowed_text "${allowed}")
          list(APPEND violations
               "${f}: ${m} includes railsim/${used}/ (${m} may use: ${allowed_text})")
        endif()
      elseif(NOT f MATCHES "^tests/" AND line MATCHES "^[ \t]*#[ \t]*include[ \t]*[<\"][^\">]*\\.\\./")
        list(APPEND violations "${f}: '${line}' reaches outside its folder; include \"railsim/<module>/...\"")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(LENGTH violations n)
  foreach(v ${violations})
    message("layering violation: ${v}")
  endforeach()
  message(FATAL_ERROR "layering: ${n} violation(s) of the module graph in cmake/railsim_modules.cmake")
endif()
message("layering: ${checked} files checked, every include follows cmake/railsim_modules.cmake")
