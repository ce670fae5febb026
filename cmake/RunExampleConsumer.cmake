# Installs the gpkv build tree to a scratch prefix, then configures, builds and
# runs examples/consumer against it through find_package(gpkv). Fails on any
# error. Run by the `example_consumer` test:
#   cmake -DGPKV_BINARY_DIR=<build> -DGPKV_SOURCE_DIR=<source> -DSCRATCH=<dir>
#         -P cmake/RunExampleConsumer.cmake
foreach(required GPKV_BINARY_DIR GPKV_SOURCE_DIR SCRATCH)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "RunExampleConsumer: -D${required}=... is required")
  endif()
endforeach()

set(prefix ${SCRATCH}/prefix)
set(consumer_build ${SCRATCH}/build)
file(REMOVE_RECURSE ${SCRATCH})
file(MAKE_DIRECTORY ${SCRATCH})

function(run_step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "RunExampleConsumer: ${name} failed (${result}): ${ARGN}")
  endif()
endfunction()

run_step(install ${CMAKE_COMMAND} --install ${GPKV_BINARY_DIR} --prefix ${prefix})

set(generator_args)
find_program(ninja_program ninja)
if(ninja_program)
  set(generator_args -G Ninja)
endif()
run_step(configure ${CMAKE_COMMAND} -S ${GPKV_SOURCE_DIR}/examples/consumer -B ${consumer_build}
  ${generator_args} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run_step(build ${CMAKE_COMMAND} --build ${consumer_build})

set(consumer ${consumer_build}/gpkv_consumer)
if(NOT EXISTS ${consumer})
  message(FATAL_ERROR "RunExampleConsumer: ${consumer} was not built")
endif()
run_step(run ${consumer})
message(STATUS "RunExampleConsumer: the consumer built against ${prefix} and ran")
