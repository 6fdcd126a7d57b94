# layersec_module(NAME DEPS ... [CORE] [IO stem... IO_DEPS ...] [TEST_DEPS ...]):
# builds src/layersec/NAME into the library layersec_NAME from every .cc there
# except *_test.cc, and every *_test.cc into the test binary NAME_test
# (GoogleTest, discovered by ctest).
#
# A protocol module is marked CORE. Its sources are then split in two:
#   layersec_NAME_core  every source not listed under IO: codecs and state
#                       machines, time and frames passed in. Links DEPS only;
#                       it may include no socket, poll, thread, filesystem,
#                       fstream or clock header and no layersec/net header,
#                       and reads no clock (checked by the ctest shape.core_NAME,
#                       tests/shape/check_core.sh).
#   layersec_NAME_io    the files whose stem is listed under IO (STEM.cc and
#                       STEM.h): sockets, links, files, clocks. Links the core
#                       and IO_DEPS (e.g. layersec_net, libnl).
#   layersec_NAME       an interface library of both (what other modules and
#                       the tests link).
# Source lists are globbed with CONFIGURE_DEPENDS so new files join the build.
function(layersec_module name)
  cmake_parse_arguments(ARG "CORE" "" "DEPS;TEST_DEPS;IO;IO_DEPS" ${ARGN})
  set(dir "${PROJECT_SOURCE_DIR}/src/layersec/${name}")
  file(GLOB_RECURSE all_cc CONFIGURE_DEPENDS "${dir}/*.cc")
  file(GLOB_RECURSE all_h CONFIGURE_DEPENDS "${dir}/*.h")
  set(lib_cc "")
  set(test_cc "")
  set(io_cc "")
  set(core_files "")
  foreach(f IN LISTS all_cc all_h)
    get_filename_component(stem "${f}" NAME_WE)
    if(f MATCHES "_test\\.cc$" OR f MATCHES "_test_support\\.h$" OR f MATCHES "test_support\\.h$")
      if(f MATCHES "\\.cc$")
        list(APPEND test_cc "${f}")
      endif()
    elseif(stem IN_LIST ARG_IO)
      if(f MATCHES "\\.cc$")
        list(APPEND io_cc "${f}")
      endif()
    else()
      list(APPEND core_files "${f}")
      if(f MATCHES "\\.cc$")
        list(APPEND lib_cc "${f}")
      endif()
    endif()
  endforeach()
  foreach(stem IN LISTS ARG_IO)
    if(NOT EXISTS "${dir}/${stem}.cc" AND NOT EXISTS "${dir}/${stem}.h")
      message(FATAL_ERROR "layersec_module(${name}): IO lists ${stem}, but ${dir} has no ${stem}.cc or ${stem}.h")
    endif()
  endforeach()

  if(ARG_CORE)
    add_library(layersec_${name}_core STATIC ${lib_cc})
    target_include_directories(layersec_${name}_core PUBLIC "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(layersec_${name}_core PUBLIC ${ARG_DEPS})
    add_library(layersec::${name}_core ALIAS layersec_${name}_core)
    add_library(layersec_${name} INTERFACE)
    target_link_libraries(layersec_${name} INTERFACE layersec_${name}_core)
    if(io_cc)
      add_library(layersec_${name}_io STATIC ${io_cc})
      target_link_libraries(layersec_${name}_io PUBLIC layersec_${name}_core ${ARG_IO_DEPS})
      add_library(layersec::${name}_io ALIAS layersec_${name}_io)
      target_link_libraries(layersec_${name} INTERFACE layersec_${name}_io)
    endif()
    string(REPLACE ";" "\n" core_lines "${core_files}")
    file(WRITE "${PROJECT_BINARY_DIR}/shape/core_${name}.txt" "${core_lines}\n")
    if(LAYERSEC_TESTS)
      add_test(NAME shape.core_${name}
               COMMAND bash "${PROJECT_SOURCE_DIR}/tests/shape/check_core.sh" "${name}"
                       "${PROJECT_BINARY_DIR}/shape/core_${name}.txt" $<TARGET_FILE:layersec_${name}_core>
                       $<TARGET_FILE:layersec_net>)
    endif()
  else()
    if(ARG_IO)
      message(FATAL_ERROR "layersec_module(${name}): IO needs CORE")
    endif()
    list(APPEND lib_cc ${io_cc})
    if(lib_cc)
      add_library(layersec_${name} STATIC ${lib_cc})
      target_include_directories(layersec_${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
      target_link_libraries(layersec_${name} PUBLIC ${ARG_DEPS})
    else()
      add_library(layersec_${name} INTERFACE)
      target_include_directories(layersec_${name} INTERFACE "${PROJECT_SOURCE_DIR}/src")
      target_link_libraries(layersec_${name} INTERFACE ${ARG_DEPS})
    endif()
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
