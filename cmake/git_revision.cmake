# Writes generated/attnsim/version.h with the git revision of the source tree at build time (run
# by the attnsim_version target on every build; the header only changes, and dependents only
# rebuild, when the revision or the dirty state changes). "-dirty" marks uncommitted changes to
# tracked files, so a results file never claims a revision its binary was not built from.
# Inputs: SRC (source dir), IN (version.h.in), OUT (header path), VERSION (project version).
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE ATTNSIM_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT ATTNSIM_GIT_REVISION)
  set(ATTNSIM_GIT_REVISION "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD --
                  WORKING_DIRECTORY ${SRC}
                  RESULT_VARIABLE dirty
                  ERROR_QUIET)
  if(dirty EQUAL 1)
    set(ATTNSIM_GIT_REVISION "${ATTNSIM_GIT_REVISION}-dirty")
  endif()
endif()
set(PROJECT_VERSION ${VERSION})
configure_file(${IN} ${OUT} @ONLY)
