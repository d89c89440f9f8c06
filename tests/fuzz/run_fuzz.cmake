# Runs one fuzz target for a bounded time: TARGET, SEEDS (the corpus in the source tree), WORK
# (a directory in the build tree), DICT (a dictionary or empty) and SECONDS come from -D.
# libFuzzer adds what it finds to the first corpus directory only, so that one is a fresh copy
# of the seeds under WORK and the source tree is only read. Crash, leak and timeout inputs land
# in WORK/artifacts. The target's TMPDIR is WORK/tmp, which it must leave empty: a target that
# makes a scratch folder removes it (tests/fuzz/scratch.h).
foreach(var TARGET SEEDS WORK SECONDS)
	if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
		message(FATAL_ERROR "run_fuzz.cmake: -D${var}= is missing")
	endif()
endforeach()
if(NOT IS_DIRECTORY "${SEEDS}")
	message(FATAL_ERROR "run_fuzz.cmake: no seed corpus at ${SEEDS}")
endif()

file(REMOVE_RECURSE "${WORK}/corpus" "${WORK}/tmp")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts" "${WORK}/tmp")
set(ENV{TMPDIR} "${WORK}/tmp")
file(GLOB seeds "${SEEDS}/*")
file(COPY ${seeds} DESTINATION "${WORK}/corpus")

set(args -max_total_time=${SECONDS} -timeout=5 -rss_limit_mb=2048
	 -artifact_prefix=${WORK}/artifacts/ -print_final_stats=1)
if(DICT)
	list(APPEND args -dict=${DICT})
endif()
execute_process(COMMAND "${TARGET}" ${args} "${WORK}/corpus" "${SEEDS}"
		WORKING_DIRECTORY "${WORK}"
		RESULT_VARIABLE result)
if(NOT result EQUAL 0)
	file(GLOB found "${WORK}/artifacts/*")
	message(FATAL_ERROR "${TARGET} failed (${result}); inputs that failed: ${found}")
endif()
file(GLOB left "${WORK}/tmp/*")
if(left)
	message(FATAL_ERROR "${TARGET} left files behind in its TMPDIR: ${left}")
endif()
