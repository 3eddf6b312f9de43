# libringsim (API.md "Version 4: the placement library"): the base, alg and
# place libraries (src/base, src/alg, src/place: rs_base, rs_alg, rs_place) behind include/ringsim/ringsim.h,
# as libringsim.so.0 and libringsim.a, with ringsim.pc and ringsim(3); the
# Python module over it (python/, `import ringsim`); their tests and
# benchmark.  Installed by `make install` and in the .deb.

# What the three libraries link, and so libringsim.a's users (ringsim.pc's
# Requires.private and Libs.private say the same).
pkg_check_modules(RSLIB_DEPS REQUIRED IMPORTED_TARGET libcrypto jansson libxxhash zlib)
find_library(RSLIB_UNISTRING unistring REQUIRED)


include(GNUInstallDirs)
set(RSLIB_SRC ${CMAKE_SOURCE_DIR}/src/lib)
set(RSLIB_SYMS ${RSLIB_SRC}/ringsim.syms) # the exported names, one a line

# The library's own file, compiled once for both libraries.
add_library(ringsim_api OBJECT ${RSLIB_SRC}/ringsim.c)
target_include_directories(ringsim_api PUBLIC ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(ringsim_api PRIVATE rs_place)
target_compile_definitions(ringsim_api PRIVATE RINGSIM_LIB_VERSION="${PROJECT_VERSION}")
set_target_properties(ringsim_api PROPERTIES POSITION_INDEPENDENT_CODE ON)

# libringsim.so.0 -> libringsim.so.VERSION.  Only the names of ringsim.syms
# are exported (a version script made from the list), and every dependency
# must be linked (--no-undefined).
set(RSLIB_VERSION_SCRIPT ${CMAKE_BINARY_DIR}/libringsim.map)
file(STRINGS ${RSLIB_SYMS} RSLIB_NAMES)
list(JOIN RSLIB_NAMES ";\n    " RSLIB_GLOBAL)
file(CONFIGURE OUTPUT ${RSLIB_VERSION_SCRIPT}
     CONTENT "RINGSIM_0 {\n  global:\n    ${RSLIB_GLOBAL};\n  local:\n    *;\n};\n")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${RSLIB_SYMS})
add_library(ringsim_shared SHARED $<TARGET_OBJECTS:ringsim_api>)
target_link_libraries(ringsim_shared PRIVATE rs_base rs_alg rs_place)
target_include_directories(ringsim_shared INTERFACE ${CMAKE_SOURCE_DIR}/include)
target_link_options(ringsim_shared PRIVATE -Wl,--version-script=${RSLIB_VERSION_SCRIPT}
                    -Wl,--no-undefined)
set_target_properties(ringsim_shared PROPERTIES OUTPUT_NAME ringsim VERSION ${PROJECT_VERSION}
                      SOVERSION 0 LINK_DEPENDS ${RSLIB_VERSION_SCRIPT})

# libringsim.a: one relocatable object (ld -r) whose only global names are
# those of ringsim.syms (objcopy), so that a program linked statically never
# meets ringsim's internal names (place_build, name_check, vec_reserve...).
set(RSLIB_STATIC_O ${CMAKE_BINARY_DIR}/libringsim_static.o)
add_custom_command(
  OUTPUT ${RSLIB_STATIC_O}
  COMMAND ${CMAKE_LINKER} -r -o ${RSLIB_STATIC_O} $<TARGET_OBJECTS:ringsim_api>
          $<TARGET_OBJECTS:rs_base> $<TARGET_OBJECTS:rs_alg> $<TARGET_OBJECTS:rs_place>
  COMMAND ${CMAKE_OBJCOPY} --keep-global-symbols=${RSLIB_SYMS} ${RSLIB_STATIC_O}
  DEPENDS $<TARGET_OBJECTS:ringsim_api> $<TARGET_OBJECTS:rs_base> $<TARGET_OBJECTS:rs_alg>
          $<TARGET_OBJECTS:rs_place> ${RSLIB_SYMS}
  COMMAND_EXPAND_LISTS
  COMMENT "libringsim.a: one object, only ringsim_* names global")
add_library(ringsim_static STATIC ${RSLIB_STATIC_O})
add_dependencies(ringsim_static ringsim_api rs_base rs_alg rs_place) # the objects, made first
target_include_directories(ringsim_static INTERFACE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(ringsim_static INTERFACE PkgConfig::RSLIB_DEPS ${RSLIB_UNISTRING} m)
set_target_properties(ringsim_static PROPERTIES OUTPUT_NAME ringsim LINKER_LANGUAGE C)

# ringsim(3), compressed as ringsim(1) is.
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/ringsim.3.gz
  COMMAND gzip -9n -c ${CMAKE_SOURCE_DIR}/docs/ringsim.3 > ${CMAKE_BINARY_DIR}/ringsim.3.gz
  DEPENDS ${CMAKE_SOURCE_DIR}/docs/ringsim.3
  COMMENT "Compressing the library's manual page")
add_custom_target(manpage3 ALL DEPENDS ${CMAKE_BINARY_DIR}/ringsim.3.gz)

install(TARGETS ringsim_shared ringsim_static LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/ringsim/ringsim.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ringsim)
install(FILES ${CMAKE_BINARY_DIR}/ringsim.3.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man3)
# ringsim.pc names the prefix installed to, which `make install PREFIX=...`
# gives only then (cmake --install --prefix): configured at install time.
install(CODE "
  set(RINGSIM_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(RINGSIM_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(RINGSIM_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(RINGSIM_PC_VERSION \"${PROJECT_VERSION}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/cmake/ringsim.pc.in\" \"${CMAKE_BINARY_DIR}/pc/ringsim.pc\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\"
       TYPE FILE FILES \"${CMAKE_BINARY_DIR}/pc/ringsim.pc\")")

# ---- the Python module: Debian's python3 and python3-dev ----
# Not in the sanitizer builds: a module with ASan or TSan cannot be loaded
# into a python3 that is built without them.
if(NOT RINGSIM_SANITIZE AND NOT RINGSIM_TSAN)
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3) # Debian's, not one first on PATH
  endif()
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
  # ringsim.algorithms() from the catalogue itself (place_algorithms_json).
  add_executable(ringsim_gen_algorithms ${CMAKE_SOURCE_DIR}/python/gen_algorithms.c)
  target_link_libraries(ringsim_gen_algorithms PRIVATE rs_base rs_alg rs_place)
  add_custom_command(
    OUTPUT ${CMAKE_BINARY_DIR}/python/algorithms.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/python
    COMMAND ringsim_gen_algorithms ${CMAKE_BINARY_DIR}/python/algorithms.h
    DEPENDS ringsim_gen_algorithms
    COMMENT "The algorithms' names for the Python module")
  # Linked with libringsim.a: the module needs no library path and exports
  # PyInit_ringsim alone.
  Python3_add_library(ringsim_python MODULE WITH_SOABI ${CMAKE_SOURCE_DIR}/python/ringsimmodule.c
                      ${CMAKE_BINARY_DIR}/python/algorithms.h)
  target_include_directories(ringsim_python PRIVATE ${CMAKE_BINARY_DIR}/python)
  target_link_libraries(ringsim_python PRIVATE ringsim_static)
  set_target_properties(ringsim_python PROPERTIES OUTPUT_NAME ringsim
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/python)
  # The module replays a request log too (Placement.replay), as ringsim
  # trace counts it.
  add_test(NAME py_trace COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/trace_python_test.py
                                 $<TARGET_FILE:ringsim> ${CMAKE_BINARY_DIR}/python)
  # Debian's python3 path: /usr/lib/python3/dist-packages under /usr (the
  # .deb), lib/python3.X/dist-packages under any other prefix (/usr/local:
  # where Debian's python3 looks) -- decided at install time, as the prefix.
  set(RSPY_VERSIONED lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/dist-packages)
  install(CODE "
    if(\"\${CMAKE_INSTALL_PREFIX}\" MATCHES \"^/usr/?$\")
      set(_rspy lib/python3/dist-packages)
    else()
      set(_rspy ${RSPY_VERSIONED})
    endif()
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/\${_rspy}\" TYPE MODULE
         FILES \"$<TARGET_FILE:ringsim_python>\")")
endif()

# The installed library in the dynamic linker's cache (a real install only:
# DESTDIR and the .deb leave it to their own steps).
install(CODE "
  if(\"\$ENV{DESTDIR}\" STREQUAL \"\")
    execute_process(COMMAND ldconfig OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE _rs_ldconfig)
  endif()")

# The .deb: the library, its header and manual page, the Python module.
string(APPEND CPACK_PACKAGE_DESCRIPTION
       " It also ships libringsim, the placement algorithms as a C library (ringsim.h, "
       "pkg-config ringsim, ringsim(3)), and the Python module `import ringsim` over it.")
# A shlibs file for libringsim.so.0 and dpkg's ldconfig trigger.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

# ---- tests ----
# (a) the library against `ringsim lookup` for every algorithm on random
# nodes and keys (tests/test_lib.c prints its seed).
add_executable(test_lib ${CMAKE_SOURCE_DIR}/tests/test_lib.c)
target_link_libraries(test_lib PRIVATE ringsim_shared PkgConfig::RSLIB_DEPS)
# Under the sanitizers one round, not four: each round starts some 360
# ringsim processes: 4-12 s plain, 85 s under ASan.
if(RINGSIM_SANITIZE OR RINGSIM_TSAN)
  add_test(NAME lib_cli COMMAND ${CMAKE_COMMAND} -E env RINGSIM_LIB_ROUNDS=1
           $<TARGET_FILE:test_lib> $<TARGET_FILE:ringsim>)
else()
  add_test(NAME lib_cli COMMAND test_lib $<TARGET_FILE:ringsim>)
endif()
set_tests_properties(lib_cli PROPERTIES TIMEOUT 600 COST 60) # among the first to start
# Lookups from many threads at once give the one-thread answers (and run
# under ThreadSanitizer: make test-tsan).
add_executable(test_lib_threads ${CMAKE_SOURCE_DIR}/tests/test_lib_threads.c)
target_link_libraries(test_lib_threads PRIVATE ringsim_shared)
find_package(Threads REQUIRED)
target_link_libraries(test_lib_threads PRIVATE Threads::Threads)
add_test(NAME lib_threads COMMAND test_lib_threads)
if(NOT RINGSIM_SANITIZE AND NOT RINGSIM_TSAN)
  # (b) the installed copy: a program compiled with pkg-config (shared and
  # static), the installed Python module against `ringsim lookup`.
  add_test(NAME lib_install COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lib_install_test.sh
           ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
  set_tests_properties(lib_install PROPERTIES TIMEOUT 600)
  # (c) the ketama variant against the clients people use: Debian's
  # python3-uhashring and npm's hashring (exit 77 without them, a failure
  # when the references are required).
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import uhashring"
                  RESULT_VARIABLE RSLIB_UHASHRING_RC OUTPUT_QUIET ERROR_QUIET)
  find_program(RSLIB_NODE node)
  foreach(ref uhashring hashring)
    add_test(NAME ref_ketama_${ref} COMMAND ${Python3_EXECUTABLE}
             ${CMAKE_SOURCE_DIR}/tests/ref/ketama_clients_ref.py ${ref} ${CMAKE_BINARY_DIR}/python
             ${CMAKE_SOURCE_DIR})
    set_tests_properties(ref_ketama_${ref} PROPERTIES TIMEOUT 300)
  endforeach()
  set(RSLIB_MISSING_uhashring FALSE)
  set(RSLIB_MISSING_hashring FALSE)
  if(NOT RSLIB_UHASHRING_RC EQUAL 0)
    set(RSLIB_MISSING_uhashring TRUE)
  endif()
  if(NOT RSLIB_NODE OR NOT EXISTS ${CMAKE_SOURCE_DIR}/node_modules/hashring/package.json)
    set(RSLIB_MISSING_hashring TRUE)
  endif()
  foreach(ref uhashring hashring)
    if(RSLIB_MISSING_${ref} AND RINGSIM_REQUIRE_REFS AND ref STREQUAL "uhashring")
      message(FATAL_ERROR "python3-uhashring is needed by the tests (scripts/install-deps.sh --test)")
    elseif(RSLIB_MISSING_${ref} AND NOT RINGSIM_REQUIRE_REFS)
      message(WARNING "ref_ketama_${ref}: its reference is missing (python3-uhashring; npm's "
                      "hashring: npm ci): skipped")
      set_tests_properties(ref_ketama_${ref} PROPERTIES SKIP_RETURN_CODE 77)
    endif()
  endforeach()
endif()

# The library's C follows .clang-format too (the tests and benchmark with it).
find_program(RSLIB_CLANG_FORMAT clang-format)
if(RSLIB_CLANG_FORMAT AND NOT RINGSIM_SANITIZE AND NOT RINGSIM_TSAN)
  add_test(NAME lint_format_lib COMMAND ${RSLIB_CLANG_FORMAT} --dry-run --Werror
           ${RSLIB_SRC}/ringsim.c ${CMAKE_SOURCE_DIR}/include/ringsim/ringsim.h
           ${CMAKE_SOURCE_DIR}/python/ringsimmodule.c ${CMAKE_SOURCE_DIR}/python/gen_algorithms.c
           ${CMAKE_SOURCE_DIR}/tests/test_lib.c ${CMAKE_SOURCE_DIR}/tests/test_lib_threads.c
           ${CMAKE_SOURCE_DIR}/tests/lib_installed.c ${CMAKE_SOURCE_DIR}/bench/bench_lib.c)
  set_tests_properties(lint_format_lib PROPERTIES LABELS "lint")
endif()

# The benchmark (`make bench-lib`): the library's lookups beside the
# engine's own place_key path; bench/bench_python.py adds the Python module
# and uhashring.
add_executable(bench_lib ${CMAKE_SOURCE_DIR}/bench/bench_lib.c)
target_link_libraries(bench_lib PRIVATE ringsim_shared rs_base rs_alg rs_place Threads::Threads)
if(RINGSIM_SANITIZE OR RINGSIM_TSAN)
  set_target_properties(bench_lib PROPERTIES EXCLUDE_FROM_ALL TRUE)
endif()
