#include "module.hpp"

#include "collplan/common/error.hpp"

namespace collplan::py {
std::vector<Binder>& binders() {
    static std::vector<Binder> b;
    return b;
}

Job python_job(uint64_t max_memory) {
    Job j;
    if (max_memory > 0) j.max_memory_bytes = max_memory;
    j.cancel = [] {
        nanobind::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw nanobind::python_error();
    };
    return j;
}
}  // namespace collplan::py

NB_MODULE(_core, m) {
    nanobind::exception<collplan::Error> error(m, "CollplanError", PyExc_ValueError);
    nanobind::exception<collplan::MemoryLimitError>(m, "MemoryLimitError", error);
    for (collplan::py::Binder b : collplan::py::binders()) b(m);
}
