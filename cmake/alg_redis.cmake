# redis: Redis Cluster hash slots and redis-cli's slot moves (src/alg/alg_redis.c).

add_executable(test_alg_redis tests/test_alg_redis.c)
target_link_libraries(test_alg_redis PRIVATE ringcore PkgConfig::CMOCKA)
add_test(NAME unit_alg_redis COMMAND test_alg_redis)

# Against the real redis-server and redis-cli (Debian's redis 7.0.15).
add_executable(redis_tool tests/ref/redis_tool.c)
target_link_libraries(redis_tool PRIVATE ringcore)
# The reference runs in the plain build only: under the sanitizers it would
# prove the same (the core's unit test runs there) at twice the cost.
if(NOT RINGSIM_SANITIZE)
  add_test(NAME ref_redis COMMAND bash ${CMAKE_SOURCE_DIR}/tests/ref/redis_ref.sh
           $<TARGET_FILE:redis_tool>)
  # exit 77 (no redis) is a failure too: make test installs redis-server
  set_tests_properties(ref_redis PROPERTIES LABELS "ref" TIMEOUT 400)
endif()
