// Fuzz target: the unit parsers (common/units.hpp) behind every size, time and bandwidth option and machine-file
// constant: the whole input goes through parse_size_bytes, parse_time_s, parse_per_byte_s and parse_size_list.
// Properties: errors are collplan::Error only; a size up to 2^53 formatted by format_bytes parses back to itself;
// times and per-byte times are finite and >= 0 and format_time's text parses as a time again; a size list is
// non-empty and at most 10^6 long, and a doubling range is increasing.
#include <cmath>

#include "collplan/common/units.hpp"
#include "fuzz_common.hpp"

using namespace collplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string in = fuzz::text_of(data, size);
    uint64_t bytes = 0;
    if (fuzz::accepted([&] { bytes = parse_size_bytes(in); }) && bytes <= (uint64_t{1} << 53)) {
        const std::string f = format_bytes(static_cast<double>(bytes));
        uint64_t back = 0;
        if (!fuzz::accepted([&] { back = parse_size_bytes(f); })) fuzz::die("parse_size_bytes refused format_bytes:", f);
        FUZZ_CHECK(back == bytes, in + " -> " + f);
    }
    double t = 0;
    if (fuzz::accepted([&] { t = parse_time_s(in); })) {
        FUZZ_CHECK(std::isfinite(t) && t >= 0, in);
        const std::string f = format_time(t);
        if (!fuzz::accepted([&] { (void)parse_time_s(f); })) fuzz::die("parse_time_s refused format_time:", in + " -> " + f);
    }
    double pb = 0;
    if (fuzz::accepted([&] { pb = parse_per_byte_s(in); })) FUZZ_CHECK(std::isfinite(pb) && pb >= 0, in);
    std::vector<uint64_t> list;
    if (fuzz::accepted([&] { list = parse_size_list(in); })) {
        FUZZ_CHECK(!list.empty() && list.size() <= 1000000, in);
        if (in.find("..") != std::string::npos && in.find(',') == std::string::npos && in.find(':') == std::string::npos)
            for (size_t i = 1; i < list.size(); ++i) FUZZ_CHECK(list[i] > list[i - 1], in);
    }
    return 0;
}
