# The include rules of cmake/dts_layers.cmake, checked again on the tree (the include_rules test):
#   cmake -DRULES=<build>/include_rules.cmake -DROOT=<source tree> -P check_includes.cmake
# Prints each violation and fails when there is one.
cmake_minimum_required(VERSION 3.22)
include(${CMAKE_CURRENT_LIST_DIR}/dts_layers.cmake)
get_filename_component(ROOT "${ROOT}" ABSOLUTE)
include(${RULES})
dts_check_include_rules(${ROOT} "${DTS_INCLUDE_RULES}" found)
if(found)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR "include rules (cmake/dts_layers.cmake):\n  ${text}")
endif()
list(LENGTH DTS_INCLUDE_RULES n)
message(STATUS "include rules: ${n} libraries, no violation")
