# ceph: CRUSH (src/alg/alg_ceph.c) and the crush map text (src/io/crushmap.c).

add_executable(test_alg_ceph ${CMAKE_SOURCE_DIR}/tests/test_alg_ceph.c)
target_link_libraries(test_alg_ceph PRIVATE ringcore PkgConfig::CMOCKA)
add_test(NAME unit_alg_ceph COMMAND test_alg_ceph)

# Against Debian's crushtool and osdmaptool (ceph-base, installed by
# scripts/install-deps.sh --test): every mapping of random maps, in order.
add_executable(ceph_tool ${CMAKE_SOURCE_DIR}/tests/ref/ceph_tool.c)
target_link_libraries(ceph_tool PRIVATE ringcore)
if(NOT RINGSIM_SANITIZE)
  add_test(NAME ref_ceph COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/ref/ceph_ref.py
           $<TARGET_FILE:ceph_tool> $<TARGET_FILE:ringsim>)
  set_tests_properties(ref_ceph PROPERTIES LABELS "ref" TIMEOUT 900)
endif()

# Mapping cost against crushtool on the same map and inputs (not a test:
# `make bench-ceph`).
add_executable(bench_ceph ${CMAKE_SOURCE_DIR}/bench/bench_ceph.c)
target_link_libraries(bench_ceph PRIVATE ringcore)
