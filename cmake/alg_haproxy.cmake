# haproxy: HAProxy's `hash-type consistent` (src/alg/alg_haproxy.h).  No library.

add_executable(test_alg_haproxy tests/test_alg_haproxy.c)
target_link_libraries(test_alg_haproxy PRIVATE ringcore PkgConfig::CMOCKA)
add_test(NAME unit_alg_haproxy COMMAND test_alg_haproxy)

# Against the real haproxy (Debian's haproxy, installed by
# scripts/install-deps.sh --test): the script starts it with small loopback
# HTTP backends and stops everything; exit 77 (skipped) without haproxy.
add_executable(haproxy_tool tests/ref/haproxy_tool.c)
target_link_libraries(haproxy_tool PRIVATE ringcore)
add_test(NAME ref_haproxy COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/ref/haproxy_ref.py
         $<TARGET_FILE:haproxy_tool>)
find_program(HAPROXY_PROGRAM haproxy PATHS /usr/sbin /sbin)
if(HAPROXY_PROGRAM)
  set_tests_properties(ref_haproxy PROPERTIES TIMEOUT 180) # exit 77 (no haproxy) fails too
elseif(RINGSIM_REQUIRE_REFS)
  message(FATAL_ERROR "haproxy is needed by the tests (Debian package haproxy; scripts/install-deps.sh --test)")
else()
  message(WARNING "haproxy not found: ref_haproxy is skipped (Debian package haproxy)")
  set_tests_properties(ref_haproxy PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
endif()
