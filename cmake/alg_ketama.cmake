# ketama: libmemcached's weighted ketama continuum (src/alg/alg_ketama.h).
# The core is built with the others in src/alg/CMakeLists.txt; here are its
# test and benchmark.

# The test and the benchmark compare with the real libmemcached (Debian's
# libmemcached-dev, installed by scripts/install-deps.sh --test).  libhashkit
# (same package) lets the test ask libmemcached's dispatch for any hash value.
pkg_check_modules(KETAMA_MEMCACHED IMPORTED_TARGET libmemcached)
find_library(KETAMA_HASHKIT_LIB hashkit)
if(KETAMA_MEMCACHED_FOUND AND KETAMA_HASHKIT_LIB)
  add_executable(test_alg_ketama tests/test_alg_ketama.c)
  target_link_libraries(test_alg_ketama PRIVATE ringcore PkgConfig::CMOCKA
                        PkgConfig::KETAMA_MEMCACHED ${KETAMA_HASHKIT_LIB})
  add_test(NAME unit_alg_ketama COMMAND test_alg_ketama)
  add_executable(bench_ketama bench/bench_ketama.c)
  target_link_libraries(bench_ketama PRIVATE ringcore PkgConfig::KETAMA_MEMCACHED)
elseif(RINGSIM_REQUIRE_REFS)
  message(FATAL_ERROR "libmemcached-dev is needed by the tests (scripts/install-deps.sh --test)")
else()
  message(WARNING "libmemcached-dev not found: unit_alg_ketama and bench_ketama are not built "
                  "(scripts/install-deps.sh --test installs it)")
endif()
