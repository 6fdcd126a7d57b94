# layersec_module(NAME DEPS ...): builds src/layersec/NAME into the library
# layersec_NAME from every .cc there except *_test.cc, and every *_test.cc
# into the test binary NAME_test (GoogleTest, discovered by ctest).
# Source lists are globbed with CONFIGURE_DEPENDS so new files join the build.
function(layersec_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;TEST_DEPS" ${ARGN})
  set(dir "${PROJECT_SOURCE_DIR}/src/layersec/${name}")
  file(GLOB_RECURSE all_cc CONFIGURE_DEPENDS "${dir}/*.cc")
  set(lib_cc "")
  set(test_cc "")
  foreach(f IN LISTS all_cc)
    if(f MATCHES "_test\\.cc$")
      list(APPEND test_cc "${f}")
    else()
      list(APPEND lib_cc "${f}")
    endif()
  endforeach()
  if(lib_cc)
    add_library(layersec_${name} STATIC ${lib_cc})
    target_include_directories(layersec_${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(layersec_${name} PUBLIC ${ARG_DEPS})
  else()
    add_library(layersec_${name} INTERFACE)
    target_include_directories(layersec_${name} INTERFACE "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(layersec_${name} INTERFACE ${ARG_DEPS})
  endif()
  add_library(layersec::${name} ALIAS layersec_${name})
  if(LAYERSEC_TESTS AND test_cc)
    add_executable(${name}_test ${test_cc})
    target_link_libraries(${name}_test PRIVATE layersec_${name} layersec_testing ${ARG_TEST_DEPS}
                          GTest::gtest GTest::gtest_main GTest::gmock)
    gtest_discover_tests(${name}_test
      WORKING_DIRECTORY "${PROJECT_BINARY_DIR}"
      PROPERTIES ENVIRONMENT "LAYERSEC_VECTORS_DIR=${LAYERSEC_VECTORS_DIR};LAYERSEC_SOURCE_DIR=${PROJECT_SOURCE_DIR};LAYERSEC_BINARY_DIR=${PROJECT_BINARY_DIR}"
      DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
