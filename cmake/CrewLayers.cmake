# The layering check: the include graph of crew/ must be the CMake link graph.
#
# crew_add_module records each module (its folder, excluded sub-folders, crew_* deps);
# crew_add_layering_test() writes that graph to the build tree and registers the ctest
# `architecture.layering`, which runs cmake/CheckLayers.cmake: every `#include "crew/..."`
# of a module must name a header of the module itself or of a module it links (directly or
# through its deps), and every direct crew_* dep must be used by an include, except the
# edges listed in CREW_LINK_ONLY_EDGES (a dependency through definitions, not headers).

function(crew_record_module name dir exclude deps)
  set(crew_deps "")
  foreach(dep IN LISTS deps)
    if(dep MATCHES "^crew_(.+)$")
      list(APPEND crew_deps ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY CREW_MODULES ${name})
  set_property(GLOBAL PROPERTY CREW_MODULE_${name}_DIR ${dir})
  set_property(GLOBAL PROPERTY CREW_MODULE_${name}_EXCLUDE "${exclude}")
  set_property(GLOBAL PROPERTY CREW_MODULE_${name}_DEPS "${crew_deps}")
endfunction()

function(crew_add_layering_test)
  get_property(modules GLOBAL PROPERTY CREW_MODULES)
  set(graph "set(CREW_MODULES ${modules})\n")
  foreach(m IN LISTS modules)
    foreach(field DIR EXCLUDE DEPS)
      get_property(value GLOBAL PROPERTY CREW_MODULE_${m}_${field})
      string(APPEND graph "set(CREW_MODULE_${m}_${field} \"${value}\")\n")
    endforeach()
  endforeach()
  string(APPEND graph "set(CREW_LINK_ONLY_EDGES \"${CREW_LINK_ONLY_EDGES}\")\n")
  file(WRITE ${PROJECT_BINARY_DIR}/crew_module_graph.cmake "${graph}")
  add_test(NAME architecture.layering
           COMMAND ${CMAKE_COMMAND} -DGRAPH=${PROJECT_BINARY_DIR}/crew_module_graph.cmake
                   -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -P ${PROJECT_SOURCE_DIR}/cmake/CheckLayers.cmake)
  set_tests_properties(architecture.layering PROPERTIES LABELS architecture TIMEOUT 60)
endfunction()

# The element-pointer check: `architecture.element_pointers` runs cmake/check_element_pointers.py
# over crew/ and python/src/ (no element pointers above the kernels); its self-test runs it
# over a fixture with such a use and must fail.
function(crew_add_element_pointer_test)
  find_program(CREW_PYTHON3 NAMES python3 REQUIRED)
  set(script ${PROJECT_SOURCE_DIR}/cmake/check_element_pointers.py)
  add_test(NAME architecture.element_pointers COMMAND ${CREW_PYTHON3} ${script} ${PROJECT_SOURCE_DIR})
  add_test(NAME architecture.element_pointers_refuses_a_loop
           COMMAND ${CREW_PYTHON3} ${script} ${PROJECT_SOURCE_DIR}/tests/architecture/fixture crew)
  set_tests_properties(architecture.element_pointers_refuses_a_loop PROPERTIES
                       PASS_REGULAR_EXPRESSION "crew/nn/loop_above_kernels.cpp:8: float\\* p = x.data<float>\\(\\);")
  set_tests_properties(architecture.element_pointers architecture.element_pointers_refuses_a_loop
                       PROPERTIES LABELS architecture TIMEOUT 60)
endfunction()
