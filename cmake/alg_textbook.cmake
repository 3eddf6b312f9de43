# The textbook placement cores: jump (with MementoHash for removals),
# rendezvous, multiprobe, and Cassandra's Murmur3 token ring.
target_sources(ringcore PRIVATE
  ${CMAKE_SOURCE_DIR}/src/alg_jump.c
  ${CMAKE_SOURCE_DIR}/src/alg_memento.c)

foreach(t jump memento)
  add_executable(test_alg_${t} ${CMAKE_SOURCE_DIR}/tests/test_alg_${t}.c)
  target_link_libraries(test_alg_${t} PRIVATE ringcore PkgConfig::CMOCKA)
  add_test(NAME unit_alg_${t} COMMAND test_alg_${t})
endforeach()
