# The textbook placement cores: jump (with MementoHash for removals),
# rendezvous, multiprobe, and Cassandra's Murmur3 token ring.

foreach(t jump memento rendezvous multiprobe cassandra)
  add_executable(test_alg_${t} ${CMAKE_SOURCE_DIR}/tests/test_alg_${t}.c)
  target_link_libraries(test_alg_${t} PRIVATE ringcore PkgConfig::CMOCKA)
  add_test(NAME unit_alg_${t} COMMAND test_alg_${t})
endforeach()

# Tests against an implementation this project did not write.
foreach(t rendezvous multiprobe cassandra)
  add_executable(${t}_tool ${CMAKE_SOURCE_DIR}/tests/ref/${t}_tool.c)
  target_link_libraries(${t}_tool PRIVATE ringcore)
  add_test(NAME ref_${t} COMMAND /usr/bin/python3
           ${CMAKE_SOURCE_DIR}/tests/ref/${t}_ref.py $<TARGET_FILE:${t}_tool>)
endforeach()

# Cassandra's NetworkTopologyStrategy through the server, against the
# Python driver (as a set, outside its duplicate case) and Cassandra 4.x's
# algorithm read again in Python (in order).
add_test(NAME ref_nts COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/ref/nts_ref.py
         $<TARGET_FILE:ringsim>)
set_tests_properties(ref_nts PROPERTIES TIMEOUT 300 LABELS "server")

# Lookup cost against bare references (not a test: `build/bench_textbook`).
add_executable(bench_textbook ${CMAKE_SOURCE_DIR}/bench/bench_textbook.c)
target_link_libraries(bench_textbook PRIVATE ringcore)
