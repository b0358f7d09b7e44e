#pragma once

#include <cstddef>
#include <vector>

#include "protocol.hpp"

namespace taki {

// Your bot's brain: returns the index of one of the legal actions (strategy.cpp).
std::size_t choose(const View& view, const std::vector<Action>& legal);

}  // namespace taki
