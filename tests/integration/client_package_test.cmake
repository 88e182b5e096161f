# ctest script: install the "invariant_client" component of BUILD_DIR into a
# fresh prefix, configure and build client_package/ against it with
# find_package(invariant_client), and run the consumer. Any failing step fails
# the test. Variables: BUILD_DIR, SOURCE_DIR (this folder), WORK_DIR, GENERATOR.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
  message(STATUS "ok: ${ARGV}\n${out}")
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --component invariant_client --prefix ${WORK_DIR}/prefix)
if(NOT EXISTS ${WORK_DIR}/prefix/include/client/client.h)
  message(FATAL_ERROR "client/client.h was not installed")
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/client_package -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
file(REMOVE_RECURSE ${WORK_DIR})
