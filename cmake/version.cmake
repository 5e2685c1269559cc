# Writes the version header (OUT) with the project's version (VERSION) and the commit the source
# tree is at (git in ROOT; "unknown" outside a clone), rewriting it only when that changed, so
# that `ratelab --version` names the commit it was built from without rebuilding on every build.
execute_process(COMMAND git -C "${ROOT}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "#pragma once\n#define RATELAB_VERSION \"${VERSION}\"\n#define RATELAB_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
