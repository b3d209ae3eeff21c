// Fuzz target: the schedule text reader (from_text, docs/schedule.md) and, on what it accepts, the writers.
// Properties: whatever from_text accepts, to_text writes text that from_text reads back to an equal schedule and
// the same text (the format round-trips exactly); the GOAL export refuses only with collplan::Error.
#include <optional>

#include "collplan/schedule/text.hpp"
#include "fuzz_common.hpp"

using namespace collplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string in = fuzz::text_of(data, size);
    std::optional<Schedule> parsed;
    if (!fuzz::accepted([&] { parsed.emplace(from_text(in)); })) return 0;
    const Schedule& s = *parsed;
    const std::string t1 = to_text(s);
    std::optional<Schedule> again;
    if (!fuzz::accepted([&] { again.emplace(from_text(t1)); }))
        fuzz::die("from_text refused what to_text wrote:", t1);
    FUZZ_CHECK(*again == s, t1);
    FUZZ_CHECK(to_text(*again) == t1, t1);
    fuzz::accepted([&] { (void)to_goal(s, 8.0, 1e-9, 2e-9); });
    return 0;
}
