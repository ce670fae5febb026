# ctest check (tests/CMakeLists.txt): the gpkv tool links neither RocksDB nor
# the benchmark's code, which live in gpkv-bench only. Reads the tool's
# shared-library dependencies (ldd) and its symbols (nm), so a static link is
# caught as well as a dynamic one.
#   cmake -DTOOL=<path of gpkv> -DNM=<nm> -P CheckToolLinks.cmake
foreach(var TOOL NM)
  if(NOT ${var})
    message(FATAL_ERROR "CheckToolLinks: -D${var}= is required")
  endif()
endforeach()

execute_process(COMMAND ldd ${TOOL} OUTPUT_VARIABLE libraries RESULT_VARIABLE ldd_result)
if(NOT ldd_result EQUAL 0)
  message(FATAL_ERROR "ldd ${TOOL} failed (${ldd_result})")
endif()
if(libraries MATCHES "[^\n]*rocksdb[^\n]*")
  message(FATAL_ERROR "${TOOL} links RocksDB: ${CMAKE_MATCH_0}")
endif()

execute_process(COMMAND ${NM} -C ${TOOL} OUTPUT_VARIABLE symbols RESULT_VARIABLE nm_result)
if(NOT nm_result EQUAL 0)
  message(FATAL_ERROR "${NM} -C ${TOOL} failed (${nm_result})")
endif()
string(LENGTH "${symbols}" symbols_length)
if(symbols_length LESS 1000)
  message(FATAL_ERROR "${NM} found almost no symbols in ${TOOL}: cannot check it")
endif()
foreach(pattern "rocksdb::" "gpkv::bench::")
  string(FIND "${symbols}" "${pattern}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${TOOL} holds symbols of ${pattern}")
  endif()
endforeach()
message(STATUS "${TOOL}: no RocksDB, no benchmark code")
