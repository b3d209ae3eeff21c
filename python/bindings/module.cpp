#include "module.hpp"

#include "collplan/common/error.hpp"

namespace collplan::py {
std::vector<Binder>& binders() {
    static std::vector<Binder> b;
    return b;
}
}  // namespace collplan::py

NB_MODULE(_core, m) {
    nanobind::exception<collplan::Error>(m, "CollplanError", PyExc_ValueError);
    for (collplan::py::Binder b : collplan::py::binders()) b(m);
}
