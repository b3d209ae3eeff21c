// Shared by the libFuzzer targets in fuzz/: what a target may and may not do with its input.
//
// A reader may refuse input only with collplan::Error (the one exception type the CLI, the bindings and the PMPI
// library turn into a one-line message). Any other exception, a failed property (CHECK) or a sanitizer report is
// a bug: the target aborts and libFuzzer saves the input as crash-<sha1>.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "collplan/common/error.hpp"

namespace collplan::fuzz {

[[noreturn]] inline void die(const char* what, const std::string& detail) {
    std::fprintf(stderr, "collplan fuzz: %s\n%s\n", what, detail.c_str());
    std::abort();
}

// Runs f; collplan::Error means "input refused" (returns false); any other exception aborts.
template <class F>
bool accepted(F&& f) {
    try {
        f();
        return true;
    } catch (const Error&) {
        return false;
    } catch (const std::exception& e) {
        die("an exception other than collplan::Error escaped a reader:", e.what());
    } catch (...) {
        die("a non-std exception escaped a reader", "");
    }
}

inline std::string text_of(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// A stable hash of the input: targets derive secondary choices (nodes, sizes) from it, so inputs stay plain text.
inline uint64_t hash_of(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

}  // namespace collplan::fuzz

#define FUZZ_CHECK(cond, detail)                                                                  \
    do {                                                                                          \
        if (!(cond)) ::collplan::fuzz::die("property failed: " #cond, (detail));                   \
    } while (0)
