// Ctrl-C for the command line: the backstop behind the cancellation polls (src/collplan/common/job.hpp).
//
// The long loops of the verifier, the estimator and the simulators poll for Ctrl-C and unwind as KeyboardInterrupt.
// Code that does not poll (a generator building a 262,144-rank schedule, the gossip parameter search) would hold
// the GIL for minutes, and Python's own SIGINT handler runs only between bytecodes. So `collplan` (cli.main, and
// nothing else: a library must not take a program's signals) installs this handler:
//   1. it tells Python a SIGINT arrived (PyErr_SetInterruptEx, async-signal-safe), so Python code and the polls
//      raise KeyboardInterrupt as before, and cli.main acknowledges it (interrupt_handled) and exits 130;
//   2. it wakes a watchdog thread (sem_post, async-signal-safe) which, if no acknowledgement came within the grace
//      time, writes "collplan: interrupted" and ends the process with _exit(130).
// Step 2 never cuts a file in half: output files are written from Python (collplan.output.atomic_write), where step
// 1 acts within the grace time, and a C++ computation writes no files.
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "module.hpp"

namespace collplan::py {
namespace {

sem_t wake;                            // posted by the signal handler
std::atomic<bool> acknowledged{false}; // set by cli.main when KeyboardInterrupt reached it

void on_sigint(int) {
    PyErr_SetInterruptEx(SIGINT);
    sem_post(&wake);
}

void install_interrupt_backstop(double grace_s) {
    static bool installed = false;  // once per process; later calls keep the first grace time
    if (installed) return;
    installed = true;
    sem_init(&wake, 0, 0);
    std::thread([grace_s] {
        for (;;) {
            while (sem_wait(&wake) != 0) {}  // EINTR
            std::this_thread::sleep_for(std::chrono::duration<double>(grace_s));
            if (acknowledged.load()) continue;
            static const char msg[] = "collplan: interrupted\n";
            [[maybe_unused]] ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
            _exit(130);
        }
    }).detach();
    struct sigaction sa = {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
}

void bind_interrupt(nanobind::module_& m) {
    using namespace nanobind::literals;
    m.def("install_interrupt_backstop", &install_interrupt_backstop, "grace_s"_a,
          "Ctrl-C: Python's KeyboardInterrupt as before, and _exit(130) after grace_s when nothing handled it");
    m.def("interrupt_handled", [] { acknowledged.store(true); },
          "KeyboardInterrupt reached the command's handler: the backstop stands down");
}

const AddBinder add_interrupt(bind_interrupt);

}  // namespace
}  // namespace collplan::py
