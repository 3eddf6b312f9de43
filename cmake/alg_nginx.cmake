# nginx: `hash $key consistent` of ngx_http_upstream_hash_module
# (src/alg/alg_nginx.h).  CRC-32 comes from zlib.
pkg_check_modules(NGINX_ZLIB REQUIRED IMPORTED_TARGET zlib)

add_executable(test_alg_nginx tests/test_alg_nginx.c)
target_link_libraries(test_alg_nginx PRIVATE ringcore PkgConfig::CMOCKA)
add_test(NAME unit_alg_nginx COMMAND test_alg_nginx)

# Against the real nginx (Debian's nginx, installed by scripts/install-deps.sh
# --test): the script starts and stops it; exit 77 (skipped) without nginx.
add_executable(nginx_tool tests/ref/nginx_tool.c)
target_link_libraries(nginx_tool PRIVATE ringcore)
add_test(NAME ref_nginx COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/ref/nginx_ref.py
         $<TARGET_FILE:nginx_tool>)
set_tests_properties(ref_nginx PROPERTIES TIMEOUT 120) # exit 77 (no nginx) fails too
