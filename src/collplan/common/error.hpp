// collplan::Error -- the one exception type for bad input and violated preconditions.
// Its message is a single line that names the bad value and what is allowed; the CLI prints it and exits 2.
#pragma once
#include <stdexcept>
#include <string>

namespace collplan {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace collplan
