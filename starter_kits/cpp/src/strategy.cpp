// Your bot's brain: choose(view, legal) returns the index of one of the legal actions.
//
// The view is what your seat sees (PROTOCOL.md section 7): your hand, every seat's
// hand_sizes, the leading_card, the current color, the phase and the events since your
// last request. legal lists every legal action exactly once (section 6).
//
// The strategy below is simple and works: break every +3 you can, answer +2 chains, play
// before drawing, get rid of the color you hold the most of, keep the wild cards for
// later, and name your longest color with a Change Color. Replace it with yours.
#include "strategy.hpp"

#include <cctype>
#include <map>
#include <string>

namespace taki {
namespace {

// "red:5" gives color "red" and figure "5"; "king" gives an empty color.
std::string color_of(const std::string& card) {
    std::size_t i = card.rfind(':');
    return i == std::string::npos ? "" : card.substr(0, i);
}

std::string figure_of(const std::string& card) {
    std::size_t i = card.rfind(':');
    return i == std::string::npos ? card : card.substr(i + 1);
}

int score(const Action& action, const View& view, const std::map<std::string, int>& colors) {
    if (action.kind == "break") return 100;
    if (action.kind == "play_combo") return 50;
    if (action.kind == "draw") return -100;
    if (action.kind != "play") return 0;  // pass, end_turn, close_run, leave_run_open, ...
    std::string color = color_of(action.card), figure = figure_of(action.card);
    if (view.pending_draw > 0) return figure == "+2" || figure == "+3" ? 60 : 40;
    if (figure == "+3_breaker") return -20;  // in your own turn it makes you draw 3
    if (color.empty()) return view.hand.size() <= 2 ? 30 : 5;  // keep wild cards for the end
    auto held = colors.find(color);
    return 10 + (held == colors.end() ? 0 : held->second) +
           (std::isdigit(static_cast<unsigned char>(figure[0])) ? 1 : 0);
}

}  // namespace

std::size_t choose(const View& view, const std::vector<Action>& legal) {
    std::map<std::string, int> colors;
    for (const std::string& card : view.hand) {
        std::string color = color_of(card);
        if (!color.empty()) ++colors[color];
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < legal.size(); ++i) {
        if (score(legal[i], view, colors) > score(legal[best], view, colors)) best = i;
    }
    if (legal[best].card == "change_color" && !colors.empty()) {
        std::string wanted;
        for (const auto& [color, n] : colors) {
            if (wanted.empty() || n > colors[wanted]) wanted = color;
        }
        for (std::size_t i = 0; i < legal.size(); ++i) {
            if (legal[i].card == "change_color" && legal[i].color == wanted) return i;
        }
    }
    return best;
}

}  // namespace taki
