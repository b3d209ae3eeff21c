// Tests for units.hpp: sizes, times, per-byte times, bandwidths, size lists and formatting.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collplan/common/error.hpp"
#include "collplan/common/units.hpp"

namespace collplan {
namespace {

std::string error_of(void (*fn)(const std::string&), const std::string& text) {
    try {
        fn(text);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(Units, SizeUnits) {
    EXPECT_EQ(parse_size_bytes("16"), 16u);
    EXPECT_EQ(parse_size_bytes("16B"), 16u);
    EXPECT_EQ(parse_size_bytes("0"), 0u);
    EXPECT_EQ(parse_size_bytes("4KiB"), 4u * 1024);
    EXPECT_EQ(parse_size_bytes("3MiB"), 3u * 1024 * 1024);
    EXPECT_EQ(parse_size_bytes("2GiB"), 2ull * 1024 * 1024 * 1024);
    EXPECT_EQ(parse_size_bytes("1KB"), 1000u);
    EXPECT_EQ(parse_size_bytes("1MB"), 1000u * 1000);
    EXPECT_EQ(parse_size_bytes("7GB"), 7ull * 1000 * 1000 * 1000);
    EXPECT_EQ(parse_size_bytes(" 8 KiB "), 8u * 1024);
}

TEST(Units, SizeRejects) {
    for (const char* bad : {"-4KiB", "1.5B", "1.5KiB", "", "   ", "KiB", "4kib", "4 XB", "4KiB4", "abc", "0x10",
                            "+4", "99999999999999999999", "20000000000GiB"}) {
        EXPECT_THROW(parse_size_bytes(bad), Error) << bad;
    }
    std::string msg = error_of(+[](const std::string& t) { (void)parse_size_bytes(t); }, "-4KiB");
    EXPECT_EQ(msg, "size '-4KiB' is invalid (allowed: a non-negative integer with an optional unit B, KB, MB, GB, TB, "
                   "KiB, MiB, GiB, TiB)");
    EXPECT_EQ(parse_size_bytes("2TiB"), uint64_t{2} << 40);
    EXPECT_EQ(parse_size_bytes("3TB"), 3000000000000u);
    EXPECT_THROW(parse_size_bytes("20000000TiB"), Error);  // beyond 2^64
    // a long value is echoed cut, never inside a UTF-8 character (a property test found a message Python could
    // not decode): 36 digits, then euro signs of 3 bytes each -- the cut backs off to the 36 digits
    const std::string euro = "\xE2\x82\xAC", digits(36, '0');
    msg = error_of(+[](const std::string& t) { (void)parse_size_bytes(t); }, digits + euro + euro + euro);
    EXPECT_EQ(msg.rfind("size '" + digits + "...' is invalid", 0), 0u) << msg;
    msg = error_of(+[](const std::string& t) { (void)parse_size_bytes(t); }, std::string(300, '1'));
    EXPECT_EQ(msg.rfind("size '" + std::string(37, '1') + "...' is invalid", 0), 0u) << msg;
}

TEST(Units, Times) {
    EXPECT_DOUBLE_EQ(parse_time_s("1.5us"), 1.5e-6);
    EXPECT_DOUBLE_EQ(parse_time_s("1.5\xC2\xB5s"), 1.5e-6);
    EXPECT_DOUBLE_EQ(parse_time_s("20ns"), 20e-9);
    EXPECT_DOUBLE_EQ(parse_time_s("3ms"), 3e-3);
    EXPECT_DOUBLE_EQ(parse_time_s("2s"), 2.0);
    EXPECT_DOUBLE_EQ(parse_time_s("250ps"), 250e-12);
    EXPECT_DOUBLE_EQ(parse_time_s("0.5s"), 0.5);
    EXPECT_DOUBLE_EQ(parse_time_s(".5ms"), 0.5e-3);
    EXPECT_DOUBLE_EQ(parse_time_s("1e3ns"), 1e-6);
    EXPECT_DOUBLE_EQ(parse_time_s("0s"), 0.0);
    for (const char* bad : {"1.5", "", "us", "-1us", "1.5 minutes", "1..5us", "1.5us2", "nanus", "1e3"}) {
        EXPECT_THROW(parse_time_s(bad), Error) << bad;
    }
    std::string msg = error_of(+[](const std::string& t) { (void)parse_time_s(t); }, "7");
    EXPECT_NE(msg.find("'7'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ns"), std::string::npos) << msg;
}

TEST(Units, PerByte) {
    EXPECT_DOUBLE_EQ(parse_per_byte_s("1ns/B"), 1e-9);
    EXPECT_DOUBLE_EQ(parse_per_byte_s("0.394us/B"), 0.394e-6);
    EXPECT_DOUBLE_EQ(parse_per_byte_s("4GB/s"), 1.0 / 4e9);
    EXPECT_DOUBLE_EQ(parse_per_byte_s("3.2GiB/s"), 1.0 / (3.2 * 1024 * 1024 * 1024));
    EXPECT_DOUBLE_EQ(parse_per_byte_s("40Gbit/s"), 8.0 / 40e9);
    EXPECT_DOUBLE_EQ(parse_per_byte_s("100Mbit/s"), 8.0 / 100e6);
    EXPECT_DOUBLE_EQ(parse_per_byte_s("1B/s"), 1.0);
    for (const char* bad : {"", "4GB", "1ns", "0GB/s", "-4GB/s", "4XB/s", "1/B", "ns/B", "4GB/h", "1.5/s"}) {
        EXPECT_THROW(parse_per_byte_s(bad), Error) << bad;
    }
}

TEST(Units, SizeListDoubling) {
    std::vector<uint64_t> want;
    for (uint64_t v = 16; v <= (1u << 20); v *= 2) want.push_back(v);
    EXPECT_EQ(parse_size_list("16B..1MiB"), want);
    EXPECT_EQ(parse_size_list("3..20"), (std::vector<uint64_t>{3, 6, 12}));
    EXPECT_EQ(parse_size_list("8..8"), (std::vector<uint64_t>{8}));
    EXPECT_EQ(parse_size_list("1..1"), (std::vector<uint64_t>{1}));
    EXPECT_THROW(parse_size_list("0..16"), Error);
    EXPECT_THROW(parse_size_list("1MiB..16B"), Error);
    EXPECT_EQ(parse_size_list("1B..16GiB").back(), 16ull << 30);
}

TEST(Units, SizeListLinear) {
    std::vector<uint64_t> want;
    for (uint64_t v = 1; v <= 400; v += 50) want.push_back(v);
    EXPECT_EQ(parse_size_list("1B..400B:50B"), want);
    EXPECT_EQ(want.back(), 351u);
    EXPECT_EQ(parse_size_list("0..400B:50B"),
              (std::vector<uint64_t>{0, 50, 100, 150, 200, 250, 300, 350, 400}));
    EXPECT_EQ(parse_size_list("1KiB..3KiB:1KiB"), (std::vector<uint64_t>{1024, 2048, 3072}));
    EXPECT_THROW(parse_size_list("0..400:0"), Error);
    EXPECT_THROW(parse_size_list("5..4:1"), Error);
    EXPECT_THROW(parse_size_list("0..1GiB:1"), Error);  // too many entries
}

TEST(Units, SizeListCommaAndSingle) {
    EXPECT_EQ(parse_size_list("8,1KiB,64KiB"), (std::vector<uint64_t>{8, 1024, 65536}));
    EXPECT_EQ(parse_size_list("4KiB"), (std::vector<uint64_t>{4096}));
    EXPECT_EQ(parse_size_list("0"), (std::vector<uint64_t>{0}));
    EXPECT_EQ(parse_size_list("1,4..16"), (std::vector<uint64_t>{1, 4, 8, 16}));
    for (const char* bad : {"", ",", "8,", ",8", "8,,16", "8,x", "..", "1..", "..4", "1..4:", "-1"}) {
        EXPECT_THROW(parse_size_list(bad), Error) << bad;
    }
}

TEST(Units, FormatBytes) {
    EXPECT_EQ(format_bytes(4096), "4KiB");
    EXPECT_EQ(format_bytes(1 << 20), "1MiB");
    EXPECT_EQ(format_bytes(3.0 * (1 << 30)), "3GiB");
    EXPECT_EQ(format_bytes(1000), "1000B");
    EXPECT_EQ(format_bytes(1536), "1536B");
    EXPECT_EQ(format_bytes(0), "0B");
    EXPECT_EQ(format_bytes(16), "16B");
    EXPECT_EQ(format_bytes(1.5), "1.50B");
    // Every formatted whole size parses back to itself.
    for (double b : {1.0, 1000.0, 1024.0, 2048.0, 1048576.0, 5.0 * 1048576, 123456789.0}) {
        EXPECT_EQ(static_cast<double>(parse_size_bytes(format_bytes(b))), b) << b;
    }
}

TEST(Units, FormatTime) {
    EXPECT_EQ(format_time(1.5e-6), "1.50us");
    EXPECT_EQ(format_time(2.0), "2.00s");
    EXPECT_EQ(format_time(12.345e-3), "12.3ms");
    EXPECT_EQ(format_time(123.4e-9), "123ns");
    EXPECT_EQ(format_time(1e-4), "100us");
    EXPECT_EQ(format_time(999.96e-6), "1.00ms");  // rounds into the next unit
    EXPECT_EQ(format_time(0.5e-9), "0.500ns");
    EXPECT_EQ(format_time(0), "0s");
    EXPECT_EQ(format_time(-1.5e-6), "-1.50us");
    // Printed times parse back to within the 3-digit rounding.
    for (double t : {1.234e-6, 5.678e-3, 0.9, 42e-9}) {
        EXPECT_NEAR(parse_time_s(format_time(t)), t, t * 5e-3) << t;
    }
}

}  // namespace
}  // namespace collplan
