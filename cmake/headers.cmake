# Per-target include directories (issue 28). Sources include project
# headers as "module/name.h" from the source root; an include path of the
# source root would let any file include any module's private header. So
# no target gets the source root: each module's headers are linked
# (symbolic links, made at configure time) into two trees in the build
# directory,
#   BUILD/include/MOD-public/MOD/   every MOD/*.h but *_int.h (+ PUBLIC files)
#   BUILD/include/MOD-private/MOD/  the MOD/*_int.h (+ PRIVATE files)
# and cdplan_module_headers gives the module's target the first PUBLIC (so
# every target that links it, and only those, sees its public headers) and
# the second PRIVATE. Including another module's _int.h, or a header of a
# module the target does not link, then fails to compile. tests/ and fuzz/
# are white-box and keep the source root (tests/CMakeLists.txt).

# cdplan_header_tree(MOD PUBVAR PRIVVAR [PUBLIC files...] [PRIVATE files...]):
# build MOD's two trees; PUBVAR/PRIVVAR get their roots. Extra files are
# paths under MOD/ (e.g. errors.def, gpu/kinds.def).
function(cdplan_header_tree mod pubvar privvar)
  cmake_parse_arguments(H "" "" "PUBLIC;PRIVATE" ${ARGN})
  set(pub ${CMAKE_BINARY_DIR}/include/${mod}-public)
  set(priv ${CMAKE_BINARY_DIR}/include/${mod}-private)
  file(REMOVE_RECURSE ${pub} ${priv})
  file(MAKE_DIRECTORY ${pub}/${mod} ${priv}/${mod})
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${mod}/*.h)
  set(pub_files ${H_PUBLIC})
  set(priv_files ${H_PRIVATE})
  foreach(h ${headers})
    get_filename_component(name ${h} NAME)
    if(name MATCHES "_int\\.h$")
      list(APPEND priv_files ${name})
    else()
      list(APPEND pub_files ${name})
    endif()
  endforeach()
  foreach(kind pub priv)
    foreach(f ${${kind}_files})
      get_filename_component(sub ${f} DIRECTORY)
      file(MAKE_DIRECTORY ${${kind}}/${mod}/${sub})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${mod}/${f} ${${kind}}/${mod}/${f} SYMBOLIC)
    endforeach()
  endforeach()
  set(${pubvar} ${pub} PARENT_SCOPE)
  set(${privvar} ${priv} PARENT_SCOPE)
endfunction()

# cdplan_module_headers(TARGET MOD [PUBLIC files...] [PRIVATE files...])
function(cdplan_module_headers target mod)
  cdplan_header_tree(${mod} pub priv ${ARGN})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    target_include_directories(${target} PRIVATE ${pub} ${priv})
  else()
    target_include_directories(${target} PUBLIC ${pub} PRIVATE ${priv})
  endif()
endfunction()

# The ctests arch_include_dirs_*: the include directories do stop what the
# issue asks them to stop. Each probe is a one-line source compiled (by
# ctest, through the build system) with the include directories of a
# target that links cdplan_server (the transport) or cdplan_api (a
# benchmark): _ok includes public headers it may use and must compile;
# _int (another module's private header), _unlinked (a module the
# transport does not link) and _bench_int (the planner's private header
# from a benchmark's view) must fail with "not found".
function(cdplan_include_probes)
  set(dir ${CMAKE_BINARY_DIR}/include-probe)
  file(WRITE ${dir}/ok.c "#include \"api/api.h\"\n#include \"common/common.h\"\n"
    "int cdplan_probe_ok(void);\nint cdplan_probe_ok(void) { return SVC_OK; }\n")
  file(WRITE ${dir}/int.c "#include \"api/api_int.h\"\n")
  file(WRITE ${dir}/unlinked.c "#include \"hwdb/hwdb.h\"\n")
  file(WRITE ${dir}/bench_int.c "#include \"planner/planner_int.h\"\n")
  foreach(p ok int unlinked bench_int)
    add_library(cdplan_probe_${p} OBJECT EXCLUDE_FROM_ALL ${dir}/${p}.c)
    if(p STREQUAL "bench_int")
      target_link_libraries(cdplan_probe_${p} PRIVATE cdplan_api)
    else()
      target_link_libraries(cdplan_probe_${p} PRIVATE cdplan_server)
    endif()
    add_test(NAME arch_include_dirs_${p}
      COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target cdplan_probe_${p})
    # one build at a time in the shared build tree
    set_tests_properties(arch_include_dirs_${p} PROPERTIES RESOURCE_LOCK cdplan_build_tree)
    if(NOT p STREQUAL "ok")
      file(STRINGS ${dir}/${p}.c line LIMIT_COUNT 1)
      string(REGEX REPLACE "^#include \"([^\"]*)\".*$" "\\1" hdr "${line}")
      string(REPLACE "." "\\." hdr "${hdr}")
      set_tests_properties(arch_include_dirs_${p} PROPERTIES
        PASS_REGULAR_EXPRESSION "${hdr}(: No such file or directory|' file not found)")
    endif()
  endforeach()
endfunction()
