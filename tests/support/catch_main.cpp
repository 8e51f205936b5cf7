// Catch2's main. With -fsanitize=address, GCC 12 warns "may be used uninitialized" inside <regex> (a
// std::function member of a regex state), which Catch2's implementation pulls in: a false positive in
// libstdc++'s code, not ours, silenced for this file alone.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
