#pragma once
// FUZZ_CHECK(cond, msg): an invariant of a harness. A violation prints the message and aborts,
// which libFuzzer reports as a crash and saves the input (crash-<sha1>).
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, msg)                                                            \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "fuzz invariant violated at %s:%d: %s (%s)\n", __FILE__, __LINE__, \
                   msg, #cond);                                                          \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)
