// Fuzz target: the wisdom JSON reader (parse_wisdom, runtime/wisdom.hpp), which every MPI program linked with the
// PMPI library runs on the file COLLPLAN_WISDOM names.
// Properties: what parse_wisdom accepts, to_json writes as JSON that parse_wisdom reads back to the same JSON;
// lookup on the result is safe for any problem.
#include "collplan/runtime/wisdom.hpp"
#include "fuzz_common.hpp"

using namespace collplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string in = fuzz::text_of(data, size);
    Wisdom w;
    if (!fuzz::accepted([&] { w = parse_wisdom(in); })) return 0;
    const std::string j1 = to_json(w);
    Wisdom w2;
    if (!fuzz::accepted([&] { w2 = parse_wisdom(j1); })) fuzz::die("parse_wisdom refused what to_json wrote:", j1);
    FUZZ_CHECK(w2.entries.size() == w.entries.size(), j1);
    FUZZ_CHECK(to_json(w2) == j1, j1);
    const uint64_t h = fuzz::hash_of(in);
    for (Collective c : kCollectives) {
        const WisdomEntry* e = w.lookup(c, static_cast<int>(h % 64), h >> 8, "sum");
        if (e) FUZZ_CHECK(e->collective == c, j1);
    }
    return 0;
}
