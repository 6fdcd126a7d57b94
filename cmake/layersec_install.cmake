# Installation of layersec as a library (docs/install.md, docs/api.md):
#   include/layersec/...      the public headers of the exported modules and the
#                             headers they include (computed, see below)
#   lib/liblayersec_*.a       the static libraries of those modules and of the
#                             in-tree libraries they link
#   lib/cmake/layersec/       find_package(layersec): targets layersec::NAME
#   lib/pkgconfig/            layersec-NAME.pc per exported target
#   bin/layersec              the CLI, and bin/layersec-node (component cli)
#   share/layersec/           the known-answer vectors `layersec selftest` reads
#   share/doc/layersec/       README, docs/, examples/ (component docs)
# Components: dev (headers, libraries, CMake and pkg-config files), cli, data,
# docs. `cmake --install BUILD --component dev` is what a consumer needs.
#
# Included from the top-level CMakeLists.txt after every module is defined; it
# only adds properties (BUILD_INTERFACE include paths, EXPORT_NAME, C++20 as a
# usage requirement) and install rules, so the in-tree build is unchanged.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The modules an integrator links, each with its public entry headers (the
# API that docs/api.md promises). Everything else under src/ is internal: not
# installed unless a public header includes it.
set(LAYERSEC_PUBLIC_MODULES base crypto net tsn secoc someip macsec mka sv kex ptp)
set(LAYERSEC_PUBLIC_HEADERS_base bytes.h result.h secret.h time.h hex.h keyfile.h)
set(LAYERSEC_PUBLIC_HEADERS_crypto aead.h mac.h kdf.h)
set(LAYERSEC_PUBLIC_HEADERS_net event_loop.h udp_socket.h frame.h sim.h sim_host.h)
set(LAYERSEC_PUBLIC_HEADERS_tsn taprio.h gate_control_list.h traffic_class.h stream_id.h egress_port.h)
set(LAYERSEC_PUBLIC_HEADERS_secoc engine.h config.h profile.h state_store.h key_ring.h)
set(LAYERSEC_PUBLIC_HEADERS_someip runtime.h runtime_config.h runtime_types.h transport.h
    socket_transport.h sim_transport.h loop_alarm.h message.h address.h error.h sd_types.h)
set(LAYERSEC_PUBLIC_HEADERS_macsec secy.h cipher_suite.h sectag.h replay_window.h pn_state.h
    sa_rotation.h static_sa_config.h)
set(LAYERSEC_PUBLIC_HEADERS_mka participant.h key_server.h mkpdu.h keys.h secy_driver.h sak_lifecycle.h)
set(LAYERSEC_PUBLIC_HEADERS_sv publisher.h subscriber.h security.h frame.h dataset.h stream.h
    profiles.h kdc.h)
set(LAYERSEC_PUBLIC_HEADERS_kex kem.h pki.h mode_b.h group_keys.h negotiation.h)
set(LAYERSEC_PUBLIC_HEADERS_ptp message.h servo.h peer_delay.h bmca.h time_aware_system.h)

set(LAYERSEC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/layersec")
set(LAYERSEC_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(_ls_src "${PROJECT_SOURCE_DIR}/src")

# --- the targets: the public modules and everything they link in-tree ------
# libntru has neither a CMake package nor a .pc file: the installed interface
# target links -lntru from the default library path.
if(TARGET layersec_ntru)
  set_property(TARGET layersec_ntru PROPERTY INTERFACE_INCLUDE_DIRECTORIES "$<BUILD_INTERFACE:${NTRU_INCLUDE_DIR}>")
  set_property(TARGET layersec_ntru PROPERTY INTERFACE_LINK_LIBRARIES
               "$<BUILD_INTERFACE:${NTRU_LIBRARY}>" "$<INSTALL_INTERFACE:ntru>")
endif()

set(_ls_roots "")
foreach(m IN LISTS LAYERSEC_PUBLIC_MODULES)
  list(APPEND _ls_roots layersec_${m})
endforeach()
set(_ls_targets "")
set(_ls_external "")
set(_ls_queue ${_ls_roots})
while(_ls_queue)
  list(POP_FRONT _ls_queue t)
  if(t IN_LIST _ls_targets)
    continue()
  endif()
  list(APPEND _ls_targets ${t})
  get_target_property(deps ${t} INTERFACE_LINK_LIBRARIES)
  if(NOT deps)
    continue()
  endif()
  foreach(d IN LISTS deps)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" d "${d}")
    if(TARGET ${d})
      get_target_property(imported ${d} IMPORTED)
      get_target_property(aliased ${d} ALIASED_TARGET)
      if(aliased)
        set(d ${aliased})
      endif()
      if(imported)
        list(APPEND _ls_external ${d})
      else()
        list(APPEND _ls_queue ${d})
      endif()
    elseif(NOT d MATCHES "^\\$<")
      list(APPEND _ls_external ${d})
    endif()
  endforeach()
endwhile()
list(REMOVE_DUPLICATES _ls_external)

# External dependencies: how the package config finds each imported target and
# which pkg-config modules (or plain flags) stand for it.
set(_ls_known_external OpenSSL::Crypto OpenSSL::SSL nlohmann_json::nlohmann_json PkgConfig::PCAP PkgConfig::LIBNL)
foreach(e IN LISTS _ls_external)
  if(NOT e IN_LIST _ls_known_external)
    message(FATAL_ERROR "cmake/layersec_install.cmake: an installed layersec library links ${e}; "
                        "teach layersecConfig.cmake.in and the pkg-config map below to find it")
  endif()
endforeach()
set(_ls_pc_OpenSSL::Crypto "libcrypto")
set(_ls_pc_OpenSSL::SSL "libssl")
set(_ls_pc_nlohmann_json::nlohmann_json "nlohmann_json")
set(_ls_pc_PkgConfig::PCAP "libpcap")
set(_ls_pc_PkgConfig::LIBNL "libnl-3.0 libnl-genl-3.0 libnl-route-3.0")

foreach(t IN LISTS _ls_targets)
  if(NOT t MATCHES "^layersec_")
    message(FATAL_ERROR "cmake/layersec_install.cmake: unexpected in-tree dependency ${t}")
  endif()
  string(REGEX REPLACE "^layersec_" "" export_name "${t}")
  set_property(TARGET ${t} PROPERTY EXPORT_NAME ${export_name})
  get_target_property(inc ${t} INTERFACE_INCLUDE_DIRECTORIES)
  if(inc)
    string(REPLACE "${_ls_src}" "$<BUILD_INTERFACE:${_ls_src}>" inc "${inc}")
    list(REMOVE_DUPLICATES inc)
    set_property(TARGET ${t} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${inc}")
  endif()
  get_target_property(type ${t} TYPE)
  if(NOT t STREQUAL "layersec_ntru")
    # Public headers use C++20: consumers get it as a usage requirement.
    target_compile_features(${t} INTERFACE cxx_std_20)
    if(type STREQUAL "INTERFACE_LIBRARY")
      target_include_directories(${t} INTERFACE "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
    endif()
  endif()
endforeach()
# base/result.h: Result's layout depends on LAYERSEC_RESULT_CHECKS (default:
# on unless NDEBUG). Consumers of the installed libraries get the libraries'
# value, whatever their own NDEBUG.
string(TOUPPER "${CMAKE_BUILD_TYPE}" _ls_bt)
if("${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_ls_bt}}" MATCHES "-DNDEBUG")
  set(LAYERSEC_RESULT_CHECKS_VALUE 0)
else()
  set(LAYERSEC_RESULT_CHECKS_VALUE 1)
endif()
target_compile_definitions(layersec_base INTERFACE "$<INSTALL_INTERFACE:LAYERSEC_RESULT_CHECKS=${LAYERSEC_RESULT_CHECKS_VALUE}>")
install(TARGETS ${_ls_targets} EXPORT layersecTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT dev
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT layersecTargets NAMESPACE layersec:: DESTINATION "${LAYERSEC_INSTALL_CMAKEDIR}"
        COMPONENT dev)
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/layersecConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/install/layersecConfig.cmake"
                              INSTALL_DESTINATION "${LAYERSEC_INSTALL_CMAKEDIR}")
# 0.x: a minor release may change the API (docs/api.md), so only the same
# minor version is compatible.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/install/layersecConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/install/layersecConfig.cmake"
              "${PROJECT_BINARY_DIR}/install/layersecConfigVersion.cmake"
        DESTINATION "${LAYERSEC_INSTALL_CMAKEDIR}" COMPONENT dev)

# --- headers: the public entry headers and every layersec header they include
set(_ls_headers "")
set(_ls_hqueue "")
foreach(m IN LISTS LAYERSEC_PUBLIC_MODULES)
  foreach(h IN LISTS LAYERSEC_PUBLIC_HEADERS_${m})
    if(NOT EXISTS "${_ls_src}/layersec/${m}/${h}")
      message(FATAL_ERROR "cmake/layersec_install.cmake: public header layersec/${m}/${h} does not exist")
    endif()
    list(APPEND _ls_hqueue "layersec/${m}/${h}")
  endforeach()
endforeach()
while(_ls_hqueue)
  list(POP_FRONT _ls_hqueue h)
  if(h IN_LIST _ls_headers)
    continue()
  endif()
  list(APPEND _ls_headers ${h})
  file(STRINGS "${_ls_src}/${h}" lines REGEX "^#include \"layersec/")
  foreach(l IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${l}")
    list(APPEND _ls_hqueue ${inc})
  endforeach()
endwhile()
list(SORT _ls_headers)
foreach(h IN LISTS _ls_headers)
  get_filename_component(dir "${h}" DIRECTORY)
  install(FILES "${_ls_src}/${h}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/${dir}" COMPONENT dev)
endforeach()
# The list, for tests/install/check_headers.sh and docs/api.md.
string(REPLACE ";" "\n" _ls_header_lines "${_ls_headers}")
file(WRITE "${PROJECT_BINARY_DIR}/install/public_headers.txt" "${_ls_header_lines}\n")
set(_ls_entry_lines "")
foreach(m IN LISTS LAYERSEC_PUBLIC_MODULES)
  foreach(h IN LISTS LAYERSEC_PUBLIC_HEADERS_${m})
    string(APPEND _ls_entry_lines "layersec/${m}/${h}\n")
  endforeach()
endforeach()
file(WRITE "${PROJECT_BINARY_DIR}/install/entry_headers.txt" "${_ls_entry_lines}")

# --- pkg-config: one file per exported target --------------------------------
# Two variants of each file: under the prefix /usr (the Debian package) the
# prefix is spelled /usr, so pkg-config recognises /usr/include and /usr/lib
# as system directories and leaves them out of --cflags/--libs; under any
# other prefix it is ${pcfiledir}/../.., so a staged (DESTDIR) or moved tree
# works as is. The install step picks the variant for CMAKE_INSTALL_PREFIX.
file(RELATIVE_PATH _ls_pc_to_prefix "/prefix/${LAYERSEC_INSTALL_PKGCONFIGDIR}" "/prefix")
set(_ls_pc_names "")
foreach(t IN LISTS _ls_targets)
  get_target_property(export_name ${t} EXPORT_NAME)
  string(REPLACE "_" "-" pc_name "layersec-${export_name}")
  get_target_property(type ${t} TYPE)
  get_target_property(deps ${t} INTERFACE_LINK_LIBRARIES)
  get_target_property(defs ${t} INTERFACE_COMPILE_DEFINITIONS)
  set(requires "")
  set(libs "")
  set(cflags "")
  if(type STREQUAL "STATIC_LIBRARY")
    set(libs "-L\${libdir} -l${t}")
    set(cflags "-I\${includedir}")
  endif()
  if(deps)
    foreach(d IN LISTS deps)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" d "${d}")
      if(TARGET ${d})
        get_target_property(aliased ${d} ALIASED_TARGET)
        if(aliased)
          set(d ${aliased})
        endif()
      endif()
      if(d IN_LIST _ls_targets)
        get_target_property(dn ${d} EXPORT_NAME)
        string(REPLACE "_" "-" dn "layersec-${dn}")
        string(APPEND requires " ${dn}")
      elseif(DEFINED _ls_pc_${d})
        string(APPEND requires " ${_ls_pc_${d}}")
      elseif(d MATCHES "INSTALL_INTERFACE:ntru")
        string(APPEND libs " -lntru")
      endif()
    endforeach()
  endif()
  if(defs)
    foreach(def IN LISTS defs)
      if(def MATCHES "^\\$<INSTALL_INTERFACE:(.*)>$")
        string(APPEND cflags " -D${CMAKE_MATCH_1}")
      elseif(NOT def MATCHES "^\\$<")
        string(APPEND cflags " -D${def}")
      endif()
    endforeach()
  endif()
  string(STRIP "${requires}" requires)
  string(STRIP "${libs}" libs)
  string(STRIP "${cflags}" cflags)
  set(_ls_pc_body "libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: ${pc_name}
Description: layersec ${export_name} (compile with -std=c++20; docs/api.md)
Version: ${PROJECT_VERSION}
Requires: ${requires}
Libs: ${libs}
Cflags: ${cflags}
")
  file(WRITE "${PROJECT_BINARY_DIR}/install/pkgconfig/${pc_name}.pc"
       "prefix=\${pcfiledir}/${_ls_pc_to_prefix}\n${_ls_pc_body}")
  file(WRITE "${PROJECT_BINARY_DIR}/install/pkgconfig-usr/${pc_name}.pc" "prefix=/usr\n${_ls_pc_body}")
  list(APPEND _ls_pc_names "${pc_name}.pc")
endforeach()
set(_ls_pc_files "")
foreach(f IN LISTS _ls_pc_names)
  string(APPEND _ls_pc_files " \"${PROJECT_BINARY_DIR}/install/pkgconfig\${_ls_pc_variant}/${f}\"")
endforeach()
install(CODE "
  set(_ls_pc_variant \"\")
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(_ls_pc_variant -usr)
  endif()
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${LAYERSEC_INSTALL_PKGCONFIGDIR}\" TYPE FILE
       FILES ${_ls_pc_files})
" COMPONENT dev)

# --- the CLI, its data and the documentation ---------------------------------
# layersec-node: the `node` command alone, which `layersec node` executes from
# the same directory (docs/node.md, "Footprint").
install(TARGETS layersec layersec-node RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT cli)
if(EXISTS "${LAYERSEC_VECTORS_DIR}")
  install(DIRECTORY "${LAYERSEC_VECTORS_DIR}/" DESTINATION "${CMAKE_INSTALL_DATADIR}/layersec/vectors"
          COMPONENT data)
else()
  message(WARNING "${LAYERSEC_VECTORS_DIR} is missing: the package's `layersec selftest` will lack the "
                  "shared vectors")
endif()
install(DIRECTORY "${PROJECT_SOURCE_DIR}/testdata/" DESTINATION "${CMAKE_INSTALL_DATADIR}/layersec/testdata"
        COMPONENT data)
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT docs)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs" COMPONENT docs)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/examples/" DESTINATION "${CMAKE_INSTALL_DOCDIR}/examples"
        COMPONENT docs)

# Everything the install rules copy, built without the tests and fuzzers:
# `cmake --build BUILD --target layersec_install_set` before `cmake --install`
# or cpack (make package).
add_custom_target(layersec_install_set DEPENDS layersec layersec-node ${_ls_targets})

# --- make package: one Debian package with every component -------------------
set(CPACK_PACKAGE_NAME layersec)
set(CPACK_PACKAGE_VENDOR "layersec")
set(CPACK_PACKAGE_CONTACT "layersec maintainers <layersec@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "SOME/IP+SecOC, MACsec, IEC 61850 SV security stack: CLI, static libraries, headers")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# Runtime dependencies of bin/layersec from its shared libraries (dpkg-shlibdeps).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What building against the installed libraries needs: apt installs
# Recommends by default, --no-install-recommends gives the CLI alone.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "g++ (>= 4:12), cmake (>= 3.25), pkg-config, libssl-dev (>= 3.0), nlohmann-json3-dev, libpcap-dev, libnl-3-dev, libnl-genl-3-dev, libnl-route-3-dev, libntru-0.5-dev")
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_COMPONENTS_ALL dev cli data docs)
include(CPack)
