# twemproxy: nutcracker's `distribution: ketama` (src/alg_twemproxy.h).  MD5
# from libcrypto and CRC-32 from zlib, both already linked into ringcore.
# The point counts are float arithmetic reproduced step by step: no fused
# multiply-add.
target_sources(ringcore PRIVATE ${CMAKE_SOURCE_DIR}/src/alg_twemproxy.c)
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/alg_twemproxy.c PROPERTIES
                            COMPILE_OPTIONS -ffp-contract=off)

add_executable(test_alg_twemproxy tests/test_alg_twemproxy.c)
target_link_libraries(test_alg_twemproxy PRIVATE ringcore PkgConfig::CMOCKA)
add_test(NAME unit_alg_twemproxy COMMAND test_alg_twemproxy)

# Against the real nutcracker (Debian's nutcracker, installed by
# scripts/install-deps.sh --test) with small loopback memcached backends;
# exit 77 (skipped) without nutcracker.
add_executable(twemproxy_tool tests/ref/twemproxy_tool.c)
target_link_libraries(twemproxy_tool PRIVATE ringcore)
add_test(NAME ref_twemproxy COMMAND /usr/bin/python3
         ${CMAKE_SOURCE_DIR}/tests/ref/twemproxy_ref.py $<TARGET_FILE:twemproxy_tool>)
find_program(TWEMPROXY_PROGRAM nutcracker PATHS /usr/sbin /sbin)
if(TWEMPROXY_PROGRAM)
  set_tests_properties(ref_twemproxy PROPERTIES TIMEOUT 180) # exit 77 (no nutcracker) fails too
elseif(RINGSIM_REQUIRE_REFS)
  message(FATAL_ERROR "nutcracker is needed by the tests (Debian package nutcracker; scripts/install-deps.sh --test)")
else()
  message(WARNING "nutcracker not found: ref_twemproxy is skipped (Debian package nutcracker)")
  set_tests_properties(ref_twemproxy PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
endif()
