# crew_add_module(name [DIR path] [EXCLUDE subdir...] DEPS ...): library crew_<name> from every
# .cpp under crew/<path> (default crew/<name>) except those under the EXCLUDE sub-folders, which
# are modules of their own (crew/distributed/store is crew_store, below crew_distributed).
function(crew_add_module name)
  cmake_parse_arguments(ARG "" "DIR" "DEPS;EXCLUDE" ${ARGN})
  if(NOT ARG_DIR)
    set(ARG_DIR ${name})
  endif()
  set(root ${PROJECT_SOURCE_DIR}/crew/${ARG_DIR})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${root}/*.cpp)
  foreach(sub IN LISTS ARG_EXCLUDE)
    list(FILTER sources EXCLUDE REGEX "^${root}/${sub}/")
  endforeach()
  crew_record_module(${name} "${ARG_DIR}" "${ARG_EXCLUDE}" "${ARG_DEPS}")  # CrewLayers.cmake
  if(NOT sources)
    add_library(crew_${name} INTERFACE)
    target_include_directories(crew_${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(crew_${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(crew_${name} STATIC ${sources})
  target_include_directories(crew_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(crew_${name} PUBLIC ${ARG_DEPS})
  target_compile_options(crew_${name} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(name STREQUAL "tensor")
    target_include_directories(crew_${name} PRIVATE ${CREW_CBLAS_INCLUDE_DIR})
  endif()
endfunction()

# crew_add_test_suite(module [TIMEOUT s] [DEPS ...]): one gtest binary from tests/<module>/*_test.cpp;
# its tests are named and labelled after the module (ctest -L distributed); see below for `faults`.
function(crew_add_test_suite module)
  cmake_parse_arguments(ARG "" "TIMEOUT" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/${module}/*_test.cpp)
  if(NOT sources)
    return()
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(target crew_${module}_tests)
  add_executable(${target} ${sources})
  target_link_libraries(${target} PRIVATE crew_testing crew_${module} ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR} ${CREW_CBLAS_INCLUDE_DIR})
  # Suites named *Fault (DesyncFault, ResumeFault, ...) are fault-injection tests: they carry the
  # label `faults` besides the module's (ctest -L faults). gtest_discover_tests splits a label
  # list in PROPERTIES, so the second label is added by a small include run after discovery.
  gtest_discover_tests(${target}
    TEST_PREFIX "${module}."
    TEST_FILTER "-*Fault.*"
    DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS ${module})
  gtest_discover_tests(${target}
    TEST_PREFIX "${module}."
    TEST_FILTER "*Fault.*"
    TEST_LIST ${target}_FAULT_TESTS
    DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS ${module})
  set(label_script "${CMAKE_CURRENT_BINARY_DIR}/${target}_fault_labels.cmake")
  file(WRITE "${label_script}"
    "foreach(t IN LISTS ${target}_FAULT_TESTS)\n"
    "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${module};faults\")\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${label_script}")
endfunction()
