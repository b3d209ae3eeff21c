// Bindings are split by area (python/bindings/<area>.cpp); each file registers a binder function with a
// static AddBinder object and module.cpp runs them all, so adding an area never edits a shared file.
#pragma once
#include <nanobind/nanobind.h>

#include <cstdint>
#include <vector>

#include "collplan/common/job.hpp"

namespace collplan::py {

using Binder = void (*)(nanobind::module_&);
std::vector<Binder>& binders();

struct AddBinder {
    explicit AddBinder(Binder b) { binders().push_back(b); }
};

// The job of one call from Python: memory limit `max_memory` bytes (0: the default, a quarter of the RAM),
// cancelled by Ctrl-C -- its check takes the GIL, runs Python's signal handlers and, when one raises
// (KeyboardInterrupt), throws that exception through the C++ computation back to the caller.
Job python_job(uint64_t max_memory);

}  // namespace collplan::py
