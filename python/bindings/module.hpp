// Bindings are split by area (python/bindings/<area>.cpp); each file registers a binder function with a
// static AddBinder object and module.cpp runs them all, so adding an area never edits a shared file.
#pragma once
#include <nanobind/nanobind.h>

#include <vector>

namespace collplan::py {

using Binder = void (*)(nanobind::module_&);
std::vector<Binder>& binders();

struct AddBinder {
    explicit AddBinder(Binder b) { binders().push_back(b); }
};

}  // namespace collplan::py
