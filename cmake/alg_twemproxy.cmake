# twemproxy: nutcracker's `distribution: ketama` (src/alg/alg_twemproxy.h).
# Its test (the core is built in src/alg/CMakeLists.txt).

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
