// Regression tests for what the fuzz targets (fuzz/, fuzz/README.md) found: one test per crash, named after the
// target, with the crash input inline; each failed (or crashed under make test-sanitize) before its fix. The crash
// files themselves are seeds in fuzz/corpus/<target>/, so `make test-fuzz` replays them as well.
#include <gtest/gtest.h>

#include <string>

#include "collplan/common/error.hpp"
#include "collplan/common/units.hpp"
#include "collplan/model/model.hpp"
#include "collplan/runtime/wisdom.hpp"
#include "collplan/sim/common/params.hpp"

namespace collplan {
namespace {

// units: format_time(1e171) printed into a 64-byte buffer, cut the number off and lost the unit, so the text did
// not parse back as a time (and any time or size above ~1e60 printed wrong).
TEST(FuzzRegressions, ModelSpecWritesSizesInWholeBytes) {
    // spec() wrote flit=8888888888881B as 8.88888888888e+12B, which parse_model refused (fuzz/model_spec.cpp)
    const auto m = parse_model("wormhole:startup=150us,flit=8888888888881B,flit_time=11.5ns,hop_time=0s,duplex=0");
    EXPECT_NE(m->spec().find("flit=8888888888881B"), std::string::npos) << m->spec();
    EXPECT_EQ(parse_model(m->spec())->spec(), m->spec());
}

TEST(FuzzRegressions, UnitsFormatOfHugeValuesKeepsDigitsAndUnit) {
    const double t = parse_time_s("1e171s");
    const std::string f = format_time(t);
    EXPECT_EQ(f.size(), 172u) << f;  // the 171 digits of the double and "s"
    EXPECT_EQ(parse_time_s(f), t) << f;
    const std::string b = format_bytes(1e100);
    EXPECT_EQ(b.size(), 102u) << b;  // 101 digits and "B"
    EXPECT_EQ(b.back(), 'B') << b;
}

// units: a subnormal time ("20e-308 ns" = 2e-316 s) made round_significant compute inf/inf = NaN, and casting
// floor(log10(NaN)) to int is undefined behaviour (UBSan aborts; a plain build printed garbage digits).
TEST(FuzzRegressions, UnitsFormatOfSubnormalTime) {
    const double t = parse_time_s("20e-308 ns");
    ASSERT_GT(t, 0);
    const std::string f = format_time(t);
    EXPECT_EQ(f, "0.000000000000000ns");
    EXPECT_EQ(parse_time_s(f), 0);
    EXPECT_EQ(format_bytes(t), "0.000000000000000B");
}

// units: a subnormal bandwidth (".21e-308B/s" = 2.1e-309 B/s) passed the "> 0 and finite" check, and its inverse,
// the time per byte returned, was infinite.
TEST(FuzzRegressions, UnitsSubnormalBandwidthRefused) {
    EXPECT_THROW(parse_per_byte_s(".21e-308B/s"), Error);
    EXPECT_THROW(parse_per_byte_s("3e-308bit/s"), Error);  // 3.75e-309 B/s
    EXPECT_DOUBLE_EQ(parse_per_byte_s("1e-300B/s"), 1e300);
}

// net_params: a subnormal time per byte (G=0.3e-300ns/B = 3e-310 s/B) was written by spec() as the bandwidth
// "3.33333333333e+300GB/s", which reads back as an infinite bandwidth and was refused: spec() did not parse.
TEST(FuzzRegressions, NetParamsSpecOfSubnormalPerByteTimeParses) {
    const sim::NetParams p = sim::parse_net_params(
        "L=22222222222222222222us,o=1us,G=0.3e-300ns/B,O=41ns/B,eager=642,link_bw=39Gbit/s");
    const std::string spec = p.spec();
    sim::NetParams back;
    ASSERT_NO_THROW(back = sim::parse_net_params(spec)) << spec;
    EXPECT_EQ(back.spec(), spec);
    EXPECT_EQ(back.G_s_per_byte, p.G_s_per_byte) << spec;
    EXPECT_NE(spec.find("O=0.0243902439024GB/s"), std::string::npos) << spec;  // ordinary values stay bandwidths
}

// wisdom: a parameter given as a number beyond 2^63 ("k": 833333333333333333333, or inf, which the reader takes from strtod) was converted
// to long long -- undefined behaviour (UBSan aborts; x86 made it -9223372036854775808). Now a one-line error.
TEST(FuzzRegressions, WisdomParameterNumberOutOfRange) {
    const std::string head = R"({"format": "collplan-wisdom/1", "entries": [{"collective": "allreduce", )"
                             R"("algorithm": "allreduce/recexch", "params": {"k": )";
    for (const char* big : {"833333333333333333333", "-1e300", "inf"}) {
        try {
            (void)parse_wisdom(head + big + "}}]}");
            ADD_FAILURE() << big << " accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("parameter k must be a string or an integer"), std::string::npos) << e.what();
        }
    }
    try {  // 18 digits are read as text, then checked against the parameter's range
        (void)parse_wisdom(head + "-9000000000000000000}}]}");
        ADD_FAILURE() << "k = -9e18 accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("k=-9000000000000000000 out of range"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace collplan
