// Fuzz target: analytic model specs ("hockney:alpha=1us,beta=1ns/B", model/model.hpp), the [model] of every
// machine file and the --model option.
// Properties: errors are collplan::Error only; spec() of a parsed model parses again to the same spec()
// (model.cpp promises parse_model(m.spec())->spec() == m.spec()); message times are not NaN.
#include <cmath>

#include "collplan/model/model.hpp"
#include "fuzz_common.hpp"

using namespace collplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string in = fuzz::text_of(data, size);
    std::unique_ptr<Model> m;
    if (!fuzz::accepted([&] { m = parse_model(in); })) return 0;
    const std::string s1 = m->spec();
    std::unique_ptr<Model> m2;
    if (!fuzz::accepted([&] { m2 = parse_model(s1); })) fuzz::die("parse_model refused its own spec():", s1);
    FUZZ_CHECK(m2->spec() == s1, s1 + "\nreparsed: " + m2->spec());
    for (double bytes : {0.0, 1.0, 4096.0}) {
        const MessageTime t = m->message(bytes, 2);
        FUZZ_CHECK(!std::isnan(t.send_done) && !std::isnan(t.recv_done), s1);
    }
    return 0;
}
