// Tests of the analytic models: spec parsing, errors, canonical specs and the message-time formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "collplan/model/model.hpp"

namespace collplan {
namespace {

std::string error_of(const std::string& spec) {
    try {
        parse_model(spec);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(ModelParse, HockneyValuesAndMessage) {
    auto m = parse_model("hockney:alpha=2us,beta=1GB/s,gamma=0.5ns/B,rho=0.25ns/B,ports=2,duplex=0,barrier=7us");
    EXPECT_EQ(m->kind(), "hockney");
    EXPECT_DOUBLE_EQ(m->startup_s(), 2e-6);
    EXPECT_DOUBLE_EQ(m->per_byte_s(), 1e-9);
    EXPECT_DOUBLE_EQ(m->gamma, 0.5e-9);
    EXPECT_DOUBLE_EQ(m->rho, 0.25e-9);
    EXPECT_EQ(m->ports, 2);
    EXPECT_FALSE(m->duplex);
    EXPECT_DOUBLE_EQ(m->barrier_s(64), 7e-6);
    const MessageTime t = m->message(1000, 5);
    const double expect = 2e-6 + 1000 * 1e-9;
    EXPECT_DOUBLE_EQ(t.send_done, expect);
    EXPECT_DOUBLE_EQ(t.recv_done, expect);
    EXPECT_DOUBLE_EQ(t.send_busy, expect);
    EXPECT_DOUBLE_EQ(t.recv_busy, expect);
    EXPECT_DOUBLE_EQ(m->copy_s(100), 100 * 0.25e-9);
    EXPECT_DOUBLE_EQ(m->reduce_s(100), 100 * 0.5e-9);
    EXPECT_DOUBLE_EQ(m->calc_s(100), 100 * 0.5e-9);
}

TEST(ModelParse, Defaults) {
    auto m = parse_model("hockney:alpha=1us,beta=1ns/B");
    EXPECT_EQ(m->ports, 1);
    EXPECT_TRUE(m->duplex);
    EXPECT_EQ(m->gamma, 0);
    EXPECT_EQ(m->rho, 0);
    EXPECT_LT(m->barrier_fixed_s, 0);
    EXPECT_LT(m->barrier_per_dim_s, 0);
}

TEST(ModelParse, WormholeMessage) {
    auto m = parse_model("wormhole:startup=30us,flit=8B,flit_time=10ns,hop_time=50ns");
    const MessageTime t = m->message(100, 3);  // ceil(100/8) = 13 flits
    const double expect = 30e-6 + 13 * 10e-9 + 3 * 50e-9;
    EXPECT_DOUBLE_EQ(t.recv_done, expect);
    EXPECT_DOUBLE_EQ(t.send_done, expect);
    EXPECT_DOUBLE_EQ(t.send_busy, expect);
    EXPECT_DOUBLE_EQ(m->message(0, 1).recv_done, 30e-6 + 50e-9);
    EXPECT_DOUBLE_EQ(m->startup_s(), 30e-6);
    EXPECT_DOUBLE_EQ(m->per_byte_s(), 10e-9 / 8);
}

TEST(ModelParse, CircuitMessageAndBarrier) {
    auto m = parse_model("circuit:lambda=177.5us,tau=0.394us/B,delta=51.5us,rho=0.54us/B,q=150us");
    const MessageTime t = m->message(64, 4);  // distance independent
    const double expect = 177.5e-6 + 64 * 0.394e-6 + 51.5e-6;
    EXPECT_NEAR(t.recv_done, expect, 1e-15);
    EXPECT_DOUBLE_EQ(t.recv_done, m->message(64, 1).recv_done);
    EXPECT_NEAR(m->rho, 0.54e-6, 1e-18);
    EXPECT_NEAR(m->barrier_s(32), 5 * 150e-6, 1e-15);  // Q(d) = q * d, d = 5
    EXPECT_NEAR(m->barrier_s(33), 6 * 150e-6, 1e-15);  // ceil(log2 33) = 6
    EXPECT_DOUBLE_EQ(m->startup_s(), 177.5e-6);
    EXPECT_NEAR(m->per_byte_s(), 0.394e-6, 1e-18);
}

TEST(ModelParse, LogGPMessage) {
    auto m = parse_model("loggp:L=5us,o=1us,g=2us,G=1ns/B");
    const double L = 5e-6, o = 1e-6, g = 2e-6, G = 1e-9;
    const MessageTime t = m->message(1001, 2);
    EXPECT_DOUBLE_EQ(t.send_done, o + 1000 * G);
    EXPECT_DOUBLE_EQ(t.recv_done, 2 * o + L + 1000 * G);
    EXPECT_DOUBLE_EQ(t.send_busy, g);  // max(g, (m-1)G) = max(2us, 1us)
    EXPECT_DOUBLE_EQ(t.recv_busy, g);
    const MessageTime big = m->message(10001, 2);
    EXPECT_DOUBLE_EQ(big.send_busy, 10000 * G);
    const MessageTime zero = m->message(0, 1);  // (m-1) is taken as 0
    EXPECT_DOUBLE_EQ(zero.send_done, o);
    EXPECT_DOUBLE_EQ(zero.recv_done, 2 * o + L);
    EXPECT_DOUBLE_EQ(m->startup_s(), L + 2 * o);
    EXPECT_DOUBLE_EQ(m->per_byte_s(), G);
}

TEST(ModelParse, LogGPPerByteOverhead) {
    auto m = parse_model("loggp:L=5us,o=1us,g=2us,G=1ns/B,O=2ns/B");
    const MessageTime t = m->message(101, 1);
    EXPECT_DOUBLE_EQ(t.send_done, 1e-6 + 101 * 2e-9 + 100 * 1e-9);
    EXPECT_DOUBLE_EQ(t.recv_done, 2 * (1e-6 + 101 * 2e-9) + 5e-6 + 100 * 1e-9);
}

TEST(ModelParse, DefaultBarrierIsLogRoundsOfZeroByteMessage) {
    auto h = parse_model("hockney:alpha=3us,beta=1ns/B");
    EXPECT_DOUBLE_EQ(h->barrier_s(16), 4 * 3e-6);
    EXPECT_DOUBLE_EQ(h->barrier_s(17), 5 * 3e-6);
    EXPECT_DOUBLE_EQ(h->barrier_s(2), 3e-6);
    EXPECT_EQ(h->barrier_s(1), 0);
    auto l = parse_model("loggp:L=5us,o=1us,g=2us,G=1ns/B");
    EXPECT_DOUBLE_EQ(l->barrier_s(8), 3 * (5e-6 + 2e-6));
    auto p = parse_model("hockney:alpha=3us,beta=1ns/B,barrier_per_dim=10us");
    EXPECT_DOUBLE_EQ(p->barrier_s(8), 3 * 10e-6);
}

TEST(ModelParse, SpaceTolerant) {
    auto m = parse_model(" hockney : alpha = 1us , beta = 2ns/B ");
    EXPECT_DOUBLE_EQ(m->startup_s(), 1e-6);
    EXPECT_DOUBLE_EQ(m->per_byte_s(), 2e-9);
}

TEST(ModelErrors, Messages) {
    EXPECT_EQ(error_of("hockney:alpha=1us"), "model 'hockney:alpha=1us': missing beta (required: alpha, beta)");
    EXPECT_EQ(error_of("foo:a=1"), "model 'foo:a=1': unknown kind 'foo' (allowed: hockney, wormhole, circuit, loggp)");
    EXPECT_EQ(error_of("hockney:alpha=1us,beta=1ns/B,L=3us"),
              "model 'hockney:alpha=1us,beta=1ns/B,L=3us': unknown key 'L' for hockney (allowed: alpha, beta, "
              "gamma, rho, ports, duplex, barrier, barrier_per_dim, host_beta, host_ranks, eager, rndv, reduce_call, copy_call)");
    EXPECT_EQ(error_of("hockney:alpha,beta=1ns/B"),
              "model 'hockney:alpha,beta=1ns/B': expected key=value, got 'alpha'");
    EXPECT_EQ(error_of("hockney:alpha=1us,alpha=2us,beta=1ns/B"),
              "model 'hockney:alpha=1us,alpha=2us,beta=1ns/B': key 'alpha' given twice (allowed: once)");
}

TEST(ModelErrors, BadValuesNameTheKey) {
    for (const char* spec : {"hockney:alpha=1,beta=1ns/B", "hockney:alpha=-1us,beta=1ns/B", "hockney:alpha=1us,beta=3",
                             "hockney:alpha=1us,beta=1ns/B,ports=0", "hockney:alpha=1us,beta=1ns/B,ports=x",
                             "hockney:alpha=1us,beta=1ns/B,ports=129", "hockney:alpha=1us,beta=1ns/B,duplex=2",
                             "wormhole:startup=1us,flit=0B,flit_time=1ns,hop_time=1ns",
                             "wormhole:startup=1us,flit=1.5B,flit_time=1ns,hop_time=1ns"}) {
        const std::string e = error_of(spec);
        EXPECT_EQ(e.rfind("model '" + std::string(spec) + "': bad ", 0), 0u) << e;
        EXPECT_NE(e.find("allowed"), std::string::npos) << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
    EXPECT_NE(error_of("hockney:alpha=1us,beta=1ns/B,ports=0").find("bad ports"), std::string::npos);
}

TEST(ModelErrors, MissingRequiredListsAll) {
    EXPECT_EQ(error_of("loggp:L=1us,o=1us"), "model 'loggp:L=1us,o=1us': missing g (required: L, o, g, G)");
    EXPECT_EQ(error_of("circuit"), "model 'circuit': missing lambda (required: lambda, tau, delta)");
    EXPECT_EQ(error_of("wormhole:startup=1us"),
              "model 'wormhole:startup=1us': missing flit (required: startup, flit, flit_time, hop_time)");
    EXPECT_NE(error_of("circuit:lambda=1us,tau=1ns/B,delta=1us,barrier_per_dim=1us").find("allowed: lambda, tau, "
                                                                                          "delta, gamma, rho, ports, "
                                                                                          "duplex, barrier, q"),
              std::string::npos);
}

TEST(ModelSpec, Canonical) {
    EXPECT_EQ(parse_model("hockney:beta=1ns/B,alpha=1us")->spec(), "hockney:alpha=1us,beta=1ns/B");
    EXPECT_EQ(parse_model("hockney:alpha=0.5ms,beta=1GB/s,ports=1,duplex=1")->spec(), "hockney:alpha=500us,beta=1ns/B");
    EXPECT_EQ(parse_model("circuit:lambda=177.5us,tau=0.394us/B,delta=51.5us,q=150us")->spec(),
              "circuit:lambda=177.5us,tau=394ns/B,delta=51.5us,q=150us");
    EXPECT_EQ(parse_model("hockney:alpha=0s,beta=0ns/B,ports=4,duplex=0")->spec(),
              "hockney:alpha=0s,beta=0s/B,ports=4,duplex=0");
}

TEST(ModelSpec, RoundTrip) {
    for (const char* spec :
         {"hockney:alpha=1.7us,beta=40Gbit/s,gamma=0.3ns/B,rho=0.1ns/B,ports=4,duplex=0,barrier=12us",
          "hockney:alpha=1us,beta=1ns/B,barrier_per_dim=3us", "wormhole:startup=30us,flit=8B,flit_time=12.5ns,"
          "hop_time=40ns,ports=6",
          "circuit:lambda=177.5us,tau=0.394us/B,delta=51.5us,rho=0.54us/B,q=150us,gamma=1ns/B",
          "loggp:L=2.6us,o=1.1us,g=0.9us,G=0.26ns/B,O=0.01ns/B,ports=2", "loggp:L=1s,o=3ps,g=0s,G=7ms/B"}) {
        auto a = parse_model(spec);
        auto b = parse_model(a->spec());
        EXPECT_EQ(a->spec(), b->spec()) << spec;
        EXPECT_EQ(a->kind(), b->kind());
        for (double bytes : {0.0, 1.0, 777.0, 1e6}) {
            const MessageTime x = a->message(bytes, 3), y = b->message(bytes, 3);
            EXPECT_NEAR(x.recv_done, y.recv_done, 1e-12 * x.recv_done);
            EXPECT_NEAR(x.send_busy, y.send_busy, 1e-12 * x.send_busy);
        }
        EXPECT_EQ(a->ports, b->ports);
        EXPECT_EQ(a->duplex, b->duplex);
        EXPECT_NEAR(a->barrier_s(40), b->barrier_s(40), 1e-12 * a->barrier_s(40));
        EXPECT_NEAR(a->gamma, b->gamma, 1e-12 * a->gamma);
        EXPECT_NEAR(a->rho, b->rho, 1e-12 * a->rho);
    }
}

TEST(ModelSpec, ReflectsChangedFields) {
    auto m = parse_model("hockney:alpha=1us,beta=1ns/B");
    m->ports = 3;
    m->duplex = false;
    EXPECT_EQ(m->spec(), "hockney:alpha=1us,beta=1ns/B,ports=3,duplex=0");
    EXPECT_EQ(parse_model(m->spec())->ports, 3);
}

}  // namespace
}  // namespace collplan
