# RCOORD_FUZZ=ON builds the libFuzzer targets of tests/fuzz (clang only). Everything is built
# with AddressSanitizer and UndefinedBehaviorSanitizer, which abort at the first finding so the
# fuzzer keeps the input.
option(RCOORD_FUZZ "Build the libFuzzer targets (needs clang)" OFF)
if(RCOORD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RCOORD_FUZZ needs clang: configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # -O1: what libFuzzer's documentation suggests, and quicker to build than -O2. Line tables
  # are all the sanitizers' reports need (file:line in each frame); full debug info of the
  # CLI's templates only made the build slower and its objects larger (lock_command.o: 6.2 MB
  # against 3.7 MB).
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -gline-tables-only -O1)
  add_link_options(-fsanitize=address,undefined)
  # The coverage that guides the fuzzer, only where a fuzz target's input can go: the fuzz
  # targets link rcoord_core and nothing else (tests/fuzz/CMakeLists.txt). Instrumenting the
  # CLI and the tests too cost build time and guided no fuzzer.
  set(RCOORD_FUZZ_COVERAGE -fsanitize=fuzzer-no-link)
endif()
