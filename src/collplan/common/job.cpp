#include "collplan/common/job.hpp"

#include <unistd.h>

#include "collplan/common/error.hpp"
#include "collplan/common/units.hpp"

namespace collplan {

uint64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

uint64_t default_max_memory_bytes() {
    const uint64_t phys = physical_memory_bytes();
    return phys ? phys / 4 : uint64_t{4} << 30;
}

void Job::require_memory(double bytes, const std::string& what) const {
    if (bytes <= static_cast<double>(max_memory_bytes)) return;
    throw MemoryLimitError(what + " needs about " + approx_bytes(bytes) + " (limit " +
                approx_bytes(static_cast<double>(max_memory_bytes)) + ", --max-memory)");
}

const Job& default_job() {
    static const Job j;
    return j;
}

}  // namespace collplan
