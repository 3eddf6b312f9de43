# Envoy's two hashing load balancers: RING_HASH ("envoy-ring") and MAGLEV
# ("maglev"), with what they share (alg_envoy.c: xxHash64 key hash, weight
# normalisation).  Envoy is not packaged in Debian, so the tests reproduce the
# expectations of Envoy's own unit tests (see tests/test_alg_envoy.c).
if(NOT TARGET PkgConfig::XXHASH)
  pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
endif()

add_executable(test_alg_envoy ${CMAKE_SOURCE_DIR}/tests/test_alg_envoy.c)
target_link_libraries(test_alg_envoy PRIVATE ringcore PkgConfig::CMOCKA PkgConfig::XXHASH)
add_test(NAME unit_alg_envoy COMMAND test_alg_envoy)

add_executable(bench_envoy ${CMAKE_SOURCE_DIR}/bench/bench_envoy.c)
target_link_libraries(bench_envoy PRIVATE ringcore PkgConfig::XXHASH)
